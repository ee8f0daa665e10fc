"""Summarizer: closed segment -> summary -> TOC node versions -> ``mem.toc.*``.

A batch runs in one transaction owned by the ConsumerRunner, in three steps:

1. decode, and summarize every segment version not summarized yet (reads stored events; the
   optional LLM call happens here, before any lock is held);
2. take the TOC advisory lock of every project in the batch, in one global order (so that two
   replicas never wait on each other in a cycle);
3. put each segment in the tree, in stream order (``toc.apply_segment``).

The locks are held to the commit; the runner then publishes the new node versions and acks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from nats.aio.msg import Msg
from psycopg import AsyncConnection

from agent_memory_common.bus.consumer import Publication
from agent_memory_common.bus.erasure import tombstoned
from agent_memory_common.contracts.memory import is_runtime_event
from agent_memory_common.contracts.messages import SegmentMessage
from agent_memory_common.core.logs import get_logger
from agent_memory_summarizer import store
from agent_memory_summarizer.calendar import segment_node_id
from agent_memory_summarizer.extractive import runtime_only, summarize_segment
from agent_memory_summarizer.llm import LlmSummarizer, build_prompt, estimate_tokens
from agent_memory_summarizer.model import SourceEvent, Summary
from agent_memory_summarizer.settings import LlmOptions
from agent_memory_summarizer.supersession_store import record_segment
from agent_memory_summarizer.toc import apply_segment

log = get_logger(__name__)


class MissingEventsError(Exception):
    """A segment names events that are not stored: retried, then dead-lettered."""


class SummarizeHandler:
    def __init__(self, llm_options: LlmOptions, llm: LlmSummarizer | None = None) -> None:
        self.llm_options = llm_options
        self.llm = llm

    async def __call__(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        segments = [SegmentMessage.from_wire(m.data) for m in msgs]
        prepared: list[tuple[Summary | None, datetime | None] | None] = []
        skipped: set[int] = set()
        for i, seg in enumerate(segments):
            known = await store.source_version(conn, seg.tenant, segment_node_id(seg.segment_id))
            if await tombstoned(conn, seg.tenant, seg.event_ids):
                # a version from before an erasure (redelivered or replayed): never summarized
                skipped.add(i)
                prepared.append(None)
            elif known is not None and known >= seg.version:
                prepared.append(None)  # redelivered or stale: republished in step 3
            else:
                prepared.append(await self.prepare(conn, seg))
        projects = sorted(
            {(s.tenant, s.project_id) for s in segments},
            key=lambda tp: (store.project_lock_key(*tp), tp),
        )
        for tenant, project_id in projects:
            await store.lock_project(conn, tenant, project_id)
        publications: list[Publication] = []
        for i, (seg, prep) in enumerate(zip(segments, prepared, strict=True)):
            if i in skipped:
                continue
            # no summary: a redelivery (apply_segment republishes) or a retraction
            summary, first_ts = prep if prep is not None else (None, None)
            publications.extend(await apply_segment(conn, seg, summary, first_ts))
            if prep is not None and seg.event_ids:  # under the project lock: one view of it
                await record_segment(conn, seg.tenant, seg.project_id, seg.own_event_ids)
        return publications

    async def prepare(
        self, conn: AsyncConnection, seg: SegmentMessage
    ) -> tuple[Summary | None, datetime | None]:
        """The summary of a segment's own events and the time of the first one."""
        if not seg.event_ids:
            return None, None  # a retraction: the node empties, no summary
        wanted = seg.own_event_ids
        found = await store.load_events(conn, seg.tenant, wanted)
        missing = [e for e in wanted if e not in found]
        if missing:
            raise MissingEventsError(
                f"segment {seg.segment_id} v{seg.version}: {len(missing)} of its events are "
                f"not stored (first: {missing[0]!r})"
            )
        events = [found[e] for e in wanted]
        first_ts = min(e.ts for e in events)
        # What the runtime wrote (a compaction prompt, a command's expansion, a reminder) is
        # nobody's memory: no bullet, title or key phrase is made of it. A segment of nothing
        # else gets a node without bullets, which the levels above pass over.
        said = [e for e in events if not is_runtime_event(e.type)]
        if not said:
            return runtime_only(f"Session {seg.session_id} #{seg.ordinal}"), first_ts
        summary = await self._llm_summary(conn, seg, said)
        if summary is None:
            summary = summarize_segment(said, f"Session {seg.session_id} #{seg.ordinal}")
        return summary, first_ts

    async def _llm_summary(
        self, conn: AsyncConnection, seg: SegmentMessage, events: list[SourceEvent]
    ) -> Summary | None:
        if self.llm is None:
            return None
        opts = self.llm_options
        prompt = build_prompt(events, opts.max_prompt_chars)
        day = datetime.now(UTC).date()
        used = await store.llm_tokens_used(conn, seg.tenant, seg.project_id, day)
        if used + estimate_tokens(prompt, opts.max_tokens) > opts.project_tokens_per_day:
            log.info(
                "summarizer.llm_budget_exhausted",
                project_id=seg.project_id,
                used=used,
                budget=opts.project_tokens_per_day,
            )
            return None
        summary, spent = await self.llm.summarize(events, prompt)
        await store.llm_tokens_add(conn, seg.tenant, seg.project_id, day, spent)
        if summary is None:
            log.info("summarizer.llm_fallback", segment_id=seg.segment_id)
            return None
        return Summary(summary.title, summary.bullets, summary.keywords, method=self.llm.name)
