"""The fast intake path gives the pydantic path's answer for every input.

``prepare`` skips pydantic when plain checks prove a request valid. That is only safe if the
fast path never accepts what ``EventIn`` refuses and writes byte-for-byte the wire JSON that
``Event.to_wire`` writes, so these tests run both paths over the same inputs: hand-picked events
and a few hundred random combinations of good and bad field values.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from agent_memory_common.redaction.engine import Redactor
from agent_memory_common.web.http import ApiError
from agent_memory_gateway.intake import (
    _fast_items,
    check_batch,
    normalise,
    parse_body,
    prepare,
    validate,
)
from agent_memory_gateway.settings import GatewayOptions

OPTIONS = GatewayOptions(max_event_bytes=4096)
REDACTOR = Redactor()
RECEIVED = datetime(2026, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)
ABSENT = object()

BASE: dict[str, Any] = {
    "project_id": "agent-memory",
    "agent_id": "claude-code",
    "session_id": "s-1",
    "role": "assistant",
    "text": "hello",
}


def reference(body: bytes) -> list[bytes] | ApiError:
    """The pydantic path on its own: what the gateway answered before the fast path."""
    try:
        raw, batch = parse_body(body)
        check_batch(raw, batch, OPTIONS)
        items = validate(raw, batch, OPTIONS)
    except ApiError as exc:
        return exc
    events = normalise(items, tenant="t", received_at=RECEIVED, redactor=REDACTOR)
    return [e.to_wire() for e in events]


def fast(body: bytes) -> list[bytes] | ApiError:
    try:
        prepared = prepare(body, OPTIONS, tenant="t", received_at=RECEIVED, redactor=REDACTOR)
    except ApiError as exc:
        return exc
    return [p.wire for p in prepared]


def took_fast_path(body: bytes) -> bool:
    raw, _ = parse_body(body)
    return _fast_items(raw, OPTIONS.max_event_bytes) is not None


def without_generated_ids(wires: list[bytes], sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Decoded events; ids the gateway generated (random ULIDs) become a marker."""
    out = []
    for wire, event in zip(wires, sent, strict=True):
        data = orjson.loads(wire)
        if event.get("event_id") is None:
            assert len(data["event_id"]) == 26
            data["event_id"] = "<generated>"
        out.append(data)
    return out


def assert_same(body: bytes, sent: list[dict[str, Any]]) -> None:
    want, got = reference(body), fast(body)
    if isinstance(want, ApiError):
        assert isinstance(got, ApiError), f"fast path accepted what pydantic refuses: {body!r}"
        assert (got.status, got.code, got.field, got.message, got.details) == (
            want.status,
            want.code,
            want.field,
            want.message,
            want.details,
        )
        assert not took_fast_path(body)
        return
    assert isinstance(got, list), got
    if all(e.get("event_id") is not None for e in sent):
        assert got == want  # byte for byte
    else:
        assert without_generated_ids(got, sent) == without_generated_ids(want, sent)


GOOD_EVENTS: list[dict[str, Any]] = [
    BASE,
    {**BASE, "event_id": "e-1", "ts": 1_767_225_600_123, "type": "tool_call", "role": "tool"},
    {**BASE, "event_id": "e-2", "ts": 1_767_225_600_123.5, "user_id": "ann"},
    {**BASE, "event_id": "e-3", "ts": "2026-03-15T12:00:00+02:00", "type": "note"},
    {**BASE, "event_id": "e-4", "ts": "2026-03-15T10:00:00", "text": ""},
    {**BASE, "event_id": "e-5", "ts": "2026-03-15T10:00:00.5Z", "user_id": None},
    {**BASE, "event_id": " spaced id ", "text": "ünïcödé 😀 and a tab\tinside"},
    {**BASE, "event_id": "x" * 200, "session_id": "😀" * 200},
    {**BASE, "event_id": "e-6", "text": "export PGPASSWORD=hunter2xyz && psql"},
    {**BASE, "event_id": "e-7", "metadata": {"tool": "Bash", "duration_ms": 12, "ok": True}},
    {
        **BASE,
        "event_id": "e-8",
        "text": "token: ghp_" + "a1B2" * 9,
        "metadata": {"api_key": "abc123secret", "nested": {"x": ["Bearer abcdefgh12345678"]}},
    },
    {**BASE, "event_id": "e-9", "text": "nul\x00here", "metadata": {"k\x00": ["v\x00", 1.5]}},
    {**BASE, "event_id": "e-10", "metadata": {}, "type": "session_end"},
]


