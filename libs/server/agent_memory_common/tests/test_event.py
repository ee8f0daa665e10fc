"""The event envelope: time parsing, id generation, and the proto file kept in step."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from agent_memory_common.contracts.event import EVENT_TYPES, ROLES, Event, EventIn, parse_ts
from agent_memory_common.contracts.subjects import event_subject, subject_token
from agent_memory_common.contracts.ulid import new_ulid

PROTO = Path(__file__).parents[4] / "proto" / "agent_memory" / "v1" / "event.proto"


def test_parse_ts_accepts_rfc3339_and_epoch_ms() -> None:
    assert parse_ts("2026-03-15T10:00:00Z") == datetime(2026, 3, 15, 10, tzinfo=UTC)
    assert parse_ts("2026-03-15T12:00:00+02:00") == datetime(2026, 3, 15, 10, tzinfo=UTC)
    assert parse_ts("2026-03-15T10:00:00") == datetime(2026, 3, 15, 10, tzinfo=UTC)
    assert parse_ts(1_773_568_800_000) == datetime(2026, 3, 15, 10, tzinfo=UTC)


@pytest.mark.parametrize("bad", [1_773_568_800, True, "tomorrow", [], None])
def test_parse_ts_refuses_seconds_and_garbage(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_ts(bad)


def test_ulids_are_26_crockford_chars_and_sort_by_time() -> None:
    a, b = new_ulid(1_000_000), new_ulid(2_000_000)
    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", a)
    assert a < b
    assert len({new_ulid(5) for _ in range(1000)}) == 1000


def test_event_in_is_strict_about_unknown_fields_and_types() -> None:
    base = {"project_id": "p", "agent_id": "a", "session_id": "s", "role": "user", "text": "t"}
    EventIn.model_validate(base)
    with pytest.raises(ValidationError):
        EventIn.model_validate({**base, "colour": "red"})
    with pytest.raises(ValidationError):
        EventIn.model_validate({**base, "text": 5})
    with pytest.raises(ValidationError):
        EventIn.model_validate({**base, "role": "bot"})


def test_event_wire_round_trip() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    item = EventIn.model_validate(
        {"project_id": "p", "agent_id": "a", "session_id": "s", "role": "tool", "text": "x"}
    )
    event = Event.from_input(item, tenant="t", received_at=now, text="x", metadata={"k": [1]})
    again = Event.from_wire(event.to_wire())
    assert again == event
    assert again.ts == now and again.event_id and again.type == "message"


def test_proto_and_model_have_the_same_fields_roles_and_types() -> None:
    proto = PROTO.read_text()
    message = proto[proto.index("message Event {") :]
    message = message[: message.index("}")]
    fields = re.findall(r"^\s+(?:optional\s+|repeated\s+)?[\w.]+\s+(\w+)\s*=\s*\d+;", message, re.M)
    assert fields == list(Event.model_fields)
    roles = re.findall(r"ROLE_([A-Z]+) = [1-9]", proto)
    assert [r.lower() for r in roles] == list(ROLES)
    types = re.findall(r"EVENT_TYPE_([A-Z_]+) = [1-9]", proto)
    assert [t.lower() for t in types] == list(EVENT_TYPES)


def test_subject_tokens_are_safe_and_stable() -> None:
    assert subject_token("my-project_1") == "my-project_1"
    weird = subject_token("/home/ann/src/app.v2 *")
    assert re.fullmatch(r"h[0-9a-f]{16}", weird)
    assert weird == subject_token("/home/ann/src/app.v2 *")
    assert event_subject("default", "a.b") == f"mem.events.default.{subject_token('a.b')}"
