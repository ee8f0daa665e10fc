"""Topic pruning as a cleanup step (index "topics"), on a real migrated Postgres: the dry run
counts and names what the run then deletes; only the topic rows go (membership by cascade), the
segments stay; the scope is respected; pages of any size get everything; each topic is valued
as of its project's latest activity (never later than now), not the wall clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from agent_memory_retrieval.lifecycle.cleanup import (
    CleanupReport,
    CleanupScope,
    IndexReport,
    run_cleanup,
)
from agent_memory_retrieval.lifecycle.topic_prune import (
    TopicPruneRule,
    TopicPruneSettings,
    topic_step,
)
from tests.topics_support import seed_topic, topic_rows

NOW = datetime.now(UTC)
LONG_AGO = NOW - timedelta(days=365)  # 2 x 0.5 x 0.5^(365/30): about 0.0002
LATELY = NOW - timedelta(days=1)  # about 0.98
FADED, FRESH = "topic:faded", "topic:fresh"


@pytest.fixture
async def conn(pg_dsn: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as c:
        yield c


async def _cleanup(
    conn: psycopg.AsyncConnection[Any],
    *,
    dry_run: bool,
    scope: CleanupScope | None = None,
    rule: TopicPruneRule | None = None,
    page_size: int = 1000,
) -> CleanupReport:
    return await run_cleanup(
        conn,
        text=None,
        vectors=None,
        scope=scope or CleanupScope(),
        dry_run=dry_run,
        now=NOW,
        extra_steps=[topic_step(rule or TopicPruneRule(), page_size)],
    )


def _topics(report: CleanupReport) -> IndexReport:
    (index,) = [i for i in report.indexes if i.index == "topics"]
    return index


def _examples(index: IndexReport) -> list[str]:
    return [ex.id for lv in index.levels for ex in lv.examples]


async def test_dry_run_names_the_faded_topic_and_the_run_deletes_only_it(
    pg_dsn: str, conn: psycopg.AsyncConnection[Any]
) -> None:
    faded_nodes = seed_topic(pg_dsn, FADED, ended=LONG_AGO, label="old flamingo work")
    fresh_nodes = seed_topic(pg_dsn, FRESH, ended=LATELY)
    before = topic_rows(pg_dsn)

    dry = await _cleanup(conn, dry_run=True)
    topics = _topics(dry)
    assert (topics.status, topics.engine, topics.entries) == ("ok", "postgres", 1)
    assert dry.entries == 1
    (level,) = topics.levels
    assert level.level == "topic" and level.entries == 1
    (example,) = level.examples
    assert (example.id, example.project_id, example.excerpt) == (FADED, "proj", "old flamingo work")
    assert example.ts == LONG_AGO
    assert topic_rows(pg_dsn) == before  # a dry run deletes nothing

    done = await _cleanup(conn, dry_run=False)
    assert _topics(done).entries == 1 and _examples(_topics(done)) == [FADED]
    after = topic_rows(pg_dsn)
    assert after["topics"] == [("acme", FRESH)]
    # the faded topic's membership went with it (cascade); every segment stays
    assert after["members"] == [("acme", FRESH, n) for n in fresh_nodes]
    assert after["segments"] == before["segments"]
    assert {n for _, n in after["segments"]} >= set(faded_nodes)

    again = await _cleanup(conn, dry_run=True)
    assert _topics(again).entries == 0 and _examples(_topics(again)) == []


async def test_scope_tenant_and_project(pg_dsn: str, conn: psycopg.AsyncConnection[Any]) -> None:
    # each project has lately been worked on: its year-old topic has faded beside that work
    for ten, project in (("acme", "proj"), ("acme", "other"), ("globex", "proj")):
        seed_topic(pg_dsn, f"topic:{ten}-{project}", ended=LONG_AGO, tenant=ten, project_id=project)
        seed_topic(
            pg_dsn, f"topic:{ten}-{project}-now", ended=LATELY, tenant=ten, project_id=project
        )
    anchors = [
        ("acme", "topic:acme-other-now"),
        ("acme", "topic:acme-proj-now"),
        ("globex", "topic:globex-proj-now"),
    ]

    one = await _cleanup(conn, dry_run=True, scope=CleanupScope(tenant="acme", project_id="proj"))
    assert _examples(_topics(one)) == ["topic:acme-proj"] and _topics(one).entries == 1
    tenant = await _cleanup(conn, dry_run=True, scope=CleanupScope(tenant="acme"))
    assert sorted(_examples(_topics(tenant))) == ["topic:acme-other", "topic:acme-proj"]

    await _cleanup(conn, dry_run=False, scope=CleanupScope(tenant="acme", project_id="proj"))
    assert sorted(topic_rows(pg_dsn)["topics"]) == sorted(
        [*anchors, ("acme", "topic:acme-other"), ("globex", "topic:globex-proj")]
    )
    await _cleanup(conn, dry_run=False, scope=CleanupScope(tenant="acme"))
    assert sorted(topic_rows(pg_dsn)["topics"]) == sorted(
        [*anchors, ("globex", "topic:globex-proj")]
    )
    everyone = await _cleanup(conn, dry_run=False)
    assert _examples(_topics(everyone)) == ["topic:globex-proj"]
    assert sorted(topic_rows(pg_dsn)["topics"]) == anchors


async def test_valued_as_of_the_projects_latest_activity(
    pg_dsn: str, conn: psycopg.AsyncConnection[Any]
) -> None:
    """A project nobody worked on for 200 days (history imported late) keeps its topics; one
    a year older than that project's own latest work is pruned; a member ending after ``now``
    (a clock skew) does not move the clock past ``now``."""
    seed_topic(pg_dsn, "topic:old-latest", ended=NOW - timedelta(days=200), project_id="old")
    seed_topic(pg_dsn, "topic:old-earlier", ended=NOW - timedelta(days=230), project_id="old")
    seed_topic(pg_dsn, "topic:old-stale", ended=NOW - timedelta(days=565), project_id="old")
    seed_topic(pg_dsn, FADED, ended=LONG_AGO)
    seed_topic(pg_dsn, FRESH, ended=LATELY)  # as of now + 400 days it would be worth 0.0001
    seed_topic(pg_dsn, "topic:ahead", ended=NOW + timedelta(days=400))

    dry = _topics(await _cleanup(conn, dry_run=True))
    # as of day 200: 2 x 0.5 x 0.5^(30/30) = 0.5 for the earlier one, 0.0002 for the stale one;
    # proj's clock is now (its newest member is ahead of it), so the year-old topic has faded
    assert sorted(_examples(dry)) == [FADED, "topic:old-stale"] and dry.entries == 2
    await _cleanup(conn, dry_run=False)
    assert topic_rows(pg_dsn)["topics"] == [
        ("acme", "topic:ahead"),
        ("acme", FRESH),
        ("acme", "topic:old-earlier"),
        ("acme", "topic:old-latest"),
    ]


async def test_counts_beyond_the_examples_and_pages(
    pg_dsn: str, conn: psycopg.AsyncConnection[Any]
) -> None:
    for i in range(5):
        seed_topic(pg_dsn, f"topic:old-{i}", ended=LONG_AGO - timedelta(days=i), members=1)
    seed_topic(pg_dsn, FRESH, ended=LATELY)

    dry = _topics(await _cleanup(conn, dry_run=True))
    assert dry.entries == 5 and len(_examples(dry)) == 3
    assert _examples(dry) == ["topic:old-4", "topic:old-3", "topic:old-2"]  # oldest first

    done = _topics(await _cleanup(conn, dry_run=False, page_size=2))
    assert done.entries == 5 and len(_examples(done)) == 3
    assert topic_rows(pg_dsn)["topics"] == [("acme", FRESH)]


async def test_threshold_and_half_life(pg_dsn: str, conn: psycopg.AsyncConnection[Any]) -> None:
    seed_topic(pg_dsn, FADED, ended=LONG_AGO)
    seed_topic(pg_dsn, FRESH, ended=LATELY)
    # 0 prunes nothing; a threshold above the fresh topic's importance prunes it too
    assert _topics(await _cleanup(conn, dry_run=True, rule=TopicPruneRule(below=0))).entries == 0
    high = await _cleanup(conn, dry_run=True, rule=TopicPruneRule(below=2.0))
    assert _topics(high).entries == 2
    # with a year-long half-life the old topic is still worth 0.5
    slow = TopicPruneRule(half_life_days=365.0)
    assert _topics(await _cleanup(conn, dry_run=True, rule=slow)).entries == 0


def test_settings_read_the_topics_services_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MEMORY_TOPIC_HALF_LIFE_DAYS", "7")
    monkeypatch.setenv("AGENT_MEMORY_TOPIC_PRUNE_BELOW", "0.2")
    assert TopicPruneSettings().topic_prune_rule() == TopicPruneRule(half_life_days=7, below=0.2)
