"""Every message that travels on NATS, one model each: producers dump it, consumers validate it.

=====================================  ================  =====================================
subject (stream)                       model             producer -> consumers
=====================================  ================  =====================================
``mem.events.<t>.<p>`` (EVENTS)        EventMessage      gateway -> recorder
``mem.recorded.<t>.<p>`` (RECORDED)    RecordedMessage   recorder -> segmenter, embedder,
                                                         bm25-indexer
``mem.segments.<t>.<p>`` (SEGMENTS)    SegmentMessage    segmenter -> summarizer
``mem.toc.<t>.<p>`` (TOC)              TocNodeMessage    summarizer, query (pin) ->
                                                         embedder-toc, bm25-indexer-toc,
                                                         topics
``mem.erasure.<t>.<p>`` (ERASURE)      ErasureRequest    query -> every service owning data
``mem.dlq.<consumer>`` (DEADLETTER)    the poison bytes  any consumer -> an operator
=====================================  ================  =====================================

``EventMessage`` and ``RecordedMessage`` are the event envelope ``Event`` (``event.py``, mirrored
from ``proto/``): the recorder announces the very bytes it recorded. Its two hot paths (the
gateway's writer, the recorder's reader) have fast paths that a test holds to ``Event``.

A new message type: a model here (``WireModel``), a subject function in ``subjects.py``, a stream
in ``streams.py``, a row in the table above and in ``docs/architecture.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Self

import orjson
from pydantic import BaseModel, ConfigDict, Field

from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.memory import MemoryKind, pinned_salience

EventMessage = Event
RecordedMessage = Event


class WireModel(BaseModel):
    """JSON on the wire (times in RFC 3339); fields a newer writer adds are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    def to_wire(self) -> bytes:
        """What a producer publishes (orjson: compact, datetimes as RFC 3339)."""
        return orjson.dumps(self.model_dump())

    @classmethod
    def from_wire(cls, data: bytes | str) -> Self:
        """What a consumer reads; raises ``pydantic.ValidationError`` for a poison message."""
        return cls.model_validate_json(data)


class SegmentMessage(WireModel):
    """A segment version on ``mem.segments.<tenant>.<project>``, Nats-Msg-Id
    ``<tenant>/<segment_id>/v<version>``; sent once per closed version (a consumer keeps the
    highest version it has seen per segment). ``close_reason`` 'retracted' with empty
    ``event_ids`` withdraws a segment that a late event merged into an earlier one; its times
    and agent are those of the content it withdraws."""

    tenant: str = Field(min_length=1)
    segment_id: str = Field(min_length=1)
    version: int = Field(ge=1)
    project_id: str = Field(min_length=1)
    agent_id: str
    session_id: str
    ordinal: int = 0
    start_ts: datetime
    end_ts: datetime
    event_ids: list[str] = Field(default_factory=list)  # empty: a retraction
    overlap_count: int = Field(default=0, ge=0)
    token_count: int = 0
    close_reason: str | None = None  # gap, token_budget, session_end, idle, retracted

    @property
    def msg_id(self) -> str:
        return f"{self.tenant}/{self.segment_id}/v{self.version}"

    @property
    def cause(self) -> str:
        """What every node version made for this message is tagged with (idempotency key)."""
        return f"{self.segment_id}/v{self.version}"

    @property
    def own_event_ids(self) -> list[str]:
        """The events this segment adds; the leading overlap was summarized by its predecessor.

        A segment made of overlap only (never expected) is summarized whole rather than empty.
        """
        own = self.event_ids[self.overlap_count :]
        return own or list(self.event_ids)


class TocBullet(WireModel):
    """One line of a node's summary; ``grip_ids`` lead to its evidence."""

    text: str
    kind: MemoryKind
    salience: float = 0.0  # the bullet's own; no reader ranks by it (the node's salience counts)
    grip_ids: list[str] = Field(default_factory=list)
    source_node_id: str | None = None  # rollups: the child it was taken from


