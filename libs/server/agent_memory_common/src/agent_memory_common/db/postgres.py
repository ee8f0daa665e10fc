"""Postgres plumbing: database creation, versioned migrations, connection pools.

SQL lives in numbered files under ``migrations/``; each is applied once, in order, inside a
transaction that also records it, under an advisory lock so that replicas starting together do
not race.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import re
from collections.abc import AsyncIterator
from typing import Any

import psycopg
from psycopg import AsyncConnection, sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.core.logs import get_logger

_MIGRATION_LOCK = 0x616D656D  # "amem": one advisory lock id for the whole schema
_MIGRATION_FILE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")

log = get_logger(__name__)


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) for every migration shipped with this package, in order."""
    folder = importlib.resources.files("agent_memory_common.db") / "migrations"
    found = []
    for entry in folder.iterdir():
        match = _MIGRATION_FILE.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)


def ensure_database(dsn: str) -> None:
    """Create the database named in ``dsn`` if it does not exist (embedded and test stacks)."""
    params = conninfo_to_dict(dsn)
    dbname = str(params.get("dbname") or "postgres")
    admin = make_conninfo(dsn, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if exists:
            return
        # another process may create it between our check and our create
        with contextlib.suppress(psycopg.errors.DuplicateDatabase):
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))


def apply_migrations(dsn: str) -> list[str]:
    """Apply pending migrations; return the names applied by this call."""
    applied: list[str] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version integer PRIMARY KEY, name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
            for version, name, text in migrations():
                if version in done:
                    continue
                with conn.transaction():
                    conn.execute(text.encode())
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                        (version, name),
                    )
                applied.append(name)
                log.info("db.migration_applied", migration=name)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
    return applied


def prepare_database(dsn: str) -> list[str]:
    """Create the database if needed and migrate it: what every service does at start."""
    ensure_database(dsn)
    return apply_migrations(dsn)


def make_pool(dsn: str, *, min_size: int = 1, max_size: int = 4) -> AsyncConnectionPool:
    """An unopened pool; open it in the service's lifespan, never at import."""
    return AsyncConnectionPool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        open=False,
        kwargs={"autocommit": False},
        reconnect_timeout=0,  # keep retrying forever: Postgres may come back
    )


@contextlib.asynccontextmanager
async def reading(pool: AsyncConnectionPool) -> AsyncIterator[AsyncConnection[Any]]:
    """A connection of ``pool`` for reads that need no transaction: each statement commits on
    its own. A transaction costs two more round trips to Postgres (psycopg sends ``BEGIN``
    before the first statement and ``COMMIT`` when the pool takes the connection back): on a
    read of one statement, three round trips become one. A search makes several such reads.

    The connection goes back to the pool as it came (``autocommit`` off), or closed, which
    the pool replaces: a later user never gets one that commits each statement unasked."""
    async with pool.connection() as conn:
        await conn.set_autocommit(True)
        try:
            yield conn
        finally:
            try:
                await conn.set_autocommit(False)
            except psycopg.Error:  # cut short mid-statement (a timeout): not reusable as is
                await conn.close()


def load_queries(package: str, filename: str = "sql/queries.sql") -> dict[str, str]:
    """Named queries from a ``.sql`` file: each starts with a ``-- name: <name>`` line."""
    text = (importlib.resources.files(package) / filename).read_text("utf-8")
    parts = re.split(r"^-- name: (\w+)\s*$", text, flags=re.MULTILINE)
    # comment lines right after a name header document the query; they are harmless to send
    return {name: body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}
