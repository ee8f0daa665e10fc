"""The event envelope, mirrored from ``proto/agent_memory/v1/event.proto``.

``EventIn`` is what a client may send (strict: unknown fields are refused so that a typo such
as ``sesion_id`` is an error, not silently lost data). ``Event`` is the normalised envelope
that travels on JetStream and is stored by the recorder: tenant assigned, id and time filled.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_memory_common.contracts.limits import TS_MAX, StorableObject, ts_problem
from agent_memory_common.contracts.ulid import new_ulid

Role = Literal["user", "assistant", "tool", "system"]
EventType = Literal[
    "message", "tool_call", "tool_result", "session_start", "session_end", "note", "runtime"
]

ROLES: tuple[str, ...] = ("user", "assistant", "tool", "system")
EVENT_TYPES: tuple[str, ...] = (
    "message",
    "tool_call",
    "tool_result",
    "session_start",
    "session_end",
    "note",
    "runtime",
)

# Epoch values below this are taken as seconds by many tools; we only accept milliseconds and
# refuse anything before 2001-09-09 in ms so that a seconds value is an error, not year 1970.
_MIN_EPOCH_MS = 1_000_000_000_000
_MAX_EPOCH_MS = int(TS_MAX.timestamp() * 1000)  # past what every index holds (limits.py)

_ID_PATTERN = r"^[^\x00-\x1f\x7f]+$"


def parse_ts(value: object) -> datetime:
    """Accept RFC 3339 text or epoch milliseconds; always return an aware UTC datetime."""
    if isinstance(value, bool):
        raise ValueError("must be an RFC 3339 string or epoch milliseconds, not a boolean")
    if isinstance(value, int | float):
        if not _MIN_EPOCH_MS <= value <= _MAX_EPOCH_MS:
            raise ValueError("epoch value must be in milliseconds (e.g. 1767225600000)")
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("must be RFC 3339, e.g. 2026-01-31T12:00:00Z") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        try:
            return parsed.astimezone(UTC)
        except OverflowError:  # 0001-01-01T00:00+01:00 is before datetime's first day in UTC
            raise ValueError("is out of the range of dates") from None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    raise ValueError("must be an RFC 3339 string or epoch milliseconds")


class EventIn(BaseModel):
    """One event as posted by a client."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    event_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=_ID_PATTERN)
    ts: str | int | float | None = None
    project_id: str = Field(min_length=1, max_length=200, pattern=_ID_PATTERN)
    agent_id: str = Field(min_length=1, max_length=200, pattern=_ID_PATTERN)
    session_id: str = Field(min_length=1, max_length=200, pattern=_ID_PATTERN)
    user_id: str | None = Field(default=None, max_length=200, pattern=_ID_PATTERN)
    role: Role
    type: EventType = "message"
    text: str
    metadata: StorableObject = Field(default_factory=dict)  # limits.py: depth and numbers

    @field_validator("ts", mode="before")
    @classmethod
    def _valid_ts(cls, value: object) -> object:
        # before the union is tried, so that one clear message names "ts" (not "ts.str")
        if value is not None:
            problem = ts_problem(parse_ts(value))
            if problem:
                raise ValueError(problem)
        return value


class Event(BaseModel):
    """The normalised envelope: what JetStream carries and Postgres stores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event_id: str
    ts: datetime
    tenant: str
    project_id: str
    agent_id: str
    session_id: str
    user_id: str | None = None
    role: Role
    type: EventType
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    received_at: datetime

    @classmethod
    def from_input(
        cls,
        item: EventIn,
        *,
        tenant: str,
        received_at: datetime,
        text: str,
        metadata: dict[str, Any],
    ) -> Event:
        """Fill what the client may leave out: id (a ULID) and time (when it was received)."""
        return cls.model_construct(
            event_id=item.event_id or new_ulid(int(received_at.timestamp() * 1000)),
            ts=parse_ts(item.ts) if item.ts is not None else received_at,
            tenant=tenant,
            project_id=item.project_id,
            agent_id=item.agent_id,
            session_id=item.session_id,
            user_id=item.user_id,
            role=item.role,
            type=item.type,
            text=text,
            metadata=metadata,
            received_at=received_at,
        )

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Event:
        """A row of the ``events`` table: validated when it was recorded, so not again.

        ``user_id`` and ``received_at`` may be left out of the row (readers that only rank
        events need neither); ``received_at`` then defaults to the event's time.
        """
        return cls.model_construct(
            event_id=row["event_id"],
            ts=row["ts"],
            tenant=row["tenant"],
            project_id=row["project_id"],
            agent_id=row["agent_id"],
            session_id=row["session_id"],
            user_id=row.get("user_id"),
            role=row["role"],
            type=row["type"],
            text=row["text"],
            metadata=row["metadata"] or {},
            received_at=row.get("received_at") or row["ts"],
        )

    def to_wire(self) -> bytes:
        """Compact JSON for JetStream; orjson writes datetimes as RFC 3339."""
        return orjson.dumps(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "ts": self.ts,
            "tenant": self.tenant,
            "project_id": self.project_id,
            "agent_id": self.agent_id,
            "session_id": self.session_id,
            "user_id": self.user_id,
            "role": self.role,
            "type": self.type,
            "text": self.text,
            "metadata": self.metadata,
            "received_at": self.received_at,
        }

    @classmethod
    def from_wire(cls, data: bytes) -> Event:
        """Decode and validate; raises ``pydantic.ValidationError`` for a poison message."""
        return cls.model_validate_json(data)
