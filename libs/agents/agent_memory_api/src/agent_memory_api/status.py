"""``GET /v1/status``: the backlog of every pipeline consumer."""

from __future__ import annotations

from typing import NotRequired

from pydantic import with_config
from typing_extensions import TypedDict

from agent_memory_api.common import CLOSED


@with_config(CLOSED)
class ConsumerStatus(TypedDict):
    """A durable consumer; when it exists, whether it has caught up and, in local mode only,
    its counts (they span every tenant, so with tokens configured no tenant sees them)."""

    name: str
    stream: str
    exists: bool
    caught_up: NotRequired[bool]
    pending: NotRequired[int]
    ack_pending: NotRequired[int]
    redelivered: NotRequired[int]
    ack_floor: NotRequired[int]
    delivered: NotRequired[int]
    dead_letters: NotRequired[int]  # messages parked on mem.dlq.<name>


@with_config(CLOSED)
class Status(TypedDict):
    """``events_stored`` counts every event; ``duplicates_stored`` those of them marked
    ``duplicate_of`` another at ingest (stored, never indexed or summarised: docs/lifecycle.md).

    ``segments_open`` counts the tenant's open segments (a session's last segment, not yet in
    the TOC); ``segments_closing`` those of them the segmenter closes without waiting for a new
    event: the tail of a historical session (its last event older than the idle flush in event
    time, as after an import), closed seconds after its events are in, plus closes not yet
    announced. The tail of a live session is open but not closing: it waits for the agent, and
    closes after the idle flush (docs/toc.md, "Idle flush").

    ``drained``: every consumer exists and has caught up, and no segment is closing; so once
    an import's events are stored, drained means its TOC and indexes are complete."""

    consumers: list[ConsumerStatus]
    events_stored: int
    duplicates_stored: int
    segments_open: int
    segments_closing: int
    drained: bool