class TocGrip(WireModel):
    """The evidence under a bullet: the exact events and the words in them."""

    grip_id: str
    node_id: str  # the segment node version that made it
    node_version: int
    bullet_index: int
    event_ids: list[str]
    excerpt: str
    memory_kind: MemoryKind
    salience: float  # pin included
    pinned: bool = False


class TocNodeMessage(WireModel):
    """A TOC node version on ``mem.toc.<tenant>.<project>``, Nats-Msg-Id
    ``<tenant>/<node_id>/v<version>`` (a pin republishes it with a suffix of its own): the node
    with every grip its bullets cite, so that indexers need nothing else. Empty ``bullets``: the
    node is empty now (a retracted segment) and leaves the indexes."""

    tenant: str
    project_id: str
    node_id: str
    version: int
    level: str
    bucket: str
    parent_id: str | None
    title: str
    bullets: list[TocBullet]
    keywords: list[str]
    memory_kind: MemoryKind
    salience: float  # pin included, rounded to 4 places
    pinned: bool
    child_ids: list[str] = Field(default_factory=list)
    start_ts: datetime
    end_ts: datetime
    # segments only: the session, its events (overlap first) and the segment version
    session_id: str | None = None
    agent_id: str | None = None
    event_ids: list[str] | None = None
    overlap_count: int | None = None
    source_version: int | None = None
    summarizer: str
    grips: list[TocGrip] = Field(default_factory=list)

    @property
    def msg_id(self) -> str:
        return f"{self.tenant}/{self.node_id}/v{self.version}"


def toc_node_message(
    row: Mapping[str, Any], grips: Mapping[str, Mapping[str, Any]], pinned: bool
) -> TocNodeMessage:
    """The one builder of ``mem.toc`` messages, from a ``toc_node_versions`` row (with the
    node's ``is_empty`` flag when the row has it) and the ``toc_grips`` rows by id.

    Used by the summarizer for the versions it makes and by the query service (through
    ``agent_memory_retrieval.indexing.sources``) when a pin changes a node's salience;
    rebuild-index reads
    the same rows through it, so every writer of the indexes sees one shape.
    """
    bullets = list(row["bullets"] or ())
    cited = dict.fromkeys(g for b in bullets for g in b.get("grip_ids") or ())
    return TocNodeMessage(
        tenant=row["tenant"],
        project_id=row["project_id"],
        node_id=row["node_id"],
        version=row["version"],
        level=row["level"],
        bucket=row["bucket"],
        parent_id=row["parent_id"],
        title=row["title"],
        bullets=[] if row.get("is_empty") else bullets,
        keywords=list(row["keywords"]),
        memory_kind=row["memory_kind"],
        salience=pinned_salience(row["base_salience"], pinned),
        pinned=pinned,
        child_ids=list(row["child_ids"] or ()),
        start_ts=row["start_ts"],
        end_ts=row["end_ts"],
        session_id=row["session_id"],
        agent_id=row["agent_id"],
        event_ids=row["event_ids"],
        overlap_count=row["overlap_count"],
        source_version=row["source_version"],
        summarizer=row["summarizer"],
        grips=[g for gid in cited if (g := grips.get(gid)) is not None],
    )


class ErasureRequest(WireModel):
    """An erasure on ``mem.erasure.<tenant>.<project>``, Nats-Msg-Id ``<tenant>/<erasure_id>``.

    Ids only: the erased event ids are the tombstones (``erased_events``) the query service
    wrote before publishing, so a participant reads them by ``erasure_id`` even after another
    participant deleted the events (see ``agent_memory_common.bus.erasure``)."""

    erasure_id: str = Field(min_length=1)
    tenant: str = Field(min_length=1)
    project_id: str = Field(min_length=1)
    scope: dict[str, Any]

    @property
    def msg_id(self) -> str:
        return f"{self.tenant}/{self.erasure_id}"

    @property
    def whole_project(self) -> bool:
        return bool(self.scope.get("project"))
