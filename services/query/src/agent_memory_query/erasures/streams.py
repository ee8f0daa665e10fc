"""The erasure's purge of the JetStream streams: EVENTS, RECORDED, SEGMENTS and TOC keep every
message 30 days, erased text included.

A whole project is one subject per stream: purged by subject. A narrower scope is found by
reading the project's subject with an ordered consumer (ids and phrases are inside the
payloads) and deleting each matching message by sequence; JetStream's delete overwrites the
message in its file (a "secure erase"), it does not only mark it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy
from nats.js.errors import NotFoundError

from agent_memory_common.contracts.subjects import (
    STREAM_EVENTS,
    STREAM_RECORDED,
    STREAM_SEGMENTS,
    STREAM_TOC,
    event_subject,
    recorded_subject,
    segment_subject,
    toc_subject,
)

READ_TIMEOUT_S = 2.0
SUBJECTS: dict[str, Callable[[str, str], str]] = {
    STREAM_EVENTS: event_subject,
    STREAM_RECORDED: recorded_subject,
    STREAM_SEGMENTS: segment_subject,
    STREAM_TOC: toc_subject,
}


@dataclass
class Target:
    """What to purge: the erased event ids, the phrases, and for TOC messages whether their
    node version still exists (a removed version was made from erased text)."""

    tenant: str
    project_id: str
    whole_project: bool
    event_ids: set[str]
    needles: list[bytes]
    live_versions: Callable[[], Awaitable[set[tuple[str, int]]]]
    _live: set[tuple[str, int]] | None = field(default=None, repr=False)

    async def live(self) -> set[tuple[str, int]]:
        if self._live is None:
            self._live = await self.live_versions()
        return self._live


async def purge(js: JetStreamContext, target: Target) -> dict[str, int]:
    """Messages purged per stream."""
    out: dict[str, int] = {}
    for stream, subject_of in SUBJECTS.items():
        subject = subject_of(target.tenant, target.project_id)
        count = await _count(js, stream, subject)
        if count == 0:
            out[stream] = 0
        elif target.whole_project:
            await js.purge_stream(stream, subject=subject)
            out[stream] = count
        else:
            doomed = [seq async for seq in _matches(js, stream, subject, count, target)]
            for seq in doomed:
                with contextlib.suppress(NotFoundError):  # gone already (max_age, a purge)
                    await js.delete_msg(stream, seq)
            out[stream] = len(doomed)
    return out


async def _count(js: JetStreamContext, stream: str, subject: str) -> int:
    try:
        info = await js.stream_info(stream, subjects_filter=subject)
    except NotFoundError:
        return 0
    return int((info.state.subjects or {}).get(subject, 0))


async def _matches(
    js: JetStreamContext, stream: str, subject: str, count: int, target: Target
) -> Any:
    """Sequences of the messages on ``subject`` that hold erased ids or text."""
    sub = await js.subscribe(
        subject, stream=stream, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL
    )
    toc: list[tuple[int, str, int]] = []
    try:
        for _ in range(count):
            try:
                msg = await sub.next_msg(timeout=READ_TIMEOUT_S)
            except TimeoutError:
                break
            seq = msg.metadata.sequence.stream
            if _holds(msg.data, target):
                yield seq
            elif stream == STREAM_TOC:
                d = orjson.loads(msg.data)
                toc.append((seq, str(d.get("node_id")), int(d.get("version") or 0)))
            if msg.metadata.num_pending == 0:
                break
    finally:
        await sub.unsubscribe()
    if toc:
        live = await target.live()
        for seq, node_id, version in toc:
            if (node_id, version) not in live:
                yield seq


def _holds(data: bytes, target: Target) -> bool:
    lowered = data.lower()
    if any(n in lowered for n in target.needles):
        return True
    try:
        d = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(d, dict):
        return False
    return bool(target.event_ids.intersection(_ids(d)))


def _ids(d: dict[str, Any]) -> Iterable[str]:
    if isinstance(d.get("event_id"), str):
        yield d["event_id"]
    yield from d.get("event_ids") or ()
    for grip in d.get("grips") or ():
        yield from grip.get("event_ids") or ()
