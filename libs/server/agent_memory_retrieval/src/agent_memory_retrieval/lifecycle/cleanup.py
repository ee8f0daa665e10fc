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

The rule every writer of an index keeps (issue 58): once the pruner has pruned a project's index
under the project's current matrix, that index holds what the matrix keeps and nothing else.
The pruner removes what the matrix prunes; the live indexers (``feed.IndexFeed``) and ``admin
rebuild-index`` ask ``RetentionGate`` at write time and write none of it (an entry they would
have written is deleted instead), whether it aged out, was imported late, or was pruned before
an indexer reached it. Until a project's first pruning under its current matrix (a new project,
retention just changed), the writers write everything and the next run removes what it prunes:
so a deployment that never prunes (a benchmark replaying old conversations) indexes it all.

Kill -9 safe and idempotent, per page: under the tenant's index lock (``hold_index_writes``,
exclusive), the entries are deleted from the index first, then recorded in ``index_pruned`` (one
commit). A crash between the two leaves the entries gone and unrecorded, so the next run deletes
them again (a no-op) and records them. The lock is what makes a record true: an indexer batch
holds it shared from before it reads what to write until its commit, so a batch that decided
before a page writes before the page deletes, and one that comes after sees the record (the
project is pruned) and keeps to the matrix. A record is trusted (its entry not a candidate
again) while it is newer than the project's policy and, for a node, the node's last change;
an older one is deleted again, since under the earlier matrix the entry may have been written
back.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from pydantic import BaseModel, Field

from agent_memory_common.db.locks import hold_xact_locks
from agent_memory_common.db.postgres import load_queries
from agent_memory_retrieval.docs import DocChanges, IndexDoc, as_utc
from agent_memory_retrieval.lifecycle.retention import (
    DEFAULT_POLICY,
    DURABLE_KINDS,
    INDEXES,
    RETAINED_LEVELS,
    EpisodeValueRule,
    RetentionPolicy,
)
from agent_memory_retrieval.packed import vector_bytes
from agent_memory_retrieval.ports import IndexUnavailableError, TextIndex, VectorIndex

QUERIES = load_queries("agent_memory_retrieval.lifecycle", "sql/cleanup.sql")
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


async def _policy(
    conn: AsyncConnection[Any], tenant: str, project_id: str
) -> tuple[RetentionPolicy, datetime | None]:
    """One project's policy as it is now, and when it was set (``None``: the defaults)."""
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(QUERIES["policy"], {"tenant": tenant, "project_id": project_id})
    row = await cur.fetchone()
    if row is None:
        return DEFAULT_POLICY, None
    return RetentionPolicy(overrides=dict(row["overrides"])), row["updated_at"]


async def db_clock(conn: AsyncConnection[Any]) -> datetime:
    """Now, by Postgres' clock: the pruner and every writer measure ages by the same clock, so
    that a host whose clock runs ahead cannot prune what the writers still write."""
    cur = await conn.execute(QUERIES["clock"])
    row = await cur.fetchone()
    assert row is not None
    return as_utc(row[0])


async def hold_index_writes(
    conn: AsyncConnection[Any], tenants: Iterable[str], *, exclusive: bool
) -> None:
    """Serialise index writes with erasures and pruning, per tenant, until the transaction ends.

    A writer's batch takes the lock shared before it reads what to write and keeps it until its
    commit, after its index write; an erasure, and each page of the pruner, take it exclusively.
    So they wait for the batches already under way (and then delete what those wrote), and a
    batch that starts after them sees their tombstones and pruning records: neither an erased
    event nor a pruned entry can be indexed again behind their back.
    """
    # the key is unchanged from when each tenant was locked in its own statement
    names = (f"index-erasure:{tenant}" for tenant in set(tenants))
    await hold_xact_locks(conn, names, shared=not exclusive)


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
    now = now or await db_clock(conn)
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
            policy, set_at = await _policy(conn, tenant, project_id)
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
                    "policy_set_at": set_at or NEVER,
                }
                source = _source(level)
                if dry_run:
                    await _count(conn, source, params, levels[level], page_size)
                    continue
                async for rows in _pages(conn, source, params, page_size):
                    went = await _prune_page(conn, index, params, rows, now)
                    levels[level].add(project_id, went)
    except IndexUnavailableError as exc:
        report.status, report.reason = "unavailable", str(exc)
    report.levels = [lv.report() for lv in levels.values()]
    report.entries = sum(lv.entries for lv in levels.values())
    report.seconds = round(time.monotonic() - started, 3)
    return report


START = ("-infinity", "")  # (ts, key) before every row
NEVER = datetime.min.replace(tzinfo=UTC)  # when the defaults were set: before every record


