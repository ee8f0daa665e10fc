"""What one client may cost a service: the size of a request body, and failed authentications.

**Bodies.** A route parsed whatever it was sent: a 200 MB body to the query service was read
whole (+480 MB of memory) before its 422, and ``/healthz`` stalled meanwhile. ``BodyLimit``
answers ``413 body_too_large`` at once when ``Content-Length`` announces more than the limit,
and otherwise counts the bytes as the application reads them, so a chunked or lying body is cut
off at the limit too; nothing is buffered here. The gateway's ingest route enforces the same
rule in its own front door (``AGENT_MEMORY_GATEWAY__MAX_BODY_BYTES``).

**Failed authentication.** Every bad bearer token costs a Postgres lookup; 2,400 of them ran at
685 requests/s. ``FailedAuthLimiter`` keeps a token bucket per client address (in this
process, ``auth_fail_burst`` deep, refilled at ``auth_fail_per_s``): each refused key takes a
token, and an address with none left is answered ``429 too_many_failures`` with
``Retry-After`` instead of a lookup (``auth.access.AuthenticateFirst``). A key already known
good (in the key cache) is never refused, so a working client is not locked out by a
neighbour's guesses. The address is the socket's peer: behind a proxy every
client shares the proxy's bucket (put the limit in the proxy there, or trust its
``X-Forwarded-For`` with uvicorn's ``FORWARDED_ALLOW_IPS``). Replicas each keep their own.
"""

from __future__ import annotations

import math
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_memory_common.web.browser import send_error

PROBE_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
_MAX_ADDRESSES = 10_000


class _Answered(Exception):
    """The body went over the limit and the 413 is sent: nothing more to do."""


class BodyLimit:
    """ASGI middleware: 413 for a request body over ``max_bytes``, announced or streamed."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        for name, value in scope["headers"]:
            if name == b"content-length" and value.strip().isdigit() and int(value) > limit:
                await self._refuse(send)
                return
        received = 0
        started = answered = False

        async def counted() -> Message:
            nonlocal received, answered
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    if not started:
                        answered = True
                        await self._refuse(send)
                    raise _Answered
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if answered:  # the application's own answer to a body it never got
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _Answered:
            return
        except Exception:
            if answered:  # e.g. a framework's "error parsing the body" on our interruption
                return
            raise

    async def _refuse(self, send: Send) -> None:
        await send_error(
            send,
            413,
            "body_too_large",
            f"request body over {self.max_bytes} bytes",
            "body",
            [(b"connection", b"close")],
        )


class FailureBuckets:
    """A token bucket of failed authentications per client address, in this process.

    ``burst`` failures in a row are allowed, and ``per_s`` more every second after that; an
    address with no token left must wait (``wait``) before its next attempt is even looked at.
    """

    def __init__(self, burst: int = 20, per_s: float = 1.0) -> None:
        self.burst = float(burst)
        self.per_s = per_s
        self._buckets: dict[str, tuple[float, float]] = {}  # address -> (tokens, at)

    def _tokens(self, address: str, now: float) -> float:
        tokens, at = self._buckets.get(address, (self.burst, now))
        return min(self.burst, tokens + (now - at) * self.per_s)

    def wait(self, address: str | None) -> int | None:
        """Seconds ``address`` must wait before its next attempt; None: it may try now."""
        if address is None or address not in self._buckets:
            return None
        tokens = self._tokens(address, time.monotonic())
        if tokens >= 1.0:
            return None
        return max(1, math.ceil((1.0 - tokens) / self.per_s))

    def charge(self, address: str | None) -> None:
        """One failure of ``address``."""
        if address is None:
            return
        now = time.monotonic()
        tokens = self._tokens(address, now) - 1.0
        if len(self._buckets) >= _MAX_ADDRESSES and address not in self._buckets:
            self._forget_full(now)
        self._buckets[address] = (tokens, now)

    def _forget_full(self, now: float) -> None:
        """Drop the addresses whose bucket refilled (they carry no state), else all."""
        for address in [a for a in self._buckets if self._tokens(a, now) >= self.burst]:
            del self._buckets[address]
        if len(self._buckets) >= _MAX_ADDRESSES:
            self._buckets.clear()


def client_address(scope: Scope) -> str | None:
    client = scope.get("client")
    return str(client[0]) if client else None


async def send_too_many(send: Send, address: str, wait: int) -> None:
    """429 in the error shape, with ``Retry-After``."""
    await send_error(
        send,
        429,
        "too_many_failures",
        f"too many failed authentications from {address}; retry in {wait} s",
        "Authorization",
        [(b"retry-after", str(wait).encode())],
    )


class FailedAuthLimiter:
    """ASGI middleware for an app without an ``Authenticator`` (the dashboard, whose sign-in
    the query service checks): every 401 it answers takes a token of the client's bucket, and
    an address with none left is answered 429 (probes excepted)."""

    def __init__(self, app: ASGIApp, burst: int = 20, per_s: float = 1.0) -> None:
        self.app = app
        self.buckets = FailureBuckets(burst, per_s)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        address = client_address(scope) if scope["type"] == "http" else None
        if address is None or scope["path"] in PROBE_PATHS:
            await self.app(scope, receive, send)
            return
        wait = self.buckets.wait(address)
        if wait is not None:
            await send_too_many(send, address, wait)
            return

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                self.buckets.charge(address)
            await send(message)

        await self.app(scope, receive, watched)
