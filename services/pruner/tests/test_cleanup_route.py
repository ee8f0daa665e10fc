"""``POST /v1/admin/cleanup`` on a real pruner process and a real Postgres: who may call it, bad
bodies answered with a 422 naming the field, and faded topics pruned and reported (index
"topics") with the topics service's variables."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import psycopg
import pytest

from agent_memory_common.auth.keys import create_key
from agent_memory_common.db.postgres import prepare_database
from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.helpers import eventually
from tests.stack import Stack, make_stack
from tests.topics_support import seed_topic, topic_rows

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
        # the topics service's variables, read alike by the pruner
        AGENT_MEMORY_TOPIC_PRUNE_BELOW="0.1",
        AGENT_MEMORY_TOPIC_HALF_LIFE_DAYS="20",
    )
    try:
        stack.start("pruner")
        yield stack
    finally:
        stack.stop()


def _post(stack: Stack, body: object, token: str | None = ADMIN) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return plain_http.post(
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
    assert [i["index"] for i in report["indexes"]] == ["vector", "bm25", "episodes", "topics"]
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


def test_faded_topics_are_pruned_and_reported(pruner: Stack) -> None:
    now = datetime.now(UTC)
    dsn = pruner.pg_dsn
    seed_topic(dsn, "topic:faded", ended=now - timedelta(days=200), label="flamingo cache")
    seed_topic(dsn, "topic:fresh", ended=now - timedelta(days=1))
    seed_topic(dsn, "topic:faded-other", ended=now - timedelta(days=200), project_id="other")
    seed_topic(dsn, "topic:fresh-other", ended=now - timedelta(days=1), project_id="other")
    # alone in its project: its age is measured from that project's latest activity, 0 days
    seed_topic(dsn, "topic:globex", ended=now - timedelta(days=200), tenant="globex")
    before = topic_rows(dsn)

    dry = _post(pruner, {"dry_run": True, "project_id": "proj"})
    assert dry.status_code == 200, dry.text
    (topics,) = [i for i in dry.json()["indexes"] if i["index"] == "topics"]
    assert (topics["status"], topics["entries"]) == ("ok", 1)
    (level,) = topics["levels"]
    assert level["keep"] == "importance >= 0.1 (half-life 20d)"
    assert [(e["id"], e["excerpt"]) for e in level["examples"]] == [
        ("topic:faded", "flamingo cache")
    ]
    assert dry.json()["entries"] == 1
    assert topic_rows(dsn) == before

    done = _post(pruner, {"dry_run": False, "project_id": "proj"})
    assert done.status_code == 200, done.text
    (topics,) = [i for i in done.json()["indexes"] if i["index"] == "topics"]
    assert topics["entries"] == 1
    after = topic_rows(dsn)
    # acme's other project and the other tenant are out of scope; the segments all stay
    assert after["topics"] == [
        ("acme", "topic:faded-other"),
        ("acme", "topic:fresh"),
        ("acme", "topic:fresh-other"),
        ("globex", "topic:globex"),
    ]
    assert after["segments"] == before["segments"]
    assert not [m for m in after["members"] if m[1] == "topic:faded"]

    # the tenant-wide run (what the schedule does per tenant) takes the other project's too
    everything = _post(pruner, {"dry_run": False})
    assert everything.status_code == 200, everything.text
    assert topic_rows(dsn)["topics"] == [
        ("acme", "topic:fresh"),
        ("acme", "topic:fresh-other"),
        ("globex", "topic:globex"),
    ]


def test_the_schedule_prunes_faded_topics(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    """No topics service running and no request: the pruner's scheduled run (every tenant), with
    the default rule (half-life 30 days, below 0.05). Each topic is valued as of its own
    project's latest activity: globex's project, nobody's work for 200 days (history imported
    late), keeps its topics, all but the one stale beside that project's own latest work."""
    now = datetime.now(UTC)
    seed_topic(pg_dsn, "topic:faded", ended=now - timedelta(days=365))
    seed_topic(pg_dsn, "topic:fresh", ended=now - timedelta(days=1))
    # globex: 2 x 0.5 x 0.5^(10/30) = 0.79 and 1.0 as of day 200; the stale one, a year older
    # than that project's latest work, 2 x 0.5 x 0.5^(365/30) = 0.0002
    seed_topic(pg_dsn, "topic:globex-200d", ended=now - timedelta(days=200), tenant="globex")
    seed_topic(pg_dsn, "topic:globex-210d", ended=now - timedelta(days=210), tenant="globex")
    seed_topic(pg_dsn, "topic:globex-stale", ended=now - timedelta(days=565), tenant="globex")
    stack = make_stack(nats_server, pg_dsn, tmp_path, AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S="0")
    try:
        stack.start("pruner")
        eventually(
            lambda: (
                topic_rows(pg_dsn)["topics"]
                == [
                    ("acme", "topic:fresh"),
                    ("globex", "topic:globex-200d"),
                    ("globex", "topic:globex-210d"),
                ]
            ),
            what="the scheduled run pruned the two stale topics and kept the old project's",
        )
    finally:
        stack.stop()
