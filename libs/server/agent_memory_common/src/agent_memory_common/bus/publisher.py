"""Publish many messages to JetStream and wait for all their acks: through faststream's broker,
or cheaply on the hot paths.

``publish_through_broker`` publishes with faststream (``NatsBroker.publish(..., stream=...)``,
one JetStream publish per message, all of a batch awaited together), with the same
``Nats-Msg-Id`` de-duplication header and the same errors. It serves what is published rarely:
segments, TOC nodes, dead letters.

``BatchPublisher`` stays custom for the two paths that publish one message per event (the
gateway's ``mem.events``, the recorder's ``mem.recorded``): measured back to back in one process
on one nats-server (``tests/bench/bench_messaging.py``, batches of 100 messages of 600 bytes, 2
shared cores, 2026-11-25, three runs), faststream 0.7.8 cost 98-137 µs of CPU per message
against 12-16 µs here,
where the gateway spends ~45 µs per event in all (``make bench-ingest``).

nats-py's ``publish_async`` costs ~20 µs per message (a semaphore, a future, a callback and a
decoded ``PubAck`` each), which was a third of the gateway's CPU. Here one wildcard inbox
subscription per process receives every ack; a batch is one future and a counter, and an ack is
checked with a byte search instead of JSON decoding. Measured ~2x cheaper per message.

The messages of a batch also go out as one write: the ``HPUB`` frames are built here and handed
to the client's pending buffer in one piece, instead of one ``Client.publish`` each (subject and
header validation by regex, a header bytearray, a flush check). Measured again on 2026-11-25,
three rounds of 20,000 messages back to back in one process: 11.8-17.3 µs of CPU per message
framed here against 15.2-24.8 µs through ``Client.publish``, i.e. +3 to +8 µs on the gateway's
~45 µs per event. That, and ``pull.ack_all`` (one write for a batch's acks: +1 to +4 µs per
message with ``Msg.ack()`` each), is the one remaining use of private members of nats-py's
``Client`` (``_send_command``, ``_flush_pending``, ``_flush_queue``, all in ``write_raw``),
pinned by the lock and exercised by the publisher tests. When they are missing, when the client
is not plainly connected (reconnecting, draining), or when a subject or id needs nats-py's own
checks, the batch goes through ``Client.publish`` as before.

A batch succeeds only when JetStream acknowledged every message (a duplicate ack counts: the
message is stored). Any error ack, a "no responders" status (no stream for the subject) or a
timeout fails the whole batch; callers retry the whole batch, and message ids make that safe.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from faststream.exceptions import IncorrectState
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.errors import Error as NatsError
from nats.errors import NoRespondersError
from nats.js.errors import Error as JetStreamError
from nats.js.errors import NoStreamResponseError

from agent_memory_common.contracts.subjects import (
    STREAM_DLQ,
    STREAM_ERASURE,
    STREAM_EVENTS,
    STREAM_RECORDED,
    STREAM_SEGMENTS,
    STREAM_TOC,
)
from agent_memory_common.core.errors import TransientError

if TYPE_CHECKING:
    from faststream.nats import NatsBroker

MSG_ID = "Nats-Msg-Id"

# What Client.publish would send unchanged: a subject without blanks, an id that nats-py would
# neither trim nor have to fold (CR/LF), and both short enough to frame here.
_PLAIN_SUBJECT = re.compile(r"[^ \t\r\n]{1,1024}")
_PLAIN_ID = re.compile(r"[^\s](?:[^\r\n]{0,1022}[^\s])?")
# Further headers (the W3C trace context) framed here only when as plain.
_PLAIN_NAME = re.compile(r"[!-9;-~]{1,256}")
_PLAIN_VALUE = re.compile(r"[^\s](?:[^\r\n]{0,1022}[^\s])?")


class PublishError(TransientError):
    """JetStream refused or did not acknowledge a message of the batch."""


class NoStreamError(PublishError):
    """No stream listens on the subject (JetStream answered "no responders")."""


@dataclass
class _Batch:
    remaining: int
    done: asyncio.Future[None]
    errors: list[str] = field(default_factory=list)


class Outgoing(NamedTuple):
    """One message to publish; a tuple, built once per event (a frozen dataclass costs 3x)."""

    subject: str
    payload: bytes
    msg_id: str


class BatchPublisher:
    """Owns one ack inbox on a NATS connection; safe for concurrent batches."""

    def __init__(self, nc: Client) -> None:
        self._nc = nc
        self._prefix = nc.new_inbox()
        self._batches: dict[str, _Batch] = {}
        self._ids = itertools.count()
        self._sub: Subscription | None = None
        self._lock = asyncio.Lock()

    async def _ensure_subscribed(self) -> None:
        if self._sub is None:
            async with self._lock:
                if self._sub is None:
                    self._sub = await self._nc.subscribe(f"{self._prefix}.*", cb=self._on_ack)

    async def _on_ack(self, msg: Msg) -> None:
        batch = self._batches.get(msg.subject.rsplit(".", 1)[1])
        if batch is None or batch.done.done():
            return  # a late ack of a batch that already timed out
        data = msg.data
        if not data:
            status = (msg.headers or {}).get("Status", "")
            batch.errors.append("no stream for subject" if status == "503" else f"status {status}")
        elif b'"error"' in data:
            batch.errors.append(data.decode(errors="replace")[:300])
        batch.remaining -= 1
        if batch.remaining <= 0:
            batch.done.set_result(None)

    async def publish(
        self,
        messages: Sequence[Outgoing],
        timeout: float,  # noqa: ASYNC109
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Publish all and wait for every ack; raise ``PublishError`` otherwise.

        ``headers``: sent with every message beside its ``Nats-Msg-Id`` (the trace context)."""
        if not messages:
            return
        await self._ensure_subscribed()
        token = str(next(self._ids))
        batch = _Batch(remaining=len(messages), done=asyncio.get_running_loop().create_future())
        self._batches[token] = batch
        reply = f"{self._prefix}.{token}"
        try:
            if not await self._send_framed(messages, reply, headers):
                for m in messages:
                    await self._nc.publish(
                        m.subject,
                        m.payload,
                        reply=reply,
                        headers={**(headers or {}), MSG_ID: m.msg_id},
                    )
            try:
                await asyncio.wait_for(asyncio.shield(batch.done), timeout)
            except TimeoutError:
                raise PublishError(
                    f"{batch.remaining} of {len(messages)} messages not acknowledged in {timeout}s"
                ) from None
        finally:
            del self._batches[token]
        if batch.errors:
            if all(e == "no stream for subject" for e in batch.errors):
                raise NoStreamError(batch.errors[0])
            raise PublishError(batch.errors[0])

    async def _send_framed(
        self, messages: Sequence[Outgoing], reply: str, headers: Mapping[str, str] | None = None
    ) -> bool:
        """Queue the whole batch as one write; False when ``Client.publish`` must do it."""
        extra = _header_lines(headers) if headers else b""
        if extra is None:
            return False
        max_payload = self._nc.max_payload
        frames: list[bytes] = []
        size = 0
        reply_b = reply.encode()
        plain_subjects: set[str] = set()  # a batch repeats a few subjects: each checked once
        for subject, payload, mid in messages:
            if subject not in plain_subjects:
                if not _PLAIN_SUBJECT.fullmatch(subject):
                    return False
                plain_subjects.add(subject)
            if not _PLAIN_ID.fullmatch(mid) or len(payload) > max_payload:
                return False  # Client.publish trims or folds the id, or raises MaxPayloadError
            header = b"NATS/1.0\r\nNats-Msg-Id: %b\r\n%b\r\n" % (mid.encode(), extra)
            frames.append(
                b"HPUB %b %b %d %d\r\n%b%b\r\n"
                % (
                    subject.encode(),
                    reply_b,
                    len(header),
                    len(header) + len(payload),
                    header,
                    payload,
                )
            )
            size += len(payload)
        return await write_raw(self._nc, b"".join(frames), len(messages), size)