@pytest.mark.parametrize("event", GOOD_EVENTS)
def test_one_good_event_takes_the_fast_path_and_writes_the_same_wire(event: dict[str, Any]) -> None:
    body = orjson.dumps(event)
    assert took_fast_path(body)
    assert_same(body, [event])


def test_a_batch_of_good_events_takes_the_fast_path_and_writes_the_same_wire() -> None:
    events = GOOD_EVENTS
    for body in (orjson.dumps({"events": events}), orjson.dumps(events)):
        assert took_fast_path(body)
        assert_same(body, events)


def test_redaction_counts_are_recorded_on_the_fast_path() -> None:
    event = {**BASE, "event_id": "r", "text": "PGPASSWORD=hunter2xyz"}
    event["metadata"] = {"db_password": "x1y2z3"}
    got = fast(orjson.dumps(event))
    assert isinstance(got, list) and len(got) == 1
    wire = got[0]
    data = orjson.loads(wire)
    assert "hunter2xyz" not in data["text"] and "x1y2z3" not in wire.decode()
    assert data["metadata"]["_redactions"] == {"password": 2}


# Values for each field, good and bad; ABSENT leaves the key out.
POOL: dict[str, list[Any]] = {
    "event_id": [ABSENT, None, "", "e", "x" * 200, "x" * 201, "a\nb", "a\x7fb", " e ", 5, ["e"]],
    "ts": [
        ABSENT,
        None,
        1_767_225_600_000,
        1_767_225_600_000.25,
        1_767_225_600,
        True,
        "2026-03-15T10:00:00Z",
        "2026-03-15T12:00:00+02:00",
        "2026-03-15T10:00:00",
        "last tuesday",
        "",
        [],
        32_503_680_000_001,
        "0001-01-01T00:00:00Z",
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59Z",
        "1969-12-31T23:59:59Z",
        "2199-12-31T23:59:59Z",
    ],
    "project_id": [ABSENT, None, "", "p", "x" * 201, "a\tb", 7, "proj ect/ü", "😀" * 201],
    "agent_id": [ABSENT, "a", "", "x" * 200, False],
    "session_id": [ABSENT, "s", "\x00", {"s": 1}],
    "user_id": [ABSENT, None, "", "u", "x" * 201, "a\x00b", 3],
    "role": [ABSENT, None, "user", "tool", "system", "robot", "", 1, "User"],
    "type": [ABSENT, None, "message", "note", "tool_result", "thought", 2],
    "text": [ABSENT, None, "", "hello", "password=hunter2abc", "a\x00b", "ünï", 42, "x" * 5000],
    "metadata": [
        ABSENT,
        None,
        {},
        {"k": 1},
        {"password": "hunter2abc", "n": [1, "a\x00"]},
        [1],
        "s",
        {"big": "y" * 4090},
        {"f": 1e308, "i": 2**63 - 1},
        {"deep": [[[{"n": 2**63}]]]},
    ],
    "sesion_id": [ABSENT, ABSENT, ABSENT, "typo"],
}


def _random_event(rng: random.Random) -> dict[str, Any]:
    event: dict[str, Any] = {}
    for name, values in POOL.items():
        # mostly good values, so that whole batches are often valid
        value = rng.choice(values) if rng.random() < 0.12 else BASE.get(name, ABSENT)
        if value is not ABSENT:
            event[name] = value
    return event


def test_random_events_get_the_same_answer_from_both_paths() -> None:
    rng = random.Random(20260501)
    fast_taken = refused = 0
    for _ in range(600):
        events = [_random_event(rng) for _ in range(rng.choice((1, 1, 3)))]
        single = len(events) == 1 and rng.random() < 0.5
        body = orjson.dumps(events[0] if single else {"events": events})
        assert_same(body, events)
        fast_taken += took_fast_path(body)
        refused += isinstance(reference(body), ApiError)
    # both paths must really have been exercised, or the comparison proves nothing
    assert fast_taken > 150 and refused > 150, (fast_taken, refused)


