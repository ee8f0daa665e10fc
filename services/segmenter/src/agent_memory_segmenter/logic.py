"""Segmentation as a pure function of a session's events: no I/O, no clock.

Keeping it pure is what makes the segmenter deterministic: whatever order events arrive in,
however often, on however many replicas, the store recomputes from the stored events and gets
the same answer. The idle flush only changes a segment's *status*, never its boundaries, so it
is not an input here (see docs/toc.md, "Segments").

The scan is left to right and its state at the start of a segment is exactly that segment's
carried overlap, which is what lets the store resume from any stored segment (``segment`` with
``start_ordinal`` and ``carried``) instead of rescanning a long session from its first event.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from agent_memory_common.contracts.memory import is_runtime_event
from agent_memory_common.contracts.messages import SegmentMessage

CloseReason = Literal["gap", "token_budget", "session_end"]

CHARS_PER_TOKEN = 4


def estimate_tokens(char_count: int) -> int:
    """ceil(chars / 4), at least 1: the usual rule of thumb for English under BPE tokenizers.

    Cheap enough to compute in SQL from ``char_length(text)`` (the text never leaves
    Postgres), deterministic, and independent of any model; an empty event still costs one.
    """
    return max(1, -(-char_count // CHARS_PER_TOKEN))


def event_tokens(type_: str, char_count: int) -> int:
    """What an event weighs against the token budget: its ``estimate_tokens``, but what the
    runtime wrote (``memory.RUNTIME_TYPE``) weighs one token. It stays in the segment of its
    moment (the span is whole, the events listing shows it), but a compaction summary of
    thousands of tokens would otherwise close the segment it lands in and fill the next one
    alone, a segment that says nothing anyone said."""
    return 1 if is_runtime_event(type_) else estimate_tokens(char_count)


@dataclass(frozen=True)
class EventInfo:
    """What segmentation needs of an event."""

    event_id: str
    ts: datetime
    type: str
    tokens: int
    agent_id: str

    @property
    def key(self) -> tuple[datetime, str]:
        """Sort key: event time, ties broken by id so that the order is total."""
        return (self.ts, self.event_id)


@dataclass(frozen=True)
class Thresholds:
    gap_s: float = 1800.0
    token_budget: int = 4000
    overlap_tokens: int = 500


@dataclass(frozen=True)
class SegmentPlan:
    """One computed segment; ``close_reason`` None means it is the session's open tail."""

    ordinal: int
    events: tuple[EventInfo, ...]
    overlap_count: int
    close_reason: CloseReason | None

    @property
    def event_ids(self) -> list[str]:
        return [e.event_id for e in self.events]

    @property
    def own_events(self) -> tuple[EventInfo, ...]:
        return self.events[self.overlap_count :]

    @property
    def token_count(self) -> int:
        return sum(e.tokens for e in self.events)

    @property
    def start_ts(self) -> datetime:
        return self.events[0].ts

    @property
    def end_ts(self) -> datetime:
        return self.events[-1].ts

    @property
    def agent_id(self) -> str:
        return self.own_events[0].agent_id


def segment_id(project_id: str, session_id: str, ordinal: int) -> str:
    """Deterministic id, unique per tenant: a session is (project_id, session_id)."""
    digest = hashlib.blake2b(f"{project_id}\0{session_id}".encode(), digest_size=8).hexdigest()
    return f"sg_{digest}_{ordinal}"


def session_lock_key(tenant: str, project_id: str, session_id: str) -> int:
    """A signed 32-bit key for ``pg_advisory_xact_lock(namespace, key)``.

    A collision only makes two unrelated sessions wait for each other, never wrong.
    """
    raw = hashlib.blake2b(f"{tenant}\0{project_id}\0{session_id}".encode(), digest_size=4)
    return int.from_bytes(raw.digest(), "big", signed=True)


def overlap_suffix(own: Sequence[EventInfo], overlap_tokens: int) -> list[EventInfo]:
    """The longest run of whole events at the end of ``own`` totalling <= overlap_tokens.

    Only the closing segment's own events are carried, never its own carried overlap, so an
    event is carried at most into the segment right after its own. An event larger than the
    overlap on its own is not carried at all (whole events only).
    """
    carried: list[EventInfo] = []
    total = 0
    for event in reversed(own):
        if total + event.tokens > overlap_tokens:
            break
        carried.append(event)
        total += event.tokens
    carried.reverse()
    return carried


def segment(
    events: Iterable[EventInfo],
    thresholds: Thresholds,
    *,
    start_ordinal: int = 0,
    carried: Sequence[EventInfo] = (),
) -> list[SegmentPlan]:
    """Cut one session's events into segments.

    Events are ordered by (ts, event_id) and de-duplicated by event_id first, so the input
    order and repeats do not matter. Rules, checked for each event in order:

    1. gap: more than ``gap_s`` after the previous event -> close ('gap'), start empty;
    2. budget: adding it would take the segment over ``token_budget`` -> close
       ('token_budget'), start the next one with the closed segment's last own events up to
       ``overlap_tokens`` (see ``overlap_suffix``);
    3. the event joins the current segment (one event larger than the budget is a segment
       of its own, never split);
    4. a ``session_end`` event closes the segment it joined ('session_end'), start empty.

    The last segment, unless closed by rule 4, is open. ``carried`` resumes a scan at a
    stored segment: its overlap events, which precede every event in ``events``.
    """
    unique = {e.event_id: e for e in events}
    ordered = sorted(unique.values(), key=lambda e: e.key)
    plans: list[SegmentPlan] = []
    current: list[EventInfo] = list(carried)
    overlap = len(current)
    tokens = sum(e.tokens for e in current)

    def close(reason: CloseReason) -> None:
        plans.append(SegmentPlan(start_ordinal + len(plans), tuple(current), overlap, reason))

    for event in ordered:
        has_own = len(current) > overlap
        if current and (event.ts - current[-1].ts).total_seconds() > thresholds.gap_s:
            if has_own:
                close("gap")
            current, overlap, tokens = [], 0, 0
        elif has_own and tokens + event.tokens > thresholds.token_budget:
            close("token_budget")
            current = overlap_suffix(current[overlap:], thresholds.overlap_tokens)
            overlap = len(current)
            tokens = sum(e.tokens for e in current)
        current.append(event)
        tokens += event.tokens
        if event.type == "session_end":
            close("session_end")
            current, overlap, tokens = [], 0, 0
    if len(current) > overlap:
        plans.append(SegmentPlan(start_ordinal + len(plans), tuple(current), overlap, None))
    return plans


