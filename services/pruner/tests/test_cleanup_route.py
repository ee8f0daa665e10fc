"""``POST /v1/admin/cleanup`` on a real pruner process and a real Postgres: who may call it, and
bad bodies answered with a 422 naming the field."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from agent_memory_common.db import prepare_database
from agent_memory_common.keys import create_key
from agent_memory_embedded.servers import NatsServer
from tests.stack import Stack, make_stack

ADMIN = "admin-token-1"  # a bootstrap token: an admin of tenant acme


def writer_key(dsn: str) -> str:
    """An API key of tenant acme with the writer role: below admin."""

    async def make() -> str:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            return str((await create_key(conn, tenant="acme", role="writer"))["secret"])

    prepare_database(dsn)
    return asyncio.run(make())


@pytest.fixture
def pruner(nats_server: NatsServer, pg_dsn: str, tmp_path: Path) -> Iterator[Stack]:
    stack = make_stack(
        nats_server,
        pg_dsn,
        tmp_path,
        AGENT_MEMORY_TOKENS=f"{ADMIN}:acme",
        AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S="3600",
    )
    try:
        stack.start("pruner")
        yield stack
    finally:
        stack.stop()


def _post(stack: Stack, body: object, token: str | None = ADMIN) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx.post(
        f"{stack.pruner_url}/v1/admin/cleanup", json=body, headers=headers, timeout=30
    )


def test_admin_only_when_auth_is_on(pruner: Stack) -> None:
    assert _post(pruner, {"dry_run": True}, token=None).status_code == 401
    assert _post(pruner, {"dry_run": True}, token="nobody").status_code == 401
    refused = _post(pruner, {"dry_run": True}, token=writer_key(pruner.pg_dsn))
    assert refused.status_code == 403, refused.text
    ok = _post(pruner, {"dry_run": True})
    assert ok.status_code == 200, ok.text
    report = ok.json()
    assert report["dry_run"] is True and report["tenant"] == "acme"
    assert [i["index"] for i in report["indexes"]] == ["vector", "bm25", "episodes"]
    assert report["entries"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"dry_run": "sometimes"}, "dry_run"),
        ({"dry_run": True, "project": "p"}, "project"),
        ({"dry_run": True, "project_id": ""}, "project_id"),
        ([1, 2], None),
    ],
)
def test_bad_bodies_name_the_field(pruner: Stack, body: object, field: str | None) -> None:
    r = _post(pruner, body)
    assert r.status_code == 422, r.text
    if field is not None:
        assert r.json()["field"] == field
