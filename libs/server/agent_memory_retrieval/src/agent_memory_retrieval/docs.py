"""What the indexes hold and how they are asked: one document shape for every tier.

Events, grips and table-of-contents nodes are indexed as the same ``IndexDoc``, so that BM25 and
vector hits of different kinds fuse without conversion and every hit carries its provenance
(``event_ids``). Ids are deterministic (``event:<tenant>:<event_id>`` ...), so a redelivered or
rebuilt document overwrites its earlier copy instead of adding a second one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from agent_memory_common.contracts.memory import (
    DEFAULT_KIND as DEFAULT_KIND,  # the shared rule, re-exported
)

DocType = Literal["event", "grip", "toc_node"]
Level = Literal["event", "segment", "day", "week", "month", "year", "grip"]

DOC_TYPES: tuple[str, ...] = ("event", "grip", "toc_node")
LEVELS: tuple[str, ...] = ("event", "segment", "day", "week", "month", "year", "grip")


def event_doc_id(tenant: str, event_id: str) -> str:
    return f"event:{tenant}:{event_id}"


def grip_doc_id(tenant: str, grip_id: str) -> str:
    return f"grip:{tenant}:{grip_id}"


def node_doc_id(tenant: str, node_id: str) -> str:
    return f"node:{tenant}:{node_id}"


def as_utc(ts: datetime) -> datetime:
    """Naive datetimes are taken as UTC; every adapter stores and compares UTC instants."""
    if ts.tzinfo is None:
        return ts.replace(tzinfo=UTC)
    return ts.astimezone(UTC)


@dataclass(frozen=True)
class IndexDoc:
    """One searchable item; ``text`` is what BM25 and the embedder read (with ``title``).

    ``context`` is matched by BM25 and never shown: for an event, the turn before it in its
    session (also embedded, after the turn); for a segment, all its events' text. An answer
    rarely repeats the words of its question ("What are you researching?" - "Adoption
    agencies"), so without the question beside it the answer is found by none of the words a
    user later asks with.
    """

    id: str
    type: str  # DocType
    tenant: str
    project_id: str
    agent_id: str
    session_id: str  # '' when the item spans sessions
    ts: datetime
    level: str  # Level
    kind: str = DEFAULT_KIND
    salience: float = 0.5
    title: str = ""
    text: str = ""
    event_ids: tuple[str, ...] = ()
    context: str = ""

    def match_text(self) -> str:
        """What the text indexes match: title, text and context."""
        return "\n".join(part for part in (self.title, self.text, self.context) if part)

    def embedding_text(self) -> str:
        """The text the embedder sees: title first, as it is the densest summary; for an event,
        then the turn before it.

        A turn's meaning often lies in what it answers ("Yes, three of them!" after "Do you
        have dogs?"). The context comes last, so the model's cut (``embedding_max_tokens``)
        takes it before the turn. On LoCoMo, vector search alone found 0.475 of the evidence
        turns in its first ten with the previous turn embedded, 0.396 without; fused with
        BM25, turn recall stayed the same and session recall rose. A segment's context (all
        its words) is never embedded: its summary is its meaning.
        """
        parts = [self.title, self.text]
        if self.type == "event":
            parts.append(self.context)
        return "\n".join(part for part in parts if part)


@dataclass(frozen=True)
class SearchFilter:
    """Restrictions every adapter applies inside the engine (not after), tenant always.

    ``None`` means no restriction; an empty tuple for ``types``/``kinds``/``levels`` matches
    nothing. ``since`` is inclusive and ``until`` exclusive.
    """

    tenant: str
    project_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    types: tuple[str, ...] | None = None
    kinds: tuple[str, ...] | None = None
    levels: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not self.tenant:
            raise ValueError("SearchFilter.tenant is required")

    def matches(self, doc: IndexDoc) -> bool:
        """The same predicate as the engines' filters, for fusion code and tests."""
        if doc.tenant != self.tenant:
            return False
        if self.project_id is not None and doc.project_id != self.project_id:
            return False
        if self.agent_id is not None and doc.agent_id != self.agent_id:
            return False
        if self.session_id is not None and doc.session_id != self.session_id:
            return False
        ts = as_utc(doc.ts)
        if self.since is not None and ts < as_utc(self.since):
            return False
        if self.until is not None and ts >= as_utc(self.until):
            return False
        if self.types is not None and doc.type not in self.types:
            return False
        if self.kinds is not None and doc.kind not in self.kinds:
            return False
        return self.levels is None or doc.level in self.levels


@dataclass(frozen=True)
class Hit:
    """A search result: higher ``score`` is better; scales differ between engines."""

    id: str
    score: float
    doc: IndexDoc


def doc_to_json(doc: IndexDoc) -> dict[str, object]:
    """The stored form of a document (OpenSearch ``_source``, Qdrant payload, Tantivy blob)."""
    return {
        "id": doc.id,
        "type": doc.type,
        "tenant": doc.tenant,
        "project_id": doc.project_id,
        "agent_id": doc.agent_id,
        "session_id": doc.session_id,
        "ts": as_utc(doc.ts).isoformat(),
        "level": doc.level,
        "kind": doc.kind,
        "salience": float(doc.salience),
        "title": doc.title,
        "text": doc.text,
        "event_ids": list(doc.event_ids),
        "context": doc.context,
    }


def doc_from_json(data: Mapping[str, Any]) -> IndexDoc:
    return IndexDoc(
        id=str(data["id"]),
        type=str(data["type"]),
        tenant=str(data["tenant"]),
        project_id=str(data["project_id"]),
        agent_id=str(data["agent_id"]),
        session_id=str(data.get("session_id") or ""),
        ts=as_utc(datetime.fromisoformat(str(data["ts"]))),
        level=str(data["level"]),
        kind=str(data.get("kind") or DEFAULT_KIND),
        salience=float(data.get("salience", 0.5)),
        title=str(data.get("title") or ""),
        text=str(data.get("text") or ""),
        event_ids=tuple(str(e) for e in data.get("event_ids") or ()),
        context=str(data.get("context") or ""),
    )


@dataclass
class DocChanges:
    """What one message or one page of rows does to the indexes."""

    upserts: list[IndexDoc] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)

    def extend(self, other: DocChanges) -> None:
        self.upserts.extend(other.upserts)
        self.deletes.extend(other.deletes)
