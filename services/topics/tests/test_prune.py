"""The topics service's own prune (its timer, off by default) runs the pruner's topic step:
on a real Postgres, in the pool's kind of connection (a transaction committed at the end)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from agent_memory_topics.recluster import prune
from agent_memory_topics.settings import Settings
from tests.topics_support import seed_topic, topic_rows


async def test_prune_deletes_the_faded_topic_only(pg_dsn: str) -> None:
    now = datetime.now(UTC)
    seed_topic(pg_dsn, "topic:faded", ended=now - timedelta(days=365))
    seed_topic(pg_dsn, "topic:fresh", ended=now - timedelta(days=1))
    # as old, but alone in its project: valued as of that project's latest activity, it stays
    seed_topic(pg_dsn, "topic:globex", ended=now - timedelta(days=365), tenant="globex")
    segments = topic_rows(pg_dsn)["segments"]
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        assert await prune(conn, Settings().topic_prune_rule()) == 1
    after = topic_rows(pg_dsn)
    assert after["topics"] == [("acme", "topic:fresh"), ("globex", "topic:globex")]
    assert after["segments"] == segments


def test_own_timer_is_off_by_default_and_variables_are_shared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().topic_prune_interval == 0
    monkeypatch.setenv("AGENT_MEMORY_TOPIC_PRUNE_BELOW", "0.3")
    monkeypatch.setenv("AGENT_MEMORY_TOPIC_HALF_LIFE_DAYS", "10")
    rule = Settings().topic_prune_rule()
    assert (rule.below, rule.half_life_days) == (0.3, 10)
