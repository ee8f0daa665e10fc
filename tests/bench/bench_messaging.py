"""faststream against the custom plumbing, on one real nats-server, back to back in one process.

    .venv/bin/python -m tests.bench.bench_messaging [--messages 20000] [--rounds 2]

Measures the CPU of this process (``time.process_time``) per message, which moves much less than
wall time on a shared machine, for:

- publishing batches of 100 JetStream messages with a ``Nats-Msg-Id`` each and waiting for every
  ack: ``BatchPublisher`` versus faststream's ``NatsBroker.publish(..., stream=...)`` (the 100
  publishes of a batch awaited together, as the gateway must);
- draining a durable pull consumer in batches of up to 256 and acking each message:
  ``PullFeed`` + ``ack_all`` versus faststream's batch pull subscriber (``PullSub(batch=True)``,
  manual acks, ``NatsBatchMessage.ack``);
- the time from publishing one message into an idle consumer to its handler running (the
  latency of a lone message: faststream's batch subscriber waits for a full batch or its timeout).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import nats
from faststream import AckPolicy, Context
from faststream.nats import JStream, NatsBroker, PullSub
from faststream.nats.message import NatsBatchMessage

from agent_memory_common.bus.publisher import BatchPublisher, Outgoing
from agent_memory_common.bus.pull import PullFeed, ack_all
from agent_memory_common.bus.streams import ConsumerSpec, ensure_consumer, ensure_streams
from agent_memory_common.contracts.subjects import STREAM_EVENTS
from agent_memory_common.core.settings import CommonSettings
from agent_memory_embedded.servers import NatsServer, free_port

BATCH = 100
PULL_BATCH = 256
PAYLOAD = b"x" * 600


async def publish_custom(url: str, n: int, tag: str) -> float:
    nc = await nats.connect(url)
    pub = BatchPublisher(nc)
    batches = [
        [Outgoing("mem.events.t.p", PAYLOAD, f"{tag}/{b}/{i}") for i in range(BATCH)]
        for b in range(n // BATCH)
    ]
    t0 = time.process_time()
    for batch in batches:
        await pub.publish(batch, timeout=10)
    cpu = time.process_time() - t0
    await nc.close()
    return cpu / n * 1e6


async def publish_faststream(url: str, n: int, tag: str) -> float:
    broker = NatsBroker(url, logger=None)
    await broker.connect()
    t0 = time.process_time()
    for b in range(n // BATCH):
        await asyncio.gather(
            *(
                broker.publish(
                    PAYLOAD,
                    "mem.events.t.p",
                    headers={"Nats-Msg-Id": f"{tag}/{b}/{i}"},
                    stream=STREAM_EVENTS,
                    timeout=10,
                )
                for i in range(BATCH)
            )
        )
    cpu = time.process_time() - t0
    await broker.stop()
    return cpu / n * 1e6


async def pull_custom(url: str, durable: str, n: int) -> float:
    nc = await nats.connect(url)
    spec = ConsumerSpec(durable=durable, stream=STREAM_EVENTS, filter_subject="mem.events.>")
    await ensure_consumer(nc.jetstream(), spec)
    feed = PullFeed(nc, STREAM_EVENTS, durable, batch=PULL_BATCH, expires_s=5)
    await feed.start()
    got = 0
    t0 = time.process_time()
    while got < n:
        msgs = await feed.fetch(timeout=5)
        await ack_all(nc, msgs)
        got += len(msgs)
    cpu = time.process_time() - t0
    await feed.close()
    await nc.close()
    return cpu / n * 1e6


async def pull_faststream(url: str, durable: str, n: int) -> float:
    nc = await nats.connect(url)
    spec = ConsumerSpec(durable=durable, stream=STREAM_EVENTS, filter_subject="mem.events.>")
    await ensure_consumer(nc.jetstream(), spec)
    await nc.close()
    broker = NatsBroker(url, logger=None)
    done = asyncio.Event()
    got = 0

    @broker.subscriber(
        "mem.events.>",
        stream=JStream(STREAM_EVENTS, declare=False),
        durable=durable,
        pull_sub=PullSub(batch_size=PULL_BATCH, timeout=0.05, batch=True),
        ack_policy=AckPolicy.MANUAL,
    )
    async def handle(msg: NatsBatchMessage = Context("message")) -> None:  # noqa: B008
        nonlocal got
        await msg.ack()
        got += len(msg.raw_message)
        if got >= n:
            done.set()

    t0 = time.process_time()
    await broker.start()
    await done.wait()
    cpu = time.process_time() - t0
    await broker.stop()
    return cpu / n * 1e6


async def lone_latency_custom(url: str, durable: str, rounds: int) -> list[float]:
    nc = await nats.connect(url)
    js = nc.jetstream()
    spec = ConsumerSpec(durable, STREAM_EVENTS, f"mem.events.{durable}")
    await ensure_consumer(js, spec)
    feed = PullFeed(nc, STREAM_EVENTS, durable, batch=PULL_BATCH, expires_s=5)
    await feed.start()
    out = []
    for _ in range(rounds):
        await asyncio.sleep(0.1)
        t0 = time.perf_counter()
        await js.publish(f"mem.events.{durable}", b"x")
        msgs: list[object] = []
        while not msgs:
            msgs = await feed.fetch(timeout=5)  # type: ignore[assignment]
        out.append((time.perf_counter() - t0) * 1e3)
        await ack_all(nc, msgs)  # type: ignore[arg-type]
    await feed.close()
    await nc.close()
    return out


async def lone_latency_faststream(url: str, durable: str, rounds: int) -> list[float]:
    nc = await nats.connect(url)
    js = nc.jetstream()
    spec = ConsumerSpec(durable, STREAM_EVENTS, f"mem.events.{durable}")
    await ensure_consumer(js, spec)
    broker = NatsBroker(url, logger=None)
    arrived: asyncio.Queue[float] = asyncio.Queue()

    @broker.subscriber(
        f"mem.events.{durable}",
        stream=JStream(STREAM_EVENTS, declare=False),
        durable=durable,
        pull_sub=PullSub(batch_size=PULL_BATCH, timeout=1.0, batch=True),
        ack_policy=AckPolicy.MANUAL,
    )
    async def handle(msg: NatsBatchMessage = Context("message")) -> None:  # noqa: B008
        await msg.ack()
        arrived.put_nowait(time.perf_counter())

    await broker.start()
    out = []
    for _ in range(rounds):
        await asyncio.sleep(0.1)
        t0 = time.perf_counter()
        await js.publish(f"mem.events.{durable}", b"x")
        out.append((await arrived.get() - t0) * 1e3)
    await broker.stop()
    await nc.close()
    return out


async def main(messages: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = NatsServer(Path(tmp) / "nats", free_port(), Path(tmp) / "nats.log")
        server.start()
        try:
            nc = await nats.connect(server.url)
            await ensure_streams(nc.jetstream(), CommonSettings(nats_url=server.url))
            await nc.close()
            rows: dict[str, list[float]] = {}
            for r in range(rounds):
                for name, fn in (
                    ("publish, BatchPublisher", publish_custom),
                    ("publish, faststream broker", publish_faststream),
                ):
                    rows.setdefault(name, []).append(await fn(server.url, messages, f"{name}{r}"))
                for name, pfn in (
                    ("pull+ack, PullFeed", pull_custom),
                    ("pull+ack, faststream batch", pull_faststream),
                ):
                    durable = f"{'fs' if 'faststream' in name else 'pf'}{r}"
                    rows.setdefault(name, []).append(await pfn(server.url, durable, messages))
            print(f"CPU µs per message of this process, {messages:,} messages, {rounds} rounds")
            for name, values in rows.items():
                print(f"  {name:32s} " + "  ".join(f"{v:7.1f}" for v in values))
            lat_c = await lone_latency_custom(server.url, "lonepf", 20)
            lat_f = await lone_latency_faststream(server.url, "lonefs", 5)
            print("lone message, publish -> handler (ms, median / max)")
            print(f"  {'PullFeed':32s}  {statistics.median(lat_c):7.1f} / {max(lat_c):7.1f}")
            print(
                "  faststream batch (timeout 1 s)    "
                f"{statistics.median(lat_f):7.1f} / {max(lat_f):7.1f}"
            )
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main(args.messages, args.rounds))
