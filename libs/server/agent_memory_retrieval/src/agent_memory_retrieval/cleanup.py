"""Apply the retention matrix to the indexes: the one cleanup the pruner service, ``POST
/v1/admin/cleanup`` and ``agent-memory admin cleanup`` all run.

What it removes: index entries only (vector and BM25 documents of events, TOC nodes and grips
beyond retention; the "similar" entry of episodes below the value score). Events, TOC nodes,
grips and episodes themselves stay, so a pruned moment is still reached through the TOC and
``/v1/events``.
Extra steps report beside them: topic pruning (``topic_prune``, index "topics") deletes the
topics whose importance has faded, never their segments.

How it knows what to remove: candidates are read from the system of record, not from the
engines: index document ids are deterministic (``docs.py``), so one query per source serves
pgvector, Qdrant, Tantivy and OpenSearch alike, and a dry run counts exactly the rows that a
run then removes.

Kill -9 safe and idempotent, per page: the entries are deleted from the index first, then
recorded in ``index_pruned`` (one commit). A crash between the two leaves the entries gone and
unrecorded, so the next run deletes them again (a no-op) and records them. The record is what
``admin rebuild-index`` consults (``RetentionGate``) so that a rebuild does not bring them back;
a node changed after it was pruned (a new version, a pin: the indexers index it again) becomes a
candidate again.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from pydantic import BaseModel, Field

from agent_memory_common.db.postgres import load_queries
from agent_memory_retrieval.docs import IndexDoc
from agent_memory_retrieval.ports import IndexUnavailableError, TextIndex, VectorIndex
from agent_memory_retrieval.retention import (
    DEFAULT_POLICY,
    DURABLE_KINDS,
    INDEXES,
    RETAINED_LEVELS,
    EpisodeValueRule,
    RetentionPolicy,
)

QUERIES = load_queries("agent_memory_retrieval", "sql/cleanup.sql")
EXAMPLES = 3
PAGE = 1000
NODE_LEVELS = ("segment", "day", "week", "month", "year")

# --- the report ---------------------------------------------------------------------------------


class Example(BaseModel):
    id: str = Field(description="Index document id (or episode id, or topic id).")
    project_id: str
    ts: datetime = Field(description="The entry's time: what its age is counted from.")
    excerpt: str = Field(description="The first words of its text or title.")


class LevelReport(BaseModel):
    level: str
    keep: str = Field(
        description=(
            "Retention of this cell: the project's when one project was asked for, else the "
            "default (projects may override it)."
        )
    )
    entries: int = Field(description="Entries that would go (dry run) or went.")
    examples: list[Example] = Field(default_factory=list)


class IndexReport(BaseModel):
    index: str = Field(description="'vector', 'bm25', 'episodes' or 'topics'.")
    engine: str = Field(description="The adapter: PgVectorIndex, TantivyIndex, ...")
    status: Literal["ok", "unavailable"] = "ok"
    reason: str | None = None
    entries: int = 0
    seconds: float = 0.0
    levels: list[LevelReport] = Field(default_factory=list)


class CleanupReport(BaseModel):
    dry_run: bool
    tenant: str | None = Field(description="The tenant cleaned; null: every tenant.")
    project_id: str | None
    now: datetime = Field(description="The instant ages were measured at.")
    entries: int = Field(description="All entries that would go / went, every index.")
    seconds: float
    indexes: list[IndexReport]


# --- the scope and the policies ----------------------------------------------------------------


@dataclass(frozen=True)
class CleanupScope:
    tenant: str | None = None  # None: every tenant (the scheduled run)
    project_id: str | None = None


async def load_policies(
    conn: AsyncConnection[Any], tenant: str | None = None
) -> dict[tuple[str, str], RetentionPolicy]:
    """(tenant, project) -> its policy, for the projects that override the defaults."""
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(QUERIES["policies"], {"tenant": tenant})
    return {
        (r["tenant"], r["project_id"]): RetentionPolicy(overrides=dict(r["overrides"]))
        for r in await cur.fetchall()
    }


async def _projects(conn: AsyncConnection[Any], scope: CleanupScope) -> list[tuple[str, str]]:
    cur = await conn.execute(
        QUERIES["projects"], {"tenant": scope.tenant, "project_id": scope.project_id}
    )
    return [(str(r[0]), str(r[1])) for r in await cur.fetchall()]


# --- the run -----------------------------------------------------------------------------------

# An extra step (topic pruning, ``topic_prune.topic_step``, for one) adds its own IndexReport:
# called with the connection, the scope, dry_run and now.
ExtraStep = Callable[[AsyncConnection[Any], CleanupScope, bool, datetime], Awaitable[IndexReport]]


@dataclass
class _Level:
    level: str
    keep: str
    entries: int = 0
    examples: list[Example] = field(default_factory=list)

    def add(self, project_id: str, rows: Sequence[dict[str, Any]]) -> None:
        self.entries += len(rows)
        for row in rows[: max(0, EXAMPLES - len(self.examples))]:
            self.examples.append(
                Example(
                    id=row["doc_id"],
                    project_id=project_id,
                    ts=row["ts"],
                    excerpt=" ".join(str(row["excerpt"] or "").split()),
                )
            )

    def report(self) -> LevelReport:
        return LevelReport(
            level=self.level, keep=self.keep, entries=self.entries, examples=self.examples
        )


def _source(level: str) -> str:
    if level == "event":
        return "event"
    return "grip" if level == "grip" else "node"


async def run_cleanup(
    conn: AsyncConnection[Any],
    *,
    text: TextIndex | None,
    vectors: VectorIndex | None,
    scope: CleanupScope,
    dry_run: bool,
    now: datetime | None = None,
    episodes: EpisodeValueRule | None = None,
    extra_steps: Iterable[ExtraStep] = (),
    page_size: int = PAGE,
) -> CleanupReport:
    """Prune (or, ``dry_run``, count) what the retention matrix no longer keeps.

    ``conn`` must be in autocommit mode: every page is its own commit. An index passed as
    ``None`` is skipped (reported unavailable); an index whose engine is down is reported
    unavailable and nothing is recorded for it, so the next run tries again.
    """
    started = time.monotonic()
    now = now or datetime.now(UTC)
    projects = await _projects(conn, scope)
    policies = await load_policies(conn, scope.tenant)
    indexes: list[IndexReport] = []
    for index_name, index in (("vector", vectors), ("bm25", text)):
        indexes.append(
            await _prune_index(
                conn, index_name, index, projects, policies, scope, dry_run, now, page_size
            )
        )
    if episodes is not None:
        indexes.append(await _prune_episodes(conn, episodes, projects, dry_run, now, page_size))
    for step in extra_steps:
        indexes.append(await step(conn, scope, dry_run, now))
    return CleanupReport(
        dry_run=dry_run,
        tenant=scope.tenant,
        project_id=scope.project_id,
        now=now,
        entries=sum(i.entries for i in indexes),
        seconds=round(time.monotonic() - started, 3),
        indexes=indexes,
    )


async def _prune_index(
    conn: AsyncConnection[Any],
    index_name: str,
    index: TextIndex | VectorIndex | None,
    projects: Sequence[tuple[str, str]],
    policies: dict[tuple[str, str], RetentionPolicy],
    scope: CleanupScope,
    dry_run: bool,
    now: datetime,
    page_size: int,
) -> IndexReport:
    started = time.monotonic()
    report = IndexReport(index=index_name, engine=type(index).__name__ if index else "none")
    if index is None:
        report.status, report.reason = "unavailable", "not configured in this process"
        return report
    asked = policies.get((scope.tenant or "", scope.project_id or ""), DEFAULT_POLICY)
    levels = {lv: _Level(lv, asked.matrix[index_name].get(lv, "forever")) for lv in RETAINED_LEVELS}
    try:
        for tenant, project_id in projects:
            policy = policies.get((tenant, project_id), DEFAULT_POLICY)
            for level in RETAINED_LEVELS:
                cutoff = policy.cutoff(index_name, level, now)
                if cutoff is None:
                    continue
                params = {
                    "tenant": tenant,
                    "project_id": project_id,
                    "index_name": index_name,
                    "level": level,
                    "cutoff": cutoff,
                    "durable_kinds": list(DURABLE_KINDS),
                }
                source = _source(level)
                if dry_run:
                    await _count(conn, source, params, levels[level], page_size)
                    continue
                async for rows in _pages(conn, source, params, page_size):
                    await index.delete([r["doc_id"] for r in rows])
                    await _record(conn, params, rows, "retention")
                    levels[level].add(project_id, rows)
    except IndexUnavailableError as exc:
        report.status, report.reason = "unavailable", str(exc)
    report.levels = [lv.report() for lv in levels.values()]
    report.entries = sum(lv.entries for lv in levels.values())
    report.seconds = round(time.monotonic() - started, 3)
    return report


START = ("-infinity", "")  # (ts, key) before every row


async def _candidates(
    conn: AsyncConnection[Any],
    source: str,
    params: dict[str, Any],
    limit: int,
    after: tuple[Any, str] = START,
) -> list[dict[str, Any]]:
    """The next ``limit`` candidates after ``after`` = (ts, key) of the previous page's last."""
    cur = conn.cursor(row_factory=dict_row)
    paged = {**params, "limit": limit, "after_ts": after[0], "after_key": after[1]}
    await cur.execute(QUERIES[f"{source}_candidates"], paged)
    return list(await cur.fetchall())