# --- reconciling a fresh computation with what is stored -------------------------------------

Status = Literal["open", "closed", "retracted"]


@dataclass(frozen=True)
class StoredSegment:
    """The parts of a ``segments`` row that decide what changes."""

    ordinal: int
    version: int
    status: Status
    close_reason: str | None
    event_ids: tuple[str, ...]
    overlap_count: int
    agent_id: str
    start_ts: datetime
    end_ts: datetime


@dataclass(frozen=True)
class Write:
    """One row to write: an upsert (``plan`` None means retract ``previous``) or a delete.

    ``publish`` says the row's resulting version is to be announced downstream.
    """

    ordinal: int
    version: int
    status: Status
    close_reason: str | None
    plan: SegmentPlan | None
    previous: StoredSegment | None
    publish: bool
    delete: bool = False


def reconcile(stored: Sequence[StoredSegment], plans: Sequence[SegmentPlan]) -> list[Write]:
    """What to write so that the stored rows match ``plans``, with the version rules.

    ``stored`` holds every row at or after the first planned ordinal. A published version is
    never changed in place: a closed (or retracted) row whose content changes gets version + 1;
    an open row, never published at its version, changes in place. Content is the event ids
    and the overlap count (tokens, times and agent follow from them, events being immutable).
    The close reason is part of the content, except 'idle': a row the idle flush closed keeps
    its version and reason while its events stay the same (e.g. the session resumes after a
    gap), so an idle flush never causes a second publication of the same events.
    """
    by_ordinal = {s.ordinal: s for s in stored}
    writes: list[Write] = []
    for plan in plans:
        prev = by_ordinal.pop(plan.ordinal, None)
        status: Status = "open" if plan.close_reason is None else "closed"
        closed = status == "closed"
        if prev is None:
            writes.append(Write(plan.ordinal, 1, status, plan.close_reason, plan, None, closed))
            continue
        same = prev.event_ids == tuple(plan.event_ids) and prev.overlap_count == plan.overlap_count
        unchanged = plan.close_reason is None or prev.close_reason in ("idle", plan.close_reason)
        if same and prev.status == "closed" and unchanged:
            continue
        if same and prev.status == "open":
            if closed:
                writes.append(
                    Write(plan.ordinal, prev.version, status, plan.close_reason, plan, prev, True)
                )
            continue
        version = prev.version + 1 if prev.status != "open" else prev.version
        writes.append(Write(plan.ordinal, version, status, plan.close_reason, plan, prev, closed))
    for prev in sorted(by_ordinal.values(), key=lambda s: s.ordinal):
        if prev.status == "retracted":
            continue
        if prev.status == "open" and prev.version == 1:
            # never published: nobody downstream knows it, so it simply goes
            writes.append(Write(prev.ordinal, 1, "open", None, None, prev, False, delete=True))
            continue
        version = prev.version + 1 if prev.status == "closed" else prev.version
        writes.append(Write(prev.ordinal, version, "retracted", "retracted", None, prev, True))
    return writes


@dataclass(frozen=True)
class SessionKey:
    """A session is scoped by tenant and project: two projects may reuse a session id."""

    tenant: str
    project_id: str
    session_id: str

    def segment_id(self, ordinal: int) -> str:
        return segment_id(self.project_id, self.session_id, ordinal)

    @property
    def lock_key(self) -> int:
        return session_lock_key(self.tenant, self.project_id, self.session_id)


def payload(key: SessionKey, write: Write) -> SegmentMessage:
    """The message announcing a segment version on ``mem.segments.<tenant>.<project>``.

    A retraction has empty ``event_ids`` and close_reason 'retracted'; its times and agent
    are those of the content it withdraws.
    """
    if write.plan is not None:
        plan = write.plan
        agent_id, start_ts, end_ts = plan.agent_id, plan.start_ts, plan.end_ts
        event_ids, overlap_count, token_count = plan.event_ids, plan.overlap_count, plan.token_count
    else:
        assert write.previous is not None
        prev = write.previous
        agent_id, start_ts, end_ts = prev.agent_id, prev.start_ts, prev.end_ts
        event_ids, overlap_count, token_count = [], 0, 0
    return SegmentMessage(
        tenant=key.tenant,
        segment_id=key.segment_id(write.ordinal),
        version=write.version,
        project_id=key.project_id,
        agent_id=agent_id,
        session_id=key.session_id,
        ordinal=write.ordinal,
        start_ts=start_ts,
        end_ts=end_ts,
        event_ids=event_ids,
        overlap_count=overlap_count,
        token_count=token_count,
        close_reason=write.close_reason,
    )