async def _prune_page(
    conn: AsyncConnection[Any],
    index: TextIndex | VectorIndex,
    params: dict[str, Any],
    rows: list[dict[str, Any]],
    now: datetime,
) -> list[dict[str, Any]]:
    """Delete one page of candidates from ``index`` and record them, in one commit under the
    tenant's index lock (exclusive: see the module docstring); returns what went.

    The project's policy is read again under the lock: a retention changed since the run began
    decides (an extended one keeps what the run's reading would have pruned).
    """
    async with conn.transaction():
        await hold_index_writes(conn, {params["tenant"]}, exclusive=True)
        policy, _ = await _policy(conn, params["tenant"], params["project_id"])
        cutoff = policy.cutoff(params["index_name"], params["level"], now)
        went = [r for r in rows if cutoff is not None and r["ts"] < cutoff]
        if went:
            doc_ids = [r["doc_id"] for r in went]
            kept: dict[str, list[float]] = {}
            if params["level"] == "event" and params["index_name"] == "vector":
                # read before the delete: the descent's cosine of a pruned event
                kept = await cast("VectorIndex", index).vectors(doc_ids)
            await index.delete(doc_ids)
            await _record(conn, params, went, "retention", kept)
    return went


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
    conn: AsyncConnection[Any],
    params: dict[str, Any],
    rows: Sequence[dict[str, Any]],
    reason: str,
    vectors: Mapping[str, Sequence[float]] | None = None,
) -> None:
    """The pruning records of ``rows``; for events, their words too (``record_words``) and
    the ``vectors`` the vector index held (``record_vectors``), in the same transaction: the
    descent finds and ranks a pruned event by them."""
    doc_ids = [r["doc_id"] for r in rows]
    await conn.execute(
        QUERIES["record"],
        {**params, "reason": reason, "doc_ids": doc_ids, "ts": [r["ts"] for r in rows]},
    )
    if params.get("level") == "event":
        prefix = f"event:{params['tenant']}:"
        event_ids = [d[len(prefix) :] for d in doc_ids if d.startswith(prefix)]
        await conn.execute(
            QUERIES["record_words"], {"tenant": params["tenant"], "event_ids": event_ids}
        )
        if vectors:
            held = [d for d in doc_ids if d in vectors and d.startswith(prefix)]
            await conn.execute(
                QUERIES["record_vectors"],
                {
                    "tenant": params["tenant"],
                    "event_ids": [d[len(prefix) :] for d in held],
                    "vectors": [vector_bytes(vectors[d]) for d in held],
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


# --- what a writer may write -------------------------------------------------------------------


class RetentionGate:
    """What a writer may put in an index: the live indexers (``feed.IndexFeed``, per batch) and
    ``admin rebuild-index`` (per page) ask it before they write.

    An index of a project the pruner has pruned under the project's current policy (a trusted
    record in ``index_pruned``: query ``enforced``) gets only what the matrix keeps; with
    ``beyond_retention`` (``rebuild-index --retention``) every index does. Otherwise an entry is
    written whatever its age, and the next pruner run removes what the matrix prunes. Ages are
    measured by Postgres' clock at each ask, unless ``now`` is given.
    """

    def __init__(
        self,
        policies: dict[tuple[str, str], RetentionPolicy],
        now: datetime | None = None,
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
        tenants: Iterable[str] | None = None,
    ) -> RetentionGate:
        """The policies of every tenant, or of ``tenants`` only (an indexer's batch)."""
        policies: dict[tuple[str, str], RetentionPolicy] = {}
        for tenant in [None] if tenants is None else sorted(set(tenants)):
            policies.update(await load_policies(conn, tenant))
        return cls(policies, now, beyond_retention=beyond_retention)

    def policy(self, tenant: str, project_id: str) -> RetentionPolicy:
        return self._policies.get((tenant, project_id), DEFAULT_POLICY)

    async def allowed(
        self, conn: AsyncConnection[Any], docs: Sequence[IndexDoc]
    ) -> dict[str, list[IndexDoc]]:
        """index name -> the documents of ``docs`` that index may hold."""
        out: dict[str, list[IndexDoc]] = {name: [] for name in INDEXES}
        if not docs:
            return out
        now = self._now or await db_clock(conn)
        enforced: set[tuple[str, str, str]] = set()
        if not self._beyond:
            pairs = sorted({(d.tenant, d.project_id) for d in docs})
            cur = await conn.execute(
                QUERIES["enforced"],
                {"tenants": [t for t, _ in pairs], "project_ids": [p for _, p in pairs]},
            )
            enforced = {(str(r[0]), str(r[1]), str(r[2])) for r in await cur.fetchall()}
        for doc in docs:
            policy = self.policy(doc.tenant, doc.project_id)
            for name in INDEXES:
                kept = self._beyond or (doc.tenant, doc.project_id, name) in enforced
                if kept and policy.beyond(name, doc.level, doc.ts, now, doc.kind):
                    continue
                out[name].append(doc)
        return out

    async def changes(
        self, conn: AsyncConnection[Any], index_name: str, changes: DocChanges
    ) -> DocChanges:
        """``changes`` as ``index_name`` may write them: an upsert it may not hold becomes a
        delete (an earlier copy, written before the project was pruned, goes too)."""
        if not changes.upserts:
            return changes
        allowed = {d.id for d in (await self.allowed(conn, changes.upserts))[index_name]}
        upserts = [d for d in changes.upserts if d.id in allowed]
        refused = [d.id for d in changes.upserts if d.id not in allowed]
        return DocChanges(upserts=upserts, deletes=[*changes.deletes, *refused])
