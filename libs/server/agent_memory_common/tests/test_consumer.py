"""The consumer runner on a real nats-server and Postgres: ack after commit, idempotent redelivery,
poison to the dead-letter stream, recovery after Postgres refuses work, and the settle time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import replace

import nats
import psycopg
import pytest
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from psycopg import AsyncConnection

from agent_memory_common.bus.consumer import ConsumerRunner, Publication
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.streams import ConsumerSpec, ensure_streams
from agent_memory_common.contracts.subjects import STREAM_DLQ, STREAM_EVENTS
from agent_memory_common.core.errors import PoisonMessageError
from agent_memory_common.core.settings import CommonSettings
from agent_memory_common.db.postgres import make_pool
from agent_memory_embedded.servers import NatsServer

SPEC = ConsumerSpec(
    durable="test-consumer", stream=STREAM_EVENTS, filter_subject="mem.events.>", batch_size=10
)


async def _setup(nats_url: str, dsn: str) -> None:
    nc = await nats.connect(nats_url)
    await ensure_streams(nc.jetstream(), CommonSettings(nats_url=nats_url, pg_dsn=dsn))
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        await conn.execute("CREATE TABLE seen (msg_id text PRIMARY KEY, n int NOT NULL DEFAULT 1)")
        await conn.commit()
    for i in range(25):
        body = b"poison" if i == 7 else f"m{i}".encode()
        await nc.jetstream().publish("mem.events.t.p", body, headers={"Nats-Msg-Id": f"m{i}"})
    await nc.close()


async def handler(conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
    for msg in msgs:
        if msg.data == b"poison":
            raise PoisonMessageError("cannot parse")
        # idempotent on its natural key, as every service's handler is
        await conn.execute(
            "INSERT INTO seen (msg_id) VALUES (%s) ON CONFLICT (msg_id) DO NOTHING",
            (msg.data.decode(),),
        )
    return []


async def _run_until(runner: ConsumerRunner, done: int, timeout: float = 30) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(runner.run(stop))
    try:
        async with asyncio.timeout(timeout):
            while runner.processed < done:
                await asyncio.sleep(0.05)
    finally:
        stop.set()
        await task


async def test_runner_stores_each_message_once_and_dead_letters_poison(
    nats_server: NatsServer, pg_dsn: str
) -> None:
    await _setup(nats_server.url, pg_dsn)
    link = NatsLink([nats_server.url], name="t")
    await link.start(wait=5)
    pool = make_pool(pg_dsn)
    await pool.open()
    try:
        await _run_until(ConsumerRunner(link, pool, SPEC, handler), done=24)
        # replaying every message (as after a crash before the ack) changes nothing
        js = link.require_js()
        await js.delete_consumer(STREAM_EVENTS, SPEC.durable)
        await _run_until(ConsumerRunner(link, pool, SPEC, handler), done=24)
        dlq = await js.stream_info(STREAM_DLQ)
        assert dlq.state.messages == 2  # the poison message, once per run
    finally:
        await pool.close()
        await link.close()
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute("SELECT count(*), max(n) FROM seen").fetchone()
    assert rows == (24, 1)


async def test_runner_naks_while_postgres_refuses_and_catches_up(
    nats_server: NatsServer, pg_dsn: str
) -> None:
    await _setup(nats_server.url, pg_dsn)
    link = NatsLink([nats_server.url], name="t")
    await link.start(wait=5)
    pool = make_pool(pg_dsn)
    await pool.open()
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute("ALTER TABLE seen ADD CONSTRAINT refuse CHECK (n < 0) NOT VALID")
        runner = ConsumerRunner(link, pool, SPEC, handler)
        stop = asyncio.Event()
        task = asyncio.create_task(runner.run(stop))
        await asyncio.sleep(2)
        assert runner.processed == 0  # every attempt failed and was nak'ed, nothing acked
        admin.execute("ALTER TABLE seen DROP CONSTRAINT refuse")
        try:
            async with asyncio.timeout(60):
                while runner.processed < 24:
                    await asyncio.sleep(0.1)
        finally:
            stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await pool.close()
            await link.close()
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM seen").fetchone() == (24,)


async def test_settle_waits_for_the_input_to_pause_then_handles_the_burst_at_once(
    nats_server: NatsServer, pg_dsn: str
) -> None:
    """A burst that arrives in pieces is one batch when the runner waits for a pause in the
    input (the recorder's settle time), and as many batches as pieces when it does not."""
    link = NatsLink([nats_server.url], name="t")
    await link.start(wait=5)
    await ensure_streams(link.require_js(), CommonSettings(nats_url=nats_server.url))
    pool = make_pool(pg_dsn)
    await pool.open()
    sizes: list[int] = []

    async def count(conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        sizes.append(len(msgs))
        return []

    async def burst(js: JetStreamContext, subject: str) -> None:
        for piece in range(3):  # three pieces 30 ms apart: one burst
            for i in range(5):
                await js.publish(subject, b"x", headers={"Nats-Msg-Id": f"{subject}/{piece}/{i}"})
            await asyncio.sleep(0.03)

    try:
        for settle, durable in ((0.1, "settled"), (0.0, "at-once")):
            sizes.clear()
            spec = replace(
                SPEC,
                durable=durable,
                filter_subject=f"mem.events.{durable}.>",
                batch_size=50,
                settle_s=settle,
                linger_s=1.0,
            )
            runner = ConsumerRunner(link, pool, spec, count)
            stop = asyncio.Event()
            task = asyncio.create_task(runner.run(stop))
            await asyncio.sleep(0.3)  # subscribed, its pull request open
            await burst(link.require_js(), f"mem.events.{durable}.p")
            async with asyncio.timeout(10):
                while runner.processed < 15:
                    await asyncio.sleep(0.02)
            stop.set()
            await task
            if settle:
                assert sizes == [15]
            else:  # handled as it came: at least one batch per piece
                assert sum(sizes) == 15 and len(sizes) >= 3, sizes
    finally:
        await pool.close()
        await link.close()


class Overlapping:
    """A handler that notes how many batches it handles at once; a batch waits (up to a
    few seconds) for a second one to start, so two workers cannot miss each other."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.two = asyncio.Event()

    async def __call__(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        self.now += 1
        self.most = max(self.most, self.now)
        if self.now >= 2:
            self.two.set()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.two.wait(), 5)
            return await handler(conn, msgs)
        finally:
            self.now -= 1


async def test_two_workers_handle_two_batches_at_once_and_each_message_once(
    nats_server: NatsServer, pg_dsn: str
) -> None:
    await _setup(nats_server.url, pg_dsn)
    link = NatsLink([nats_server.url], name="t")
    await link.start(wait=5)
    pool = make_pool(pg_dsn)
    await pool.open()
    overlapping = Overlapping()
    try:
        runner = ConsumerRunner(link, pool, SPEC, overlapping, workers=2)
        await _run_until(runner, done=24)
    finally:
        await pool.close()
        await link.close()
    assert overlapping.most == 2
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*), max(n) FROM seen").fetchone() == (24, 1)


def test_a_runner_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="workers"):
        ConsumerRunner(NatsLink(["nats://127.0.0.1:1"], name="t"), None, SPEC, handler, workers=0)  # type: ignore[arg-type]