@pytest.mark.parametrize(
    "body",
    [
        b'{"project_id": ',
        b'{"text": "\xff\xfe"}',
        b'"just a string"',
        b'{"events": {"a": 1}}',
        b'{"events": []}',
        b'{"events": [], "x": 1}',
        orjson.dumps({"events": [BASE] * 1001}),
    ],
)
def test_bodies_refused_before_any_event_is_looked_at(body: bytes) -> None:
    want, got = reference(body), fast(body)
    assert isinstance(want, ApiError) and isinstance(got, ApiError)
    assert (got.status, got.code, got.field, got.message) == (
        want.status,
        want.code,
        want.field,
        want.message,
    )


@pytest.mark.parametrize("over", [0, 1])
def test_the_size_limit_is_the_same_to_the_byte(over: int) -> None:
    meta = {"k": "y" * 100}
    meta_bytes = len(orjson.dumps(meta))
    text = "ü" * ((OPTIONS.max_event_bytes - meta_bytes) // 2) + "x" * (over + meta_bytes % 2)
    event = {**BASE, "event_id": "big", "text": text, "metadata": meta}
    assert len(text.encode()) + meta_bytes == OPTIONS.max_event_bytes + over
    body = orjson.dumps({"events": [BASE, event]})
    assert took_fast_path(body) is (over == 0)
    assert_same(body, [BASE, event])


def nested(levels: int, leaf: Any = 1) -> dict[str, Any]:
    """Metadata ``levels`` deep: ``{"a": 1}`` is one level."""
    value: Any = leaf
    for _ in range(levels - 1):
        value = {"a": value}
    return {"a": value}


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("metadata", nested(33), "nested deeper than 32 levels"),
        ("metadata", nested(300), "nested deeper than 32 levels"),  # orjson.dumps: 500 before
        (
            "metadata",
            {"l": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]},
            "deeper",
        ),
        ("metadata", {"f": 1e308}, "metadata.f: number 1e+308"),
        ("metadata", {"f": -9.3e18}, "outside what the stores hold"),
        ("metadata", {"x": {"i": 2**63}}, "metadata.x.i: number 9223372036854775808"),
        ("ts", "0001-01-01T00:00:00Z", "between 1970-01-01 and 2199-12-31"),
        ("ts", "9999-12-31T23:59:59Z", "between 1970-01-01 and 2199-12-31"),
        ("ts", "2200-01-01T00:00:00Z", "between 1970-01-01 and 2199-12-31"),
        ("ts", "0001-01-01T00:00:00+01:00", "out of the range of dates"),
        ("ts", 9_999_999_999_999, "milliseconds"),
    ],
)
def test_what_a_store_cannot_hold_is_refused_naming_the_field(
    field: str, value: Any, words: str
) -> None:
    """Depth, number and date limits (contracts/limits.py), the same answer on both paths."""
    for body, name in (
        # the standard library writes what orjson refuses to (300 levels)
        (json.dumps({**BASE, field: value}).encode(), field),
        (json.dumps({"events": [BASE, {**BASE, field: value}]}).encode(), f"events[1].{field}"),
    ):
        got = fast(body)
        assert isinstance(got, ApiError), got
        assert (got.status, got.field) == (422, name) and words in got.message, got.message
        assert_same(body, [])  # refused: no events to compare


def test_the_limits_themselves_are_accepted_on_the_fast_path() -> None:
    for over in (
        {"metadata": nested(32)},
        {"metadata": {"i": 2**63 - 1, "j": -(2**63), "f": 9.2e18, "g": 5e-324}},
        {"ts": "1970-01-01T00:00:00Z"},
        {"ts": "2199-12-31T23:59:59.999999Z"},
    ):
        body = orjson.dumps({**BASE, **over})
        assert took_fast_path(body), over
        assert_same(body, [orjson.loads(body)])


def test_an_integer_below_int64_is_refused_on_both_paths() -> None:
    # orjson reads an integer below -2**63 as a float (it cannot write one): written by hand
    body = orjson.dumps(BASE)[:-1] + b', "metadata": {"i": -10000000000000000000}}'
    got = fast(body)
    assert isinstance(got, ApiError) and got.field == "metadata", got
    assert_same(body, [orjson.loads(body)])
