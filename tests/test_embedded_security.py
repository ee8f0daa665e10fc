"""Issue 55, point 2: the embedded stack of ``agent-memory up`` lets in only who holds its
credentials, and keeps its state for its user alone.

A probe found a nats-server that stored a raw publish to ``mem.events.<tenant>.<project>`` as
that tenant (no gateway, no redaction), a Postgres that let every local connection in as the
superuser, and Tantivy files 0644 in 0755 folders. Each test here runs the real ``up``.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
from psycopg import sql

from agent_memory_common.core.credentials import Credentials, load_credentials
from agent_memory_common.db.postgres import prepare_database
from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.nats_login import nats_login
from tests.test_supervisor import Up, _stored

pytestmark = pytest.mark.slow


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    u = Up(tmp_path / "home")
    u.env["AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER"] = "false"  # nothing here ranks by vector
    yield u
    if u.proc is not None and u.proc.poll() is None:
        u.proc.kill()
        u.proc.wait()
    for child in psutil.process_iter():  # nothing of this test may outlive it
        try:
            if str(u.home) in " ".join(child.cmdline()) or str(u.home) in str(child.environ()):
                child.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue


def _port(up: Up, server: str) -> str:
    return up.env[f"AGENT_MEMORY_EMBEDDED__{server}_PORT"]


def _nats_login(up: Up, user: str = "", password: str = "") -> str:
    return nats_login(int(_port(up, "NATS")), user, password)


def _pg_login(up: Up, user: str, password: str | None, database: str = "agent_memory") -> str:
    login = f"{user}:{password}" if password is not None else user
    dsn = f"postgresql://{login}@127.0.0.1:{_port(up, 'PG')}/{database}"
    try:
        with psycopg.connect(dsn, connect_timeout=5) as conn:
            row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            found = row.fetchone()
    except psycopg.OperationalError as exc:
        return f"refused: {str(exc).strip().splitlines()[-1]}"
    return "superuser" if found and found[0] else "connected"


def _not_private(home: Path) -> list[str]:
    """Folders and files under ``home`` that group or others may use. The home itself may be
    traversed (only) when the stack runs as root: Postgres then runs as a user of its own that
    must reach its data folder."""
    found = []
    mode = stat.S_IMODE(home.stat().st_mode)
    allowed = 0o011 if os.geteuid() == 0 else 0
    if mode & 0o077 & ~allowed:
        found.append(f"{oct(mode)} {home}")
    for path in home.rglob("*"):
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and stat.S_IMODE(mode) & 0o077:
            found.append(f"{oct(stat.S_IMODE(mode))} {path.relative_to(home)}")
    return sorted(found)


def _hba_methods(home: Path) -> set[str]:
    text = (home / "postgres" / "pg_hba.conf").read_text()
    rules = (line.split("#", 1)[0].split() for line in text.splitlines())
    return {rule[-1] for rule in rules if rule}


def _credentials(up: Up) -> Credentials:
    creds = load_credentials(up.home)
    assert creds is not None, "no credentials.json in the home"
    return creds


def _probe(up: Up) -> dict[str, object]:
    """What a local user without the credentials can do, and what mode the state has."""
    creds = _credentials(up) if load_credentials(up.home) else None
    return {
        "nats without credentials": _nats_login(up).split(":")[0],
        "nats with a wrong password": _nats_login(up, "agent-memory", "guess").split(":")[0],
        "postgres superuser without password": _pg_login(up, "postgres", None).split(":")[0],
        "postgres as the services' role without password": _pg_login(
            up, "agent_memory", None
        ).split(":")[0],
        "trust in pg_hba.conf": "trust" in _hba_methods(up.home),
        "nats with the credentials": _nats_login(
            up, creds.nats_user if creds else "", creds.nats_password if creds else ""
        ),
        "postgres with the credentials": _pg_login(
            up, creds.pg_user, creds.pg_password if creds else None
        )
        if creds
        else "no credentials",
        "state open to group or others": _not_private(up.home),
    }


SECURE = {
    "nats without credentials": "refused",
    "nats with a wrong password": "refused",
    "postgres superuser without password": "refused",
    "postgres as the services' role without password": "refused",
    "trust in pg_hba.conf": False,
    "nats with the credentials": "connected",
    "postgres with the credentials": "connected",  # the services' role: no superuser
    "state open to group or others": [],
}


def test_up_admits_only_the_generated_credentials_and_keeps_state_private(up: Up) -> None:
    up.start()
    assert (
        plain_http.post(f"{up.gateway}/v1/events", json=make_event(1), timeout=10).status_code
        == 202
    )
    eventually(lambda: _stored(up.query, "e-000001"), what="event recorded")
    # the bm25-indexer has written Tantivy segment files (the probe found them 0644)
    eventually(lambda: list((up.home / "tantivy").rglob("*.store")), what="a Tantivy segment")
    assert _probe(up) == SECURE
    creds_file = up.home / "credentials.json"
    assert stat.S_IMODE(creds_file.stat().st_mode) == 0o600
    creds = _credentials(up)
    for password in (creds.nats_password, creds.pg_password, creds.pg_superuser_password):
        assert password not in up.output()  # the banner hides them

    # every command finds the credentials through its settings, as the services do
    migrate = subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "migrate"],
        env=up.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    assert up.stop() == 0


# What the moved-over home is checked with: the servers and the services that write an event
# through to Postgres and Tantivy. (The test above runs every service and probes their files.)
NOT_NEEDED = "segmenter,summarizer,embedder,topics,pruner,dashboard"


def test_a_home_from_before_credentials_is_moved_over_with_its_data(up: Up) -> None:
    """A home made by an earlier ``up``: Postgres initialised with ``trust``, every table
    owned by the superuser, logs 0644 in 0755 folders. The next ``up`` generates the
    credentials, sets the passwords, switches pg_hba.conf and hands the database to the
    services' role; the data stays, and the services write to the tables they now own."""
    home = up.home
    (home / "logs").mkdir(parents=True)
    os.chmod(home, 0o755)
    os.chmod(home / "logs", 0o755)
    pg = PostgresServer(
        home / "postgres", int(_port(up, "PG")), home / "logs" / "postgres.log", trust=True
    )
    pg.start(timeout=60)
    try:
        prepare_database(pg.dsn("agent_memory"))
        with psycopg.connect(pg.dsn("agent_memory"), autocommit=True) as conn:
            conn.execute("CREATE TABLE earlier (note text)")
            conn.execute("INSERT INTO earlier VALUES ('kept')")
    finally:
        pg.stop()
    old_log = home / "logs" / "earlier.log"
    old_log.write_text("an earlier start\n")
    old_log.chmod(0o644)
    assert "trust" in _hba_methods(home)

    up.start("--without", NOT_NEEDED)
    assert (
        plain_http.post(f"{up.gateway}/v1/events", json=make_event(2), timeout=10).status_code
        == 202
    )
    eventually(lambda: _stored(up.query, "e-000002"), what="event recorded by the role")
    eventually(lambda: list((home / "tantivy").rglob("*.store")), what="a Tantivy segment")
    creds = _credentials(up)
    role = f"postgresql://{creds.pg_user}:{creds.pg_password}@127.0.0.1:{_port(up, 'PG')}"
    with psycopg.connect(f"{role}/agent_memory") as conn:
        assert conn.execute("SELECT note FROM earlier").fetchall() == [("kept",)]
        owners = conn.execute(
            sql.SQL(
                "SELECT DISTINCT pg_get_userbyid(relowner) FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')"
            )
        ).fetchall()
    assert owners == [(creds.pg_user,)]
    assert _probe(up) == SECURE
    assert up.stop() == 0

    # and the next start, already moved over, changes nothing
    up.start("--without", NOT_NEEDED)
    # the banner can precede the query service's first answer: wait for it, not for the data
    eventually(lambda: _stored(up.query, "e-000002"), timeout=60, what="the event, still stored")
    assert _probe(up) == SECURE
    assert up.stop() == 0


@pytest.mark.parametrize("where", ["home", "tantivy", "logs/gateway.log"])
def test_up_refuses_world_writable_state(up: Up, where: str) -> None:
    path = up.home if where == "home" else up.home / where
    path.parent.mkdir(parents=True, exist_ok=True)
    if where == "logs/gateway.log":
        path.write_text("")
        path.chmod(0o666)
    else:
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o777)
    refused = subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "up"],
        env=up.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0, said
    assert f"{path} is world-writable" in said
    assert not (up.home / "credentials.json").exists()  # refused before anything started
    assert stat.S_IMODE(path.stat().st_mode) & stat.S_IWOTH  # and nothing changed silently
