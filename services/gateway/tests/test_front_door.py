"""The plain-ASGI ``POST /v1/events`` and its one-write publish, on a real gateway and nats-server.

What the other suites do not reach: a body with no declared length that grows past the limit,
and what lands in JetStream: the wire JSON and the ``Nats-Msg-Id`` header, both for ids the
gateway frames itself and for ids it leaves to nats-py (surrounding blanks, which nats-py trims).
"""

from __future__ import annotations

from collections.abc import Iterator
from email.header import Header, decode_header
from pathlib import Path

import httpx
import nats
import pytest

from agent_memory_common.bus.publisher import BatchPublisher, Outgoing
from agent_memory_common.bus.streams import ensure_streams
from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.subjects import STREAM_EVENTS
from agent_memory_common.core.settings import CommonSettings
from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.helpers import make_event
from tests.stack import Stack, make_stack

LIMIT = 64 * 1024


@pytest.fixture
def gateway(nats_server: NatsServer, pg_dsn: str, tmp_path: Path) -> Iterator[Stack]:
    s = make_stack(nats_server, pg_dsn, tmp_path, AGENT_MEMORY_GATEWAY__MAX_BODY_BYTES=str(LIMIT))
    try:
        s.start("gateway")
        yield s
    finally:
        s.stop()


def test_a_body_without_length_is_cut_off_at_the_limit(gateway: Stack) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"events": ['
        for _ in range(LIMIT // 1024 + 2):
            yield b" " * 1024
        yield b"]}"

    r = plain_http.post(
        f"{gateway.gateway_url}/v1/events",
        content=chunks(),  # streamed: chunked transfer encoding, no content-length
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413, r.text
    assert r.json()["field"] == "body"
    assert r.headers["content-type"] == "application/json"


def _text(header: object) -> str:
    """nats-py parses headers with the email parser: a non-ASCII value comes back as raw
    UTF-8 bytes wrapped in an ``email.header.Header``."""
    if isinstance(header, str):
        return header
    assert isinstance(header, Header), header
    parts = decode_header(header)
    return b"".join(p if isinstance(p, bytes) else p.encode() for p, _ in parts).decode()


async def _stored(url: str) -> list[tuple[str, bytes]]:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        count = (await js.stream_info(STREAM_EVENTS)).state.messages
        out = []
        for seq in range(1, count + 1):
            msg = await js.get_msg(STREAM_EVENTS, seq)
            out.append((_text((msg.headers or {}).get("Nats-Msg-Id", "")), msg.data or b""))
        return out
    finally:
        await nc.close()


async def test_jetstream_gets_the_wire_json_and_message_ids_once(gateway: Stack) -> None:
    events = [make_event(i) for i in range(5)]
    events.append(make_event(5, event_id="unicode-ü-😀", text="password=hunter2xyz"))
    spaced = make_event(6, event_id=" trimmed by nats-py ")  # left to Client.publish
    url = f"{gateway.gateway_url}/v1/events"
    async with httpx.AsyncClient() as http:
        first = await http.post(url, json={"events": events})  # framed by the gateway
        assert first.status_code == 202, first.text
        assert first.headers["content-type"] == "application/json"
        assert first.json() == {
            "accepted": 6,
            "event_ids": [e["event_id"] for e in events],
            "refused": 0,
            "refusals": [],
        }
        for _ in range(2):  # retries, through Client.publish: stored once all the same
            again = await http.post(url, json={"events": [*events, spaced]})
            assert again.status_code == 202, again.text

    stored = await _stored(gateway.nats.url)
    assert len(stored) == 7
    by_id = {e["event_id"]: e for e in [*events, spaced]}
    for header, data in stored:
        event = Event.from_wire(data)
        assert header == f"default/{event.event_id}".strip()
        sent = by_id[event.event_id]
        assert (event.project_id, event.session_id, event.role) == (
            sent["project_id"],
            sent["session_id"],
            sent["role"],
        )
        assert int(event.ts.timestamp() * 1000) == sent["ts"]
    redacted = Event.from_wire(stored[5][1])
    assert redacted.event_id == "unicode-ü-😀" and "hunter2xyz" not in redacted.text
    assert redacted.metadata["_redactions"] == {"password": 1}


async def test_plain_batches_are_framed_here_and_odd_ids_left_to_nats_py(
    nats_server: NatsServer,
) -> None:
    nc = await nats.connect(nats_server.url)
    try:
        await ensure_streams(nc.jetstream(), CommonSettings())
        publisher = BatchPublisher(nc)
        plain = [Outgoing("mem.events.t.p", b"a", "t/1"), Outgoing("mem.events.t.p", b"b", "t/ü")]
        assert await publisher._send_framed(plain, nc.new_inbox())
        for odd in (" t/2", "t/3\r\nX-Injected: 1", "t/4 ", ""):
            assert not await publisher._send_framed([Outgoing("mem.events.t.p", b"c", odd)], "r")
        assert not await publisher._send_framed([Outgoing("mem.events t", b"d", "t/5")], "r")
        for name, value in (("traceparent", "x\r\nX-Injected: 1"), ("bad name", "v")):
            assert not await publisher._send_framed(plain, "r", {name: value})
        await publisher.publish([*plain, Outgoing("mem.events.t.p", b"c", " t/2 ")], timeout=10)
        stored = await _stored(nats_server.url)
        assert stored == [("t/1", b"a"), ("t/ü", b"b"), ("t/2", b"c")]
    finally:
        await nc.close()