async def _pages(
    conn: AsyncConnection[Any], source: str, params: dict[str, Any], limit: int
) -> AsyncIterator[list[dict[str, Any]]]:
    after: tuple[Any, str] = START
    while rows := await _candidates(conn, source, params, limit, after):
        yield rows
        after = (rows[-1]["ts"], rows[-1]["key"])


async def _count(
    conn: AsyncConnection[Any], source: str, params: dict[str, Any], level: _Level, limit: int
) -> None:
    """A dry run: the count, and the first few candidates as examples."""
    cur = await conn.execute(QUERIES[f"{source}_count"], params)
    row = await cur.fetchone()
    found = int(row[0]) if row else 0
    if found:
        examples = await _candidates(conn, source, params, EXAMPLES)
        level.add(params["project_id"], examples)
        level.entries += found - len(examples)


async def _record(
    conn: AsyncConnection[Any], params: dict[str, Any], rows: Sequence[dict[str, Any]], reason: str
) -> None:
    await conn.execute(
        QUERIES["record"],
        {
            **params,
            "reason": reason,
            "doc_ids": [r["doc_id"] for r in rows],
            "ts": [r["ts"] for r in rows],
        },
    )


async def _prune_episodes(
    conn: AsyncConnection[Any],
    rule: EpisodeValueRule,
    projects: Sequence[tuple[str, str]],
    dry_run: bool,
    now: datetime,
    page_size: int,
) -> IndexReport:
    """Finished episodes below the value score stop being matched by "similar"."""
    started = time.monotonic()
    weights = rule.outcome_weights
    level = _Level("episode", f"score >= {rule.min_score:g} or younger than {rule.min_age_days:g}d")
    for tenant, project_id in projects:
        params = {
            "tenant": tenant,
            "project_id": project_id,
            "index_name": "episodes",
            "level": "episode",
            "now": now,
            "cutoff": now - timedelta(days=rule.min_age_days),
            "min_score": rule.min_score,
            "half_life_days": rule.half_life_days,
            "w_success": weights.get("success", 1.0),
            "w_partial": weights.get("partial", 0.7),
            "w_failure": weights.get("failure", 0.5),
        }
        if dry_run:
            rows = await _candidates(conn, "episode", params, 1_000_000)
            level.add(project_id, rows)
            continue
        async for rows in _pages(conn, "episode", params, page_size):
            async with conn.transaction():
                ids = [r["doc_id"] for r in rows]
                await conn.execute(QUERIES["episode_unmatch"], {"tenant": tenant, "ids": ids})
                await _record(conn, params, rows, "value")
            level.add(project_id, rows)
    return IndexReport(
        index="episodes",
        engine="postgres",
        entries=level.entries,
        seconds=round(time.monotonic() - started, 3),
        levels=[level.report()],
    )