def _header_lines(headers: Mapping[str, str]) -> bytes | None:
    """``Name: value`` lines for every message of a batch; None when a name or value needs
    nats-py's own checks (a blank or colon in a name, a line break anywhere)."""
    lines = []
    for name, value in headers.items():
        if name == MSG_ID or not _PLAIN_NAME.fullmatch(name) or not _PLAIN_VALUE.fullmatch(value):
            return None
        lines.append(b"%b: %b\r\n" % (name.encode(), value.encode()))
    return b"".join(lines)


# The stream of each subject family, for faststream's JetStream publish (its ``stream`` argument
# makes it wait for the stream's ack and has the server check the subject belongs to it).
_STREAM_OF_PREFIX = {
    "mem.events.": STREAM_EVENTS,
    "mem.recorded.": STREAM_RECORDED,
    "mem.segments.": STREAM_SEGMENTS,
    "mem.toc.": STREAM_TOC,
    "mem.dlq.": STREAM_DLQ,
    "mem.erasure.": STREAM_ERASURE,
}


def stream_of(subject: str) -> str:
    for prefix, stream in _STREAM_OF_PREFIX.items():
        if subject.startswith(prefix):
            return stream
    raise NoStreamError(f"no stream for subject {subject}")


async def publish_through_broker(
    broker: NatsBroker,
    messages: Sequence[Outgoing],
    timeout: float,  # noqa: ASYNC109
    headers: Mapping[str, str] | None = None,
) -> None:
    """Publish each message with faststream, all at once, and wait for every JetStream ack.

    Same contract as ``BatchPublisher.publish``: ``NoStreamError`` when no stream listens,
    ``PublishError`` on any other refusal or a timeout; callers retry the whole batch.
    """

    async def one(m: Outgoing) -> None:
        await broker.publish(
            m.payload,
            m.subject,
            headers={**(headers or {}), MSG_ID: m.msg_id},
            stream=stream_of(m.subject),
            timeout=timeout,
        )

    try:
        await asyncio.gather(*(one(m) for m in messages))
    except (NoRespondersError, NoStreamResponseError) as exc:
        raise NoStreamError(f"no stream for subject: {exc!r}") from exc
    except IncorrectState:
        raise TransientError("NATS is not connected") from None
    except (TimeoutError, NatsError, JetStreamError) as exc:
        raise PublishError(repr(exc)[:300]) from exc


async def write_raw(nc: Client, frames: bytes, count: int, size: int) -> bool:
    """Hand ready-made protocol frames (``count`` messages, ``size`` payload bytes) to the
    client's pending buffer as one write; False, with nothing sent, when the client is not
    plainly connected (reconnecting, draining) or lacks the members used here: then the caller
    sends its messages through nats-py's public calls, which know how to buffer or refuse."""
    send_command = getattr(nc, "_send_command", None)
    flush_pending = getattr(nc, "_flush_pending", None)
    flush_queue = getattr(nc, "_flush_queue", None)
    if send_command is None or flush_pending is None or flush_queue is None:
        return False
    if not nc.is_connected or nc.is_draining:
        return False
    nc.stats["out_msgs"] += count
    nc.stats["out_bytes"] += size
    await send_command(frames)
    if flush_queue.empty():  # as Client.publish does: wake the flusher task once
        await flush_pending()
    return True
