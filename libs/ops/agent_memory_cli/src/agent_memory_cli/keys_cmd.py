"""``agent-memory admin keys create|list|revoke``: API keys, straight in Postgres.

The operator's way in, before any key exists (the HTTP routes ``/v1/keys`` need an admin key):
the same rows as the routes, through ``agent_memory_common.auth.keys``. The secret is printed once.
A revocation reaches every service within ``AGENT_MEMORY_KEY_CACHE_S`` (default 5 s).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from agent_memory_common.auth.roles import ROLES

if TYPE_CHECKING:
    from agent_memory_cli.settings import Settings

# psycopg and the key store are imported by the commands: every command builds these parsers.


def register(admin_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keys = admin_sub.add_parser("keys", help="issue, list and revoke API keys (docs/team.md)")
    sub = keys.add_subparsers(dest="keys_command", required=True)
    create = sub.add_parser("create", help="issue a key; its secret is printed once")
    create.add_argument("--tenant", required=True)
    create.add_argument("--role", required=True, choices=ROLES)
    create.add_argument("--projects", help="comma separated (default: every project)")
    create.add_argument("--agent", help="the key writes only as this agent_id")
    create.add_argument("--user", help="the key writes only as this user_id")
    create.add_argument("--label", help="a note for people, e.g. whose laptop")
    create.add_argument("--expires", help="lifetime, e.g. 90d, 12h (default: never)")
    create.set_defaults(run=_cmd_create)
    listing = sub.add_parser("list", help="keys and their bounds, never their secrets")
    listing.add_argument("--tenant", help="default: every tenant")
    listing.add_argument("--all", action="store_true", help="revoked keys too")
    listing.set_defaults(run=_cmd_list)
    revoke = sub.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("key_id")
    revoke.add_argument("--tenant", help="only if the key belongs to this tenant")
    revoke.set_defaults(run=_cmd_revoke)


async def _with_conn(dsn: str, work: Any) -> Any:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        result = await work(conn)
        await conn.commit()
        return result


def _run(settings: Settings, work: Any) -> Any:
    import psycopg

    from agent_memory_common.db.postgres import prepare_database

    try:
        prepare_database(settings.pg_dsn)
        return asyncio.run(_with_conn(settings.pg_dsn, work))
    except psycopg.OperationalError as exc:
        print(f"agent-memory: Postgres not reachable: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _describe(row: dict[str, Any]) -> str:
    bounds = [
        f"projects={','.join(row['projects'])}" if row["projects"] else "projects=*",
        f"agent={row['agent_id']}" if row["agent_id"] else "",
        f"user={row['user_id']}" if row["user_id"] else "",
        f"expires={row['expires_at'].isoformat()}" if row["expires_at"] else "",
        f"revoked={row['revoked_at'].isoformat()}" if row["revoked_at"] else "",
        f"label={row['label']!r}" if row["label"] else "",
    ]
    head = f"{row['key_id']}  {row['tenant']:<12} {row['role']:<7}"
    return head + " " + " ".join(b for b in bounds if b)


def _cmd_create(settings: Settings, args: argparse.Namespace) -> int:
    from agent_memory_common.auth.keys import create_key, parse_expiry
    from agent_memory_common.web.http import ApiError

    try:
        expires_at = parse_expiry(args.expires)
    except ApiError as exc:
        print(f"agent-memory: --expires: {exc.message}", file=sys.stderr)
        return 2
    projects = [p.strip() for p in (args.projects or "").split(",") if p.strip()] or None
    row = _run(
        settings,
        lambda conn: create_key(
            conn,
            tenant=args.tenant,
            role=args.role,
            projects=projects,
            agent_id=args.agent,
            user_id=args.user,
            label=args.label,
            expires_at=expires_at,
        ),
    )
    print(_describe(row))
    print(f"secret (shown once, store it now): {row['secret']}")
    return 0


def _cmd_list(settings: Settings, args: argparse.Namespace) -> int:
    from agent_memory_common.auth.keys import list_keys

    rows = _run(settings, lambda conn: list_keys(conn, args.tenant, include_revoked=args.all))
    for row in rows:
        print(_describe(row))
    return 0


def _cmd_revoke(settings: Settings, args: argparse.Namespace) -> int:
    from agent_memory_common.auth.keys import revoke_key

    row = _run(settings, lambda conn: revoke_key(conn, args.key_id, args.tenant))
    if row is None:
        print(f"agent-memory: no key {args.key_id!r}", file=sys.stderr)
        return 1
    print(f"revoked {_describe(row)}")
    return 0
