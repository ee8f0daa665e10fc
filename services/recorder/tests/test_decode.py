"""The recorder's quick paths give the results of the slow ones.

Decoding: the gateway's wire JSON is read with orjson and plain checks into the row
``Event.from_wire`` gives; anything else goes through pydantic, which still rejects poison with
``ValidationError`` (the consumer runner then moves the message to the dead-letter stream).

Writing: the times go to Postgres as the wire's RFC 3339 text, and every value reads back as
written, backslashes, newlines and tabs included.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import psycopg
import pytest
from pydantic import ValidationError

from agent_memory_common.contracts.event import Event
from agent_memory_recorder.handler import _plain_row, _row, decode
from agent_memory_recorder.store import EventRow, insert_rows

RECEIVED = datetime(2026, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)
_DROP = object()  # leaves the key out


def wire(**over: Any) -> bytes:
    event = Event.model_construct(
        event_id="e-1",
        ts=RECEIVED - timedelta(seconds=3),
        tenant="default",
        project_id="agent-memory",
        agent_id="claude-code",
        session_id="s-1",
        user_id=None,
        role="assistant",
        type="message",
        text="hello ü 😀",
        metadata={"tool": "Bash", "n": [1, 2.5, None], "_redactions": {"password": 1}},
        received_at=RECEIVED,
    )
    data = event.to_dict()
    data.update(over)
    return orjson.dumps({k: v for k, v in data.items() if v is not _DROP})


@pytest.mark.parametrize(
    "over",
    [
        {},
        {"user_id": "ann", "type": "tool_result", "role": "tool"},
        {"ts": datetime(2026, 3, 15, 10, 0, tzinfo=UTC)},  # no fraction of a second
        {"ts": "2026-03-15T12:00:00.5+02:00"},
        {"ts": "2026-03-15T10:00:00Z", "metadata": {}},
        {"text": ""},
    ],
)
def test_gateway_output_is_read_quickly_into_the_same_row(over: dict[str, Any]) -> None:
    data = wire(**over)
    assert _plain_row(orjson.loads(data)) is not None
    assert instants(decode(data)) == instants(_row(Event.from_wire(data)))


@pytest.mark.parametrize(
    "over",
    [
        {"user_id": _DROP},  # valid (defaults), but not what the gateway writes
        {"metadata": _DROP},
        {"ts": "2026-03-15 10:00:00+00:00"},  # valid for pydantic, not the gateway's form
        {"ts": 1_773_568_800_000},
    ],
)
def test_other_valid_messages_are_left_to_pydantic(over: dict[str, Any]) -> None:
    data = wire(**over)
    assert _plain_row(orjson.loads(data)) is None
    assert decode(data) == _row(Event.from_wire(data))


def instants(row: EventRow) -> tuple[Any, ...]:
    """The row with its two times as datetimes: the quick path keeps the wire's own text."""
    return (*row[:2], datetime.fromisoformat(row[2]), *row[3:11], datetime.fromisoformat(row[11]))


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b"[1, 2]",
        wire(role="robot"),
        wire(type="thought"),
        wire(text=5),
        wire(metadata=[1]),
        wire(ts="2026-13-01T00:00:00+00:00"),
        wire(received_at=None),
        wire(colour="red"),
        wire(tenant=_DROP),
    ],
)
def test_poison_is_still_refused_by_pydantic(data: bytes) -> None:
    with pytest.raises(ValidationError):
        decode(data)


TRICKY_TEXTS = [
    "",
    "plain",
    "back\\slash \\N and \\\\ two",
    "new\nline, carriage\rreturn, tab\there, crlf\r\n",
    "\\n is not a newline",
    "ünïcödé 😀 \u2028 \x7f \x1f",
    "\\.",  # COPY's old end-of-data marker, on its own line
]


async def test_rows_read_back_as_written(pg_dsn: str) -> None:
    rows: list[EventRow] = []
    for i, text in enumerate(TRICKY_TEXTS):
        for path in ("batch", "alone"):  # the same row in one big COPY, and in one of its own
            rows.append(
                (
                    "t\\enant",
                    f"{path}-{i}",
                    "2026-03-15T12:00:00.5+02:00",
                    "proj\tect",
                    "agent",
                    "sess\\ion",
                    None if i % 2 else f"user\n{i}",
                    "tool",
                    "tool_result",
                    text,
                    orjson.dumps({"k": text, "n": i}).decode(),
                    "2026-03-15T10:00:01+00:00",
                )
            )
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        async with conn.transaction():
            await insert_rows(conn, [r for r in rows if r[1].startswith("batch")])
            for row in rows:
                if row[1].startswith("alone"):
                    await insert_rows(conn, [row])
        cur = await conn.execute(
            "SELECT event_id, tenant, ts, project_id, session_id, user_id, text, metadata::text,"
            " received_at FROM events ORDER BY event_id"
        )
        stored = {r[0]: r[1:] for r in await cur.fetchall()}
    assert len(stored) == len(rows)
    for i in range(len(TRICKY_TEXTS)):
        quick, slow = stored[f"batch-{i}"], stored[f"alone-{i}"]
        assert quick == slow
        assert quick[5] == TRICKY_TEXTS[i]
        assert quick[0] == "t\\enant" and quick[2] == "proj\tect" and quick[3] == "sess\\ion"
        assert quick[4] == (None if i % 2 else f"user\n{i}")
        assert quick[1] == datetime(2026, 3, 15, 10, 0, 0, 500000, tzinfo=UTC)
