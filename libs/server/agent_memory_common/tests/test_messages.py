"""The wire contracts: each message survives its own round trip, the one ``mem.toc`` builder
rounds the salience with the pin, poison is refused, and the database agrees with the shared
memory rules (kinds, pin bonus)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from importlib.resources import files
from typing import Any

import orjson
import psycopg
import pydantic
import pytest

from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.memory import MEMORY_KINDS, PIN_BONUS, pinned_salience, salience
from agent_memory_common.contracts.messages import (
    EventMessage,
    RecordedMessage,
    SegmentMessage,
    TocNodeMessage,
    toc_node_message,
)

T = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def segment() -> SegmentMessage:
    return SegmentMessage(
        tenant="acme", segment_id="sg_1", version=3, project_id="proj", agent_id="claude",
        session_id="s1", ordinal=1, start_ts=T, end_ts=T, event_ids=["e1", "e2", "e3"],
        overlap_count=1, token_count=120, close_reason="gap",
    )  # fmt: skip


def node_row(**extra: Any) -> dict[str, Any]:
    return {
        "tenant": "acme", "project_id": "proj", "node_id": "segment:sg_1", "version": 3,
        "level": "segment", "bucket": "sg_1", "parent_id": "day:2026-03-02@proj",
        "title": "UTC", "keywords": ["utc"], "memory_kind": "constraint",
        "bullets": [
            {"text": "UTC everywhere", "kind": "constraint", "salience": 0.45,
             "grip_ids": ["grip:a", "grip:b", "grip:a"], "source_node_id": None},
        ],
        "base_salience": 0.45, "child_ids": [], "start_ts": T, "end_ts": T,
        "session_id": "s1", "agent_id": "claude", "event_ids": ["e1", "e2"],
        "overlap_count": 0, "source_version": 3, "summarizer": "extractive", **extra,
    }  # fmt: skip


GRIP = {
    "grip_id": "grip:a", "node_id": "segment:sg_1", "node_version": 3, "bullet_index": 0,
    "event_ids": ["e1"], "excerpt": "we must use UTC", "memory_kind": "constraint",
    "salience": 0.45, "pinned": False, "base_salience": 0.45,
}  # fmt: skip


def test_event_and_recorded_messages_are_the_event_envelope() -> None:
    # the recorder announces the very bytes it recorded
    assert EventMessage is Event and RecordedMessage is Event


def test_segment_message_round_trip_and_keys() -> None:
    msg = segment()
    wire = msg.to_wire()
    assert SegmentMessage.from_wire(wire) == msg
    assert orjson.loads(wire)["start_ts"] == "2026-03-02T09:30:00+00:00"
    assert (msg.msg_id, msg.cause, msg.own_event_ids) == ("acme/sg_1/v3", "sg_1/v3", ["e2", "e3"])


def test_the_toc_builder_cites_each_grip_once_and_rounds_the_pinned_salience() -> None:
    msg = toc_node_message(node_row(), {"grip:a": GRIP}, pinned=True)
    assert msg.salience == pinned_salience(0.45, True) == 0.65  # not 0.6500000000000001
    assert [g.grip_id for g in msg.grips] == ["grip:a"]  # grip:b is not stored: left out
    assert "base_salience" not in orjson.loads(msg.to_wire())["grips"][0]
    assert TocNodeMessage.from_wire(msg.to_wire()) == msg
    assert msg.msg_id == "acme/segment:sg_1/v3"
    empty = toc_node_message(node_row(is_empty=True), {"grip:a": GRIP}, pinned=False)
    assert empty.bullets == [] and empty.salience == 0.45


@pytest.mark.parametrize(
    "data",
    [b"not json", b"{}", orjson.dumps({**segment().model_dump(), "version": 0})],
)
def test_poison_is_refused(data: bytes) -> None:
    with pytest.raises(pydantic.ValidationError):
        SegmentMessage.from_wire(data)
    with pytest.raises(pydantic.ValidationError):
        TocNodeMessage.from_wire(data)


def test_the_salience_rule() -> None:
    assert salience(250, "constraint") == pytest.approx(0.425)
    assert salience(250, "constraint", pinned=True) == pytest.approx(0.425 + PIN_BONUS)


def test_the_database_agrees_with_the_memory_rules(pg_dsn: str) -> None:
    """The kinds the migrated database accepts (the latest CHECK of both columns, whichever
    migration set it) and the pin bonus of its generated column are the constants here."""
    with psycopg.connect(pg_dsn) as conn:
        checks = conn.execute(
            "SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE contype = 'c' AND pg_get_constraintdef(oid) LIKE '%memory_kind%'"
        ).fetchall()
    assert {table for table, _ in checks} == {"toc_node_versions", "toc_grips"}
    for _, check in checks:
        assert set(re.findall(r"'([a-z]+)'", check)) == set(MEMORY_KINDS)
    sql = (files("agent_memory_common.db") / "migrations" / "0003_toc.sql").read_text()
    (bonus,) = re.findall(r"CASE WHEN pinned THEN ([0-9.]+) ELSE", sql)
    assert float(bonus) == PIN_BONUS
