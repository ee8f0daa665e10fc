"""The erasure coordinator, a background task of the query service.

For each open erasure, every ``check_interval_s``: while a registered participant has not
reported, publish the request again now and then (a lost publish, a participant that joined
late); once all reported, purge the streams; then verify: search every store for the erased
ids and phrases (Postgres tables, both indexes, the streams again) and mark the erasure
``verified`` when nothing is found, or record what was still found (counts only) and look again
next time. Every step is idempotent and reads its state from Postgres, so a kill -9 of this
service (or of any participant) only delays the verdict.

Before the verdict, the text index's files are rid of deleted documents (``expunge_deletes``:
a delete only marks a document, its text stays in its segment until a merge), so ``verified``
covers what lies in the index folder too. After it, Postgres is asked to reclaim the deleted
rows (``VACUUM`` of the tables an erasure deletes from, then ``CHECKPOINT``), best-effort: what
stays on disk, and how an operator clears it, is in docs/lifecycle.md ("What remains on disk
after an erasure").
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from typing import Any

import orjson
import psycopg
from psycopg import sql

from agent_memory_common.bus.erasure import ErasureResult, participant_runner, register_participant
from agent_memory_common.bus.publisher import Outgoing
from agent_memory_common.contracts.messages import ErasureRequest
from agent_memory_common.contracts.subjects import erasure_subject
from agent_memory_common.core.logs import get_logger
from agent_memory_common.db.postgres import reading
from agent_memory_query.context import QueryContext
from agent_memory_query.erasures import store
from agent_memory_query.erasures.streams import Target, purge
from agent_memory_retrieval.adapters.factory import open_text_index
from agent_memory_retrieval.docs import SearchFilter
from agent_memory_retrieval.ports import IndexUnavailableError, TextIndex

log = get_logger(__name__)
PARTICIPANT = "query"
TEXT_INDEXER = "bm25-indexer"
SEARCH_LIMIT = 25
# The tables an erasure deletes rows (and so erased text) from, vacuumed once it is verified;
# erasure_needles last held the phrases. Tables a deployment lacks are left out.
RECLAIMED_TABLES = (
    "events",
    "event_duplicates",
    "pruned_event_words",
    "staged_vectors",
    "segments",
    "segment_versions",
    "segment_outbox",
    "toc_nodes",
    "toc_node_versions",
    "toc_grips",
    "episodes",
    "episode_actions",
    "playbook_entries",
    "playbook_submissions",
    "memory_statements",
    "memory_supersessions",
    "topics",
    "topic_segments",
    "vector_docs",
    "erasure_items",
    "erasure_needles",
)


def request_message(row: dict[str, Any]) -> Outgoing:
    request = ErasureRequest(
        erasure_id=row["erasure_id"],
        tenant=row["tenant"],
        project_id=row["project_id"],
        scope=dict(row["scope"]),
    )
    subject = erasure_subject(request.tenant, request.project_id)
    return Outgoing(subject=subject, payload=request.to_wire(), msg_id=request.msg_id)


async def publish_request(ctx: QueryContext, row: dict[str, Any]) -> None:
    await ctx.link.publish([request_message(row)], timeout=5)
    async with ctx.pool.connection() as conn:
        await store.mark(conn, "mark_published", row["erasure_id"])


async def erase_owned(conn: Any, request: ErasureRequest) -> ErasureResult:
    """The query service's part as a participant: episodes and the playbook."""
    counts = await store.erase_owned(conn, request.tenant, request.project_id, request.scope)
    return ErasureResult(counts)


