"""A durable pull consumer's messages in batches, and their acks in one write: the pull loop
that stays custom under faststream.

Every consumer is declared as a faststream JetStream batch pull subscriber (``consumer.py``):
that declaration gives the AsyncAPI document and the handler tests on ``TestNatsBroker``. In
production its messages are pulled here instead of by faststream's own loop, because that loop
does not meet two measured requirements (``tests/bench/bench_messaging.py``, one nats-server,
both back to back in one process, 2 shared cores, 2026-11-25):

- CPU: draining a durable consumer in batches of 256 and acking each message cost 69-94 µs of
  CPU per message with faststream 0.7.8 (``PullSub(batch=True)``, ``NatsBatchMessage.ack``:
  nats-py's ``fetch``, one ``Msg.ack()`` each, its middlewares and parser) against 15-16 µs
  here (three runs, 2,000 to 10,000 messages each). The recorder spends ~45 µs per event in
  all, and the segmenter and both indexers read every event too.
- Latency: faststream's batch subscriber keeps fetching until the batch is full or its timeout
  has passed, so a lone message waited ~900 ms at the median (timeout 1 s; once in five it
  waited 30 s, as long as the consumer's ack wait) against 0.9-1.6 ms here. A shorter timeout
  means a pull request per consumer every few milliseconds on an idle system, and the runner's
  "handle what has arrived now, or once the input pauses" (``settle_s``) cannot be expressed
  with it.

``PullFeed`` keeps one pull request open on the server and reads whatever has arrived: one wait
for the first message, then the rest of its inbox without waiting. The inbox is a plain nats-py
subscription with a callback that appends to a buffer of our own; ``close`` drains it. No
private member of nats-py is read here any more.

``ack_all`` writes the acks of a whole batch as one buffer through ``publisher.write_raw`` (the
one remaining use of nats-py's private members, shared with the publisher): one ``Msg.ack()``
each measured 1-4 µs more per message. Semantics are those of JetStream's explicit acks (every
message acked on its own, which is what lets replicas share a consumer): only the wire format is
batched. An ack is still sent only when the caller says so, after its commit. When the client is
reconnecting or lacks those members, the public calls are used instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Sequence

import orjson
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js.errors import Error as JetStreamError

from agent_memory_common.bus.publisher import write_raw

JS_API_PREFIX = "$JS.API"
# A pull request the server has not answered this long after it should have expired is gone
# (a reconnect, a server restart): a new one is sent.
EXPIRY_MARGIN_S = 1.0
MIN_REQUEST_GAP_S = 0.05
# Statuses after which the consumer must be looked up again (it was deleted or is not a pull
# consumer any more): the runner re-creates it and subscribes again.
_FATAL = ("consumer deleted", "consumer is push based")


class ConsumerGoneError(JetStreamError):
    """The server ended the pull request because the consumer no longer exists as we know it."""


class PullFeed:
    """Messages of one durable pull consumer, as they arrive, in batches.

    One pull request for ``batch`` messages stays open (``expires_s`` long); when it is used up
    or expires, the next ``fetch`` opens another. The server pushes messages as they are
    published, so a fetch returns as soon as anything is there, with everything that is there:
    never more than the request asked for, never a wait for a batch to fill.

    The inbox is an ordinary nats-py subscription with a callback that appends to a buffer of
    our own (no private member of nats-py is read), and ``close`` drains it (``drain``: UNSUB,
    flush, every message already sent handed to the callback).
    """

    def __init__(
        self, nc: Client, stream: str, durable: str, *, batch: int, expires_s: float
    ) -> None:
        self._nc = nc
        self._next_subject = f"{JS_API_PREFIX}.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self._request = orjson.dumps({"batch": batch, "expires": int(expires_s * 1e9)})
        self._batch = batch
        self._expires_s = expires_s
        self._inbox = nc.new_inbox()
        self._sub: Subscription | None = None
        self._buffer: deque[Msg] = deque()  # what the inbox received, not yet handed out
        self._arrived = asyncio.Event()
        self._remaining = 0  # messages the open pull request may still deliver
        self._open_until = 0.0  # monotonic time after which that request is surely over
        self._sent_at = 0.0
        self._reconnects = 0  # the client's reconnect count when the request was sent

    async def start(self) -> None:
        self._sub = await self._nc.subscribe(self._inbox, cb=self._on_msg)

    async def _on_msg(self, msg: Msg) -> None:
        self._buffer.append(msg)
        self._arrived.set()

    async def fetch(self, timeout: float, limit: int | None = None) -> list[Msg]:  # noqa: ASYNC109
        """What has arrived, at most ``limit`` (default ``batch``) messages; waits up to
        ``timeout`` for the first.

        Returns an empty list when nothing came; raises ``ConsumerGoneError`` when the server
        says the consumer is gone.
        """
        limit = self._batch if limit is None else max(limit, 1)
        msgs = self._take(None, limit)
        if not msgs:
            await self._ensure_request()
            first = await self._wait(timeout)
            if first is None:
                return []
            msgs = self._take(first, limit)
        return msgs

    async def _ensure_request(self) -> None:
        reconnects = self._nc.stats.get("reconnects", 0)
        if (
            self._remaining > 0
            and time.monotonic() < self._open_until
            and reconnects == self._reconnects  # a reconnect loses the server's open request
        ):
            return
        await self._nc.publish(self._next_subject, self._request, reply=self._inbox)
        self._reconnects = reconnects
        self._remaining = self._batch
        self._sent_at = time.monotonic()
        self._open_until = self._sent_at + self._expires_s + EXPIRY_MARGIN_S

    async def _wait(self, timeout: float) -> Msg | None:  # noqa: ASYNC109
        """The next message of the inbox, or None after ``timeout``."""
        assert self._sub is not None, "start() first"
        deadline = time.monotonic() + timeout
        buffer = self._buffer
        while True:
            while buffer:
                msg = buffer.popleft()
                if self._is_message(msg):
                    return msg
                if self._remaining == 0:  # the request ended with nothing: open the next one
                    # (not in a loop: a server refusing requests outright is asked again 20x/s)
                    gap = self._sent_at + MIN_REQUEST_GAP_S - time.monotonic()
                    await asyncio.sleep(max(gap, 0))
                    await self._ensure_request()
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), left)
            except TimeoutError:
                if not buffer:
                    return None

    def _take(self, first: Msg | None, limit: int) -> list[Msg]:
        """``first`` and the messages already waiting in the buffer, up to ``limit``."""
        msgs = [first] if first is not None else []
        buffer = self._buffer
        while len(msgs) < limit and buffer:
            msg = buffer.popleft()
            if self._is_message(msg):
                msgs.append(msg)
        return msgs

    def _is_message(self, msg: Msg) -> bool:
        """True for a stream message; accounts for it or for a status that ends the request."""
        if msg.reply:  # stream messages carry their ack subject; statuses never do
            self._remaining -= 1
            return True
        headers = msg.headers or {}
        status = headers.get("Status", "")
        if status == "100":  # idle heartbeat (never asked for): the request goes on
            return False
        description = headers.get("Description", "").lower()
        if status == "409" and description.startswith(_FATAL):
            raise ConsumerGoneError(description=description)
        # 404 no messages, 408 request expired, other 409s (max waiting, leadership change...):
        # this request is over, the next fetch opens another
        self._remaining = 0
        return False

    async def close(self) -> None:
        """Unsubscribe; messages delivered but not handed out are naked for a prompt redelivery.

        The server's interest in the inbox goes first, and only then the naks: a nak processed
        while the open pull request still had a listener would be redelivered on that request,
        into an inbox nobody reads, and wait out the ack wait. ``Subscription.drain`` sends the
        UNSUB, flushes (PING, PONG) and hands everything the server sent before it to the
        callback, so all of it is in the buffer to be naked.
        """
        sub = self._sub
        if sub is None:
            return
        self._sub = None
        with contextlib.suppress(Exception):  # reconnecting or closed: nothing more to do there
            await asyncio.wait_for(sub.drain(), 2)  # type: ignore[no-untyped-call]
        left = [m for m in self._buffer if m.reply]
        self._buffer.clear()
        for start in range(0, len(left), self._batch):
            await nak_all(self._nc, left[start : start + self._batch])
        with contextlib.suppress(Exception):
            await sub.unsubscribe()


async def ack_all(nc: Client, msgs: Sequence[Msg]) -> None:
    """Acknowledge each message (an explicit ack per message), all in one write."""
    await _reply_all(nc, msgs, b"")


async def nak_all(nc: Client, msgs: Sequence[Msg]) -> None:
    """Ask for the redelivery of each message now, all in one write; best effort."""
    with contextlib.suppress(Exception):
        await _reply_all(nc, msgs, Msg.Ack.Nak)


async def _reply_all(nc: Client, msgs: Sequence[Msg], payload: bytes) -> None:
    tail = b" %d\r\n%b\r\n" % (len(payload), payload)
    frames = b"".join(b"PUB " + m.reply.encode() + tail for m in msgs if m.reply)
    if await write_raw(nc, frames, len(msgs), len(payload) * len(msgs)):
        return
    for m in msgs:  # the client is reconnecting or lacks what write_raw needs: one at a time
        if payload:
            await m.nak()
        else:
            await m.ack()
