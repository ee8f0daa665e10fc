"""PullFeed and ack_all on a real nats-server: a fetch hands out what has arrived without waiting
for a full batch, acks written in one buffer are each taken, messages left unhanded are naked at
close, and a deleted consumer is reported."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import ConsumerInfo

from agent_memory_common.bus.pull import ConsumerGoneError, PullFeed, ack_all
from agent_memory_common.bus.streams import ConsumerSpec, ensure_consumer, ensure_streams
from agent_memory_common.contracts.subjects import STREAM_EVENTS
from agent_memory_common.core.settings import CommonSettings
from agent_memory_embedded.servers import NatsServer

SPEC = ConsumerSpec(
    durable="pull-test", stream=STREAM_EVENTS, filter_subject="mem.events.>", ack_wait_s=60
)


@pytest.fixture
async def nc(nats_server: NatsServer) -> AsyncIterator[Client]:
    client = await nats.connect(nats_server.url)
    js = client.jetstream()
    await ensure_streams(js, CommonSettings(nats_url=nats_server.url))
    await ensure_consumer(js, SPEC)
    yield client
    await client.close()


async def _publish(js: JetStreamContext, first: int, count: int) -> None:
    for i in range(first, first + count):
        await js.publish("mem.events.t.p", f"m{i}".encode())


async def _settled(
    js: JetStreamContext, done: Callable[[ConsumerInfo], bool], timeout: float = 5
) -> ConsumerInfo:
    """The consumer's state once ``done`` holds: the server applies acks asynchronously."""
    async with asyncio.timeout(timeout):
        while True:
            info: ConsumerInfo = await js.consumer_info(SPEC.stream, SPEC.durable)
            if done(info):
                return info
            await asyncio.sleep(0.05)


def _feed(nc: Client, batch: int = 500, expires_s: float = 5.0) -> PullFeed:
    return PullFeed(nc, SPEC.stream, SPEC.durable, batch=batch, expires_s=expires_s)


async def test_fetch_returns_what_arrived_without_waiting_for_a_full_batch(nc: Client) -> None:
    js = nc.jetstream()
    feed = _feed(nc, batch=500)
    await feed.start()
    try:
        waiting = asyncio.create_task(feed.fetch(timeout=10))
        await asyncio.sleep(0.2)  # the pull request is open and nothing has arrived yet
        assert not waiting.done()
        started = time.monotonic()
        await _publish(js, 0, 3)
        msgs = await waiting
        assert time.monotonic() - started < 2  # not the 5 s the request stays open, nor 10
        got = [m.data for m in msgs]
        async with asyncio.timeout(5):  # the rest may come in more than one fetch
            while len(got) < 3:
                got += [m.data for m in await feed.fetch(timeout=2)]
        assert got == [b"m0", b"m1", b"m2"]
        # later messages arrive on the same open request
        await _publish(js, 3, 2)
        assert [m.data for m in await feed.fetch(timeout=5)][:1] == [b"m3"]
    finally:
        await feed.close()


async def test_fetch_never_hands_out_more_than_a_batch(nc: Client) -> None:
    await _publish(nc.jetstream(), 0, 25)
    feed = _feed(nc, batch=10)
    await feed.start()
    try:
        sizes: list[int] = []
        while sum(sizes) < 25:
            msgs = await feed.fetch(timeout=5)
            assert msgs, "messages were waiting"
            sizes.append(len(msgs))
            await ack_all(nc, msgs)
        assert max(sizes) <= 10
        assert sum(sizes) == 25
    finally:
        await feed.close()


async def test_ack_all_acknowledges_each_message(nc: Client) -> None:
    js = nc.jetstream()
    await _publish(js, 0, 300)
    feed = _feed(nc, batch=300)
    await feed.start()
    got: list[Msg] = []
    try:
        while len(got) < 300:
            got += await feed.fetch(timeout=5)
        await ack_all(nc, got[:200])  # not the last 100: the ack floor stops at 200
        info = await _settled(js, lambda i: i.num_ack_pending == 100)
        assert info.ack_floor is not None and info.ack_floor.stream_seq == 200
        await ack_all(nc, got[200:])
        info = await _settled(js, lambda i: i.num_ack_pending == 0)
        assert info.num_pending == 0
        assert info.ack_floor is not None and info.ack_floor.stream_seq == 300
    finally:
        await feed.close()


async def test_close_naks_what_was_delivered_but_not_handed_out(nc: Client) -> None:
    js = nc.jetstream()
    await _publish(js, 0, 20)
    feed = _feed(nc, batch=50)
    await feed.start()
    first = await feed.fetch(timeout=5)
    await ack_all(nc, first)
    await _publish(js, 20, 5)  # delivered on the open request; nobody fetches them
    await asyncio.sleep(0.3)
    await feed.close()
    # a new feed (a restarted replica) gets them at once, not after the 60 s ack wait
    other = _feed(nc, batch=100)
    await other.start()
    try:
        rest: list[bytes] = []
        async with asyncio.timeout(10):
            while len(first) + len(rest) < 25:
                msgs = await other.fetch(timeout=5)
                rest += [m.data for m in msgs]
                await ack_all(nc, msgs)
        assert sorted([m.data for m in first] + rest) == sorted(f"m{i}".encode() for i in range(25))
    finally:
        await other.close()


async def test_a_deleted_consumer_is_reported(nc: Client) -> None:
    js = nc.jetstream()
    feed = _feed(nc, batch=10)
    await feed.start()
    try:
        waiting = asyncio.create_task(feed.fetch(timeout=10))
        await asyncio.sleep(0.2)
        await js.delete_consumer(SPEC.stream, SPEC.durable)
        with pytest.raises(ConsumerGoneError):
            await waiting
    finally:
        await feed.close()


async def test_a_restarted_server_gets_a_new_pull_request_at_once(nats_server: NatsServer) -> None:
    # nats-py reconnects by itself; the pull request the old server held is gone with it, so
    # the feed must not wait for that request's expiry (30 s here) to ask again.
    nc = await nats.connect(nats_server.url, reconnect_time_wait=0.2, max_reconnect_attempts=-1)
    js = nc.jetstream()
    await ensure_streams(js, CommonSettings(nats_url=nats_server.url))
    await ensure_consumer(js, SPEC)
    feed = _feed(nc, batch=10, expires_s=30)
    await feed.start()
    try:
        assert await feed.fetch(timeout=0.3) == []  # the request is open, nothing to deliver
        nats_server.kill()  # no goodbye: a stopping server would end open requests itself
        nats_server.start(timeout=30)
        async with asyncio.timeout(10):
            while not nc.is_connected or nc.stats["reconnects"] == 0:
                await asyncio.sleep(0.05)
        await _publish(js, 0, 1)
        started = time.monotonic()
        got: list[Msg] = []
        async with asyncio.timeout(8):
            while not got:
                got = await feed.fetch(timeout=1)
        assert [m.data for m in got] == [b"m0"]
        assert time.monotonic() - started < 5
    finally:
        await feed.close()
        await nc.close()
