"""BatchPublisher on a real nats-server: all acks counted, duplicates absorbed, a missing
stream reported as such."""

from __future__ import annotations

import nats
import pytest

from agent_memory_common.bus.publisher import BatchPublisher, NoStreamError, Outgoing
from agent_memory_common.bus.streams import ensure_streams
from agent_memory_common.contracts.subjects import STREAM_EVENTS
from agent_memory_common.core.settings import CommonSettings
from agent_memory_embedded.servers import NatsServer


async def test_batch_is_stored_once_even_when_published_twice(nats_server: NatsServer) -> None:
    nc = await nats.connect(nats_server.url)
    try:
        js = nc.jetstream()
        await ensure_streams(js, CommonSettings())
        publisher = BatchPublisher(nc)
        batch = [Outgoing("mem.events.t.p", f"m{i}".encode(), f"id-{i}") for i in range(500)]
        await publisher.publish(batch, timeout=10)
        await publisher.publish(batch, timeout=10)  # a retried request
        info = await js.stream_info(STREAM_EVENTS)
        assert info.state.messages == 500
    finally:
        await nc.close()


async def test_subject_without_stream_is_a_no_stream_error(nats_server: NatsServer) -> None:
    nc = await nats.connect(nats_server.url)
    try:
        with pytest.raises(NoStreamError):
            await BatchPublisher(nc).publish([Outgoing("nowhere.at.all", b"x", "1")], timeout=5)
    finally:
        await nc.close()
