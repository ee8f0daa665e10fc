"""Topic pruning: topics whose importance has faded below a threshold leave the topic graph.

The one implementation (SQL in ``sql/topic_prune.sql``) behind two callers: the retention
pruner, which runs it as an extra step of ``cleanup.run_cleanup`` on its schedule and on demand
(``agent-memory admin cleanup`` too) and reports it under index ``"topics"``, dry run included;
and the topics service's own timer, off by default (``AGENT_MEMORY_TOPIC_PRUNE_INTERVAL``), for
a deployment without the pruner.

Importance is the topics service's: the sum over a topic's members of salience x 0.5 ^ (age /
half-life), age counted from each member's end to the project's latest activity (its newest
segment's end, never later than ``now``), the clock the topic listing values by, not the wall
clock: history imported months late lost every topic on the pruner's first run. Only the
``topics`` row goes (with its membership and edges, by cascade); the segments stay in
``topic_segments``, unassigned, and a later re-cluster may group them again. Idempotent: a
pruned topic is no longer a candidate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from pydantic import Field

from agent_memory_common.db.postgres import load_queries
from agent_memory_retrieval.lifecycle.cleanup import (
    EXAMPLES,
    PAGE,
    CleanupScope,
    ExtraStep,
    IndexReport,
    _Level,
)
from agent_memory_retrieval.settings import RetrievalSettings

QUERIES = load_queries("agent_memory_retrieval.lifecycle", "sql/topic_prune.sql")
DEFAULT_HALF_LIFE_DAYS = 30.0
DEFAULT_PRUNE_BELOW = 0.05


@dataclass(frozen=True)
class TopicPruneRule:
    half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    below: float = DEFAULT_PRUNE_BELOW  # 0: nothing is pruned


class TopicPruneSettings(RetrievalSettings):
    """``AGENT_MEMORY_TOPIC_HALF_LIFE_DAYS`` and ``AGENT_MEMORY_TOPIC_PRUNE_BELOW``: one meaning
    each, read alike by the topics service, the pruner and ``agent-memory admin cleanup``."""

    topic_half_life_days: float = Field(
        default=DEFAULT_HALF_LIFE_DAYS,
        gt=0,
        description="Topic importance halves for every this many days of age.",
    )
    topic_prune_below: float = Field(
        default=DEFAULT_PRUNE_BELOW,
        ge=0,
        description="Topics whose importance now is lower are pruned (0: none).",
    )

    def topic_prune_rule(self) -> TopicPruneRule:
        return TopicPruneRule(
            half_life_days=self.topic_half_life_days, below=self.topic_prune_below
        )


async def _select(
    conn: AsyncConnection[Any], params: dict[str, Any], *, limit: int, delete: bool
) -> list[dict[str, Any]]:
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(QUERIES["topic_prune"], {**params, "limit": limit, "delete": delete})
    return list(await cur.fetchall())


async def prune_topics(
    conn: AsyncConnection[Any],
    rule: TopicPruneRule,
    scope: CleanupScope,
    *,
    dry_run: bool,
    now: datetime,
    page_size: int = PAGE,
) -> IndexReport:
    """Delete (or, ``dry_run``, count) the topics of ``scope`` whose importance as of
    least(``now``, their project's latest activity) is below ``rule.below``. A page is one
    statement (select and delete together), so with an autocommit connection every page is its
    own commit."""
    started = time.monotonic()
    level = _Level("topic", f"importance >= {rule.below:g} (half-life {rule.half_life_days:g}d)")
    params = {
        "tenant": scope.tenant,
        "project_id": scope.project_id,
        "now": now,
        "half_life_days": rule.half_life_days,
        "below": rule.below,
    }
    if dry_run:
        rows = await _select(conn, params, limit=EXAMPLES, delete=False)
        _add(level, rows)
        if rows:
            level.entries += int(rows[0]["total"]) - len(rows)
    else:
        while rows := await _select(conn, params, limit=page_size, delete=True):
            _add(level, rows)
            if int(rows[0]["total"]) <= page_size:
                break
    return IndexReport(
        index="topics",
        engine="postgres",
        entries=level.entries,
        seconds=round(time.monotonic() - started, 3),
        levels=[level.report()],
    )


def _add(level: _Level, rows: list[dict[str, Any]]) -> None:
    """Rows of several projects: each example carries its own project."""
    for row in rows:
        level.add(str(row["project_id"]), [row])


def topic_step(rule: TopicPruneRule, page_size: int = PAGE) -> ExtraStep:
    """The pruner's extra step (``run_cleanup(extra_steps=...)``): index ``"topics"``."""

    async def step(
        conn: AsyncConnection[Any], scope: CleanupScope, dry_run: bool, now: datetime
    ) -> IndexReport:
        return await prune_topics(conn, rule, scope, dry_run=dry_run, now=now, page_size=page_size)

    return step