class ErasureCoordinator:
    def __init__(self, ctx: QueryContext) -> None:
        self._ctx = ctx
        self._options = ctx.settings.query.erasure
        self._text_writer: TextIndex | None = None  # opened at the first expunge

    async def run(self, stop: asyncio.Event) -> None:
        """The participant runner and the coordinator loop, until ``stop``."""
        ctx = self._ctx
        await register_participant(ctx.pool, PARTICIPANT)
        runner = participant_runner(ctx.link, ctx.pool, PARTICIPANT, erase_owned)
        try:
            await asyncio.gather(runner.run(stop), self._loop(stop))
        finally:
            if self._text_writer is not None:
                await self._text_writer.close()

    async def _loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.step()
            except Exception as exc:  # Postgres or NATS away: the next round tries again
                log.warning("erasure.step_failed", error=repr(exc))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self._options.check_interval_s)

    async def step(self) -> None:
        async with reading(self._ctx.pool) as conn:  # twice a second: one round trip
            rows = await store.open_erasures(conn)
        for row in rows:
            await self.advance(row)

    async def advance(self, row: dict[str, Any]) -> None:
        ctx, erasure_id = self._ctx, row["erasure_id"]
        async with ctx.pool.connection() as conn:
            reported = await store.reports(conn, erasure_id)
            missing = [p for p in await store.participants(conn) if p not in reported]
        if missing:
            published = row["published_at"]
            age = (datetime.now(UTC) - published).total_seconds() if published else None
            if age is None or age > self._options.republish_s:
                await publish_request(ctx, row)
            return
        if row["status"] == "erasing":
            streams = await purge(ctx.link.require_js(), await self._target(row))
            async with ctx.pool.connection() as conn:
                await store.mark(
                    conn, "mark_purged", erasure_id, streams=orjson.dumps(streams).decode()
                )
            log.info("erasure.streams_purged", erasure_id=erasure_id, **streams)
        findings = await self.verify(row)
        if not any(findings.values()):  # nothing live holds it: now the index's files
            findings.update(await self.expunge_text(erasure_id))
        verified = not any(findings.values())
        async with ctx.pool.connection() as conn, conn.transaction():
            if not verified:
                found = {k: v for k, v in findings.items() if v}
                await store.mark(
                    conn, "mark_findings", erasure_id, findings=orjson.dumps(found).decode()
                )
            else:
                await store.mark(conn, "mark_verified", erasure_id)
                await store.mark(conn, "drop_needles", erasure_id)
                log.info("erasure.verified", erasure_id=erasure_id)
        if verified and self._options.reclaim != "off":
            await self.reclaim_postgres(erasure_id)

    async def expunge_text(self, erasure_id: str) -> dict[str, int]:
        """Rid the text index's files of deleted documents: the erased ones, and the older
        copies of those an erasure rewrote or a summary replaced, whose text is erased text.
        Through a writer of its own (Tantivy allows one at a time, taken per write, so it takes
        turns with the bm25-indexer and the pruner). A failure is a finding: looked at again."""
        async with self._ctx.pool.connection() as conn:
            if TEXT_INDEXER not in await store.participants(conn):
                return {}  # no bm25-indexer ever ran: no text index
        try:
            if self._text_writer is None:
                self._text_writer = await open_text_index(self._ctx.settings, writer=True)
            rewritten = await self._text_writer.expunge_deletes()
        except (IndexUnavailableError, OSError) as exc:
            log.warning("erasure.expunge_failed", erasure_id=erasure_id, error=str(exc))
            return {"bm25_deleted_documents": 1}
        log.info("erasure.index_expunged", erasure_id=erasure_id, rewritten=rewritten)
        return {}

    async def reclaim_postgres(self, erasure_id: str) -> None:
        """``VACUUM`` the tables an erasure deletes from (their deleted rows stay in the pages
        until then), then ``CHECKPOINT``, so that the pages are written to the data files now
        and the WAL that holds the rows can be recycled sooner.

        A plain ``VACUUM`` (``reclaim = "vacuum"``) frees the rows' space but does not zero it:
        a page keeps their bytes in its free space until new rows are written there. ``"full"``
        rewrites each table (``VACUUM FULL``): no byte of them is left, at the cost of locking
        each table against reads and writes while it is copied.

        Best-effort, after the verdict: a role that does not own a table has it skipped
        (Postgres' warning is logged), one that is neither superuser nor ``pg_checkpoint``
        (Postgres 15+) skips the checkpoint; autovacuum and the next timed checkpoint do the
        same later (docs/lifecycle.md)."""
        started = asyncio.get_running_loop().time()
        notices: list[str] = []

        def notice(diag: psycopg.errors.Diagnostic) -> None:
            notices.append(str(diag.message_primary))

        checkpoint = "done"
        try:
            async with self._ctx.pool.connection() as conn:
                await conn.set_autocommit(True)  # VACUUM cannot run in a transaction
                conn.add_notice_handler(notice)
                try:
                    cur = await conn.execute(
                        "SELECT t FROM unnest(%s::text[]) AS t WHERE to_regclass(t) IS NOT NULL",
                        (list(RECLAIMED_TABLES),),
                    )
                    present = [str(r[0]) for r in await cur.fetchall()]
                    tables = sql.SQL(", ").join(sql.Identifier(t) for t in present)
                    full = sql.SQL("(FULL) " if self._options.reclaim == "full" else "")
                    await conn.execute(sql.SQL("VACUUM {}{}").format(full, tables))
                    try:
                        await conn.execute("CHECKPOINT")
                    except psycopg.errors.InsufficientPrivilege:
                        checkpoint = "skipped: needs superuser or the pg_checkpoint role"
                finally:
                    conn.remove_notice_handler(notice)
                    await conn.set_autocommit(False)
        except psycopg.Error as exc:
            log.warning("erasure.reclaim_failed", erasure_id=erasure_id, error=str(exc))
            return
        log.info(
            "erasure.postgres_reclaimed",
            erasure_id=erasure_id,
            mode=self._options.reclaim,
            tables=len(present),
            vacuum_skipped=[m for m in notices if "skipping" in m],
            checkpoint=checkpoint,
            seconds=round(asyncio.get_running_loop().time() - started, 2),
        )

    async def _target(self, row: dict[str, Any]) -> Target:
        ctx = self._ctx
        async with ctx.pool.connection() as conn:
            ids = await store.erased_ids(conn, row["erasure_id"])
            needles = await store.needles(conn, row["erasure_id"])

        async def live() -> set[tuple[str, int]]:
            async with ctx.pool.connection() as conn:
                return await store.toc_version_keys(conn, row["tenant"], row["project_id"])

        return Target(
            tenant=row["tenant"],
            project_id=row["project_id"],
            whole_project=bool(row["scope"].get("project")),
            event_ids=ids,
            needles=[n.encode() for n in needles],
            live_versions=live,
        )

    async def verify(self, row: dict[str, Any]) -> dict[str, int]:
        """What every store still holds of the erasure; all zero means verified."""
        ctx = self._ctx
        tenant, project_id, erasure_id = row["tenant"], row["project_id"], row["erasure_id"]
        async with ctx.pool.connection() as conn:
            found = await store.check_postgres(conn, erasure_id, tenant, project_id, row["scope"])
            ids = await store.erased_ids(conn, erasure_id)
            needles = await store.needles(conn, erasure_id)
            text_indexed = TEXT_INDEXER in await store.participants(conn)
        if text_indexed:  # no bm25-indexer ever ran: no text index to hold anything
            try:
                found["bm25_documents"] = await self._search_text(tenant, project_id, ids, needles)
            except IndexUnavailableError:  # cannot look: not verified (yet)
                found["bm25_unavailable"] = 1
        # the streams once more: whatever is found is purged now and counted as a finding
        again = await purge(ctx.link.require_js(), await self._target(row))
        found["streams"] = sum(again.values())
        return found

    async def _search_text(
        self, tenant: str, project_id: str, ids: set[str], needles: list[str]
    ) -> int:
        search = self._ctx.search
        index = search.text_index if search is not None else None
        if index is None:
            return 0
        flt = SearchFilter(tenant=tenant, project_id=project_id)
        hits = 0
        for needle in needles:
            for hit in await index.search(needle, flt, SEARCH_LIMIT):
                doc = hit.doc
                if ids.intersection(doc.event_ids) or needle in doc.match_text().lower():
                    hits += 1
        return hits