# --- what a rebuild may write ------------------------------------------------------------------


class RetentionGate:
    """What ``admin rebuild-index`` may write back: never an entry the pruner removed from that
    index and, with ``beyond_retention``, nothing older than the index keeps for its level and
    project. Load once per rebuild (``load``), ask per page (``allowed``).

    Without ``beyond_retention`` a rebuild gives the index the pipeline built minus what the
    pruner removed; entries that aged out since the last pruner run go at its next run.
    """

    def __init__(
        self,
        policies: dict[tuple[str, str], RetentionPolicy],
        now: datetime,
        *,
        beyond_retention: bool = False,
    ) -> None:
        self._policies = policies
        self._now = now
        self._beyond = beyond_retention

    @classmethod
    async def load(
        cls,
        conn: AsyncConnection[Any],
        now: datetime | None = None,
        *,
        beyond_retention: bool = False,
    ) -> RetentionGate:
        policies = await load_policies(conn)
        return cls(policies, now or datetime.now(UTC), beyond_retention=beyond_retention)

    def policy(self, tenant: str, project_id: str) -> RetentionPolicy:
        return self._policies.get((tenant, project_id), DEFAULT_POLICY)

    async def allowed(
        self, conn: AsyncConnection[Any], docs: Sequence[IndexDoc]
    ) -> dict[str, list[IndexDoc]]:
        """index name -> the documents of ``docs`` that index may hold."""
        pruned: set[tuple[str, str]] = set()
        if docs:
            cur = await conn.execute(
                QUERIES["pruned_among"],
                {"tenants": [d.tenant for d in docs], "doc_ids": [d.id for d in docs]},
            )
            pruned = {(str(r[0]), str(r[1])) for r in await cur.fetchall()}
        out: dict[str, list[IndexDoc]] = {name: [] for name in INDEXES}
        for doc in docs:
            policy = self.policy(doc.tenant, doc.project_id)
            for name in INDEXES:
                if (name, doc.id) in pruned:
                    continue
                if self._beyond and policy.beyond(name, doc.level, doc.ts, self._now, doc.kind):
                    continue
                out[name].append(doc)
        return out
