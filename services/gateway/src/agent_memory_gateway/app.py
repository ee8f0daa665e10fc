"""The ingest gateway: validate, redact, publish to JetStream, answer 202 only once it is durable.

The 202 is a promise: every event it names is in JetStream (acknowledged by the stream), and the
event id is the JetStream message id, so a client that retries after a timeout never stores an
event twice. When NATS is away the answer is a quick 503 with ``Retry-After``, never a hang.

``POST /v1/events`` is the hot path (capture must never block an agent), so it is answered by a
plain ASGI front door, ``IngestFrontDoor``, ahead of FastAPI's exception handling, routing and
dependency machinery, which cost ~75 µs per request for nothing this endpoint uses. It is
installed as the outermost user middleware, so FastAPI's server-error handler still turns an
unexpected exception into a logged 500. The FastAPI route stays for the OpenAPI document and runs
the very same ``Gateway.accept``, and so does gRPC's ``IngestService`` (``grpc_server.py``), served
from the same process on its own port.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Mapping,
    MutableMapping,
    Sequence,
)
from datetime import UTC, datetime
from typing import Any

import nats.errors
import nats.js.errors
import orjson
from fastapi import Depends, FastAPI, Request

from agent_memory_api.common import Health, Ready
from agent_memory_api.events import Accepted, Refusal
from agent_memory_common.auth.access import (
    PUBLIC,
    WRITE,
    Authenticator,
    Principal,
    authorize,
    caller,
    install_http_guards,
)
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.publisher import NoStreamError, Outgoing
from agent_memory_common.bus.streams import ensure_pipeline
from agent_memory_common.contracts.event import EventIn
from agent_memory_common.contracts.subjects import event_subject, msg_id
from agent_memory_common.core import tracing
from agent_memory_common.core.errors import TransientError
from agent_memory_common.core.logs import get_logger
from agent_memory_common.core.metrics import (
    EVENTS_ACCEPTED,
    EVENTS_REFUSED,
    EVENTS_REJECTED,
    INGEST_REQUESTS,
    PUBLISH_SECONDS,
    HttpMetrics,
)
from agent_memory_common.db.postgres import make_pool
from agent_memory_common.redaction.engine import Redactor
from agent_memory_common.web.apidocs import install_api_docs
from agent_memory_common.web.http import (
    ApiError,
    JSONBytesResponse,
    error_responses,
    install_error_handlers,
    reject_unknown_query_parameters,
)
from agent_memory_gateway.grpc_server import GrpcGateway
from agent_memory_gateway.intake import Prepared, prepare
from agent_memory_gateway.settings import Settings
from agent_memory_gateway.store import Tombstones

log = get_logger(__name__)

_PUBLISH_ERRORS = (
    TransientError,
    TimeoutError,
    nats.errors.Error,
    nats.js.errors.Error,
)


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Gateway:
    """Composition root: settings, NATS link, redactor, and the readiness state."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.options = settings.gateway
        self.link = NatsLink(settings.nats_servers, name="agent-memory-gateway")
        self.redactor = Redactor(self.options.redact_extra, self.options.redact_disable)
        # Postgres answers two questions: an API key (only when one is presented) and which
        # event ids of a batch were erased (``store.Tombstones``, bounded: ingest never waits
        # on Postgres longer than ``tombstone_timeout_s``). min_size 0: nothing is opened
        # before the first request.
        self.pool = make_pool(settings.pg_dsn, min_size=0, max_size=4)
        self.tombstones = Tombstones(
            self.pool,
            timeout_s=self.options.tombstone_timeout_s,
            retry_s=self.options.tombstone_retry_s,
        )
        self.auth = Authenticator(
            settings.tokens,
            self.pool,
            cache_s=settings.key_cache_s,
            lookup_timeout_s=settings.key_lookup_timeout_s,
            stale_s=settings.key_stale_s,
        )
        self.streams_ready = False
        self._setup_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.pool.open()
        await self.link.start(wait=5)
        self._setup_task = asyncio.create_task(self._ensure_streams_forever())

    async def _ensure_streams_forever(self) -> None:
        while not self.streams_ready:
            try:
                await self.link.wait_connected(timeout=5)
                await ensure_pipeline(self.link.require_js(), self.settings)
                self.streams_ready = True
                log.info("gateway.streams_ready")
            except _PUBLISH_ERRORS as exc:
                log.warning("gateway.streams_not_ready", error=str(exc))
                await asyncio.sleep(1)

    async def stop(self) -> None:
        if self._setup_task is not None:
            self._setup_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._setup_task
        await self.link.close()
        await self.pool.close()

    def unavailable(self, reason: str) -> ApiError:
        return ApiError(
            503,
            "unavailable",
            f"event log temporarily unavailable ({reason}); retry with the same event ids",
            headers={"Retry-After": str(self.options.retry_after_s)},
        )

    def too_large(self) -> ApiError:
        limit = self.options.max_body_bytes
        return ApiError(413, "body_too_large", f"body exceeds {limit} bytes", field="body")

    def check_declared_length(self, declared: str | bytes | None) -> None:
        """Refuse a body announced as too large before reading any of it."""
        limit = self.options.max_body_bytes
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise self.too_large()

    async def read_body(self, request: Request) -> bytes:
        self.check_declared_length(request.headers.get("content-length"))
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.options.max_body_bytes:
                raise self.too_large()
            chunks.append(chunk)
        return b"".join(chunks)

    async def accept(
        self,
        principal: Principal,
        body: bytes,
        trace: Mapping[str, str] | None = None,
        *,
        transport: str = "http",
    ) -> Accepted:
        """Validate, redact and publish ``body``'s events; the answer names their ids, and
        those refused because they were erased (not published: the recorder would drop them).

        With tracing on (``tracing.py``), the request is a span continuing the client's W3C
        context (``trace``: its ``traceparent`` and ``tracestate``), and every message published
        carries it to the consumers."""
        if tracing.enabled():
            with tracing.ingest_span(transport, trace):
                return await self._accept(principal, body)
        return await self._accept(principal, body)

    async def _accept(self, principal: Principal, body: bytes) -> Accepted:
        tenant = principal.tenant
        events = prepare(
            body,
            self.options,
            tenant=tenant,
            received_at=datetime.now(UTC),
            redactor=self.redactor,
            principal=principal,
        )
        if not self.streams_ready:
            raise self.unavailable("JetStream streams not ready")
        erased = await self.tombstones.erased(tenant, [e.event_id for e in events])
        refusals: list[Refusal] = []
        if erased:  # never stored again (the recorder would drop them): said, not published
            refusals = [{"event_id": e.event_id, "reason": "erased"} for e in events]
            refusals = [r for r in refusals if r["event_id"] in erased]
            events = [e for e in events if e.event_id not in erased]
            EVENTS_REFUSED.labels("erased").inc(len(refusals))
        if not events:
            return _answer(events, refusals)
        outgoing = [
            Outgoing(event_subject(tenant, e.project_id), e.wire, msg_id(tenant, e.event_id))
            for e in events
        ]
        started = time.perf_counter()
        try:
            await self.link.publish(outgoing, self.options.publish_timeout_s, hot=True)
        except NoStreamError:
            self.streams_ready = False  # the stream vanished (fresh NATS store): recreate it
            self._setup_task = asyncio.create_task(self._ensure_streams_forever())
            raise self.unavailable("stream missing, recreating") from None
        except _PUBLISH_ERRORS as exc:
            log.warning("gateway.publish_failed", error=repr(exc))
            raise self.unavailable("NATS did not acknowledge") from None
        PUBLISH_SECONDS.observe(time.perf_counter() - started)
        EVENTS_ACCEPTED.inc(len(events))
        return _answer(events, refusals)


def _answer(events: Sequence[Prepared], refusals: list[Refusal]) -> Accepted:
    """The 202's body (``agent_memory_api.events.Accepted``): what was made durable, and each
    event id refused with its reason."""
    return {
        "accepted": len(events),
        "event_ids": [e.event_id for e in events],
        "refused": len(refusals),
        "refusals": refusals,
    }


class _Disconnected(Exception):
    """The client went away before its body was read: there is no one to answer."""


class IngestFrontDoor:
    """Answers ``POST /v1/events`` in plain ASGI; passes every other request to FastAPI.

    Same contract as the FastAPI route: 401 before the body is read, 413 on a declared or
    actual body over the limit, the ``ApiError`` body shape for every error. An unexpected
    exception propagates to Starlette's server-error middleware (a logged 500), as before.
    """

    def __init__(self, app: ASGIApp, gateway: Gateway) -> None:
        self.app = app
        self.gateway = gateway

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/v1/events" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        authorization = None
        declared = None
        trace: dict[str, str] | None = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value.decode("latin-1")
            elif name == b"content-length":
                declared = value
            elif name == b"traceparent" or name == b"tracestate":
                trace = trace or {}
                trace[name.decode()] = value.decode("latin-1")
        gateway = self.gateway
        headers: dict[str, str] | None = None
        try:
            principal = (await gateway.auth.principal(authorization)).require("writer")
            gateway.check_declared_length(declared)
            body = await self._read_body(receive)
            status, payload = 202, orjson.dumps(await gateway.accept(principal, body, trace))
        except ApiError as exc:
            status, payload, headers = exc.status, orjson.dumps(exc.body()), exc.headers
            EVENTS_REJECTED.labels(exc.code).inc()
        except _Disconnected:
            return
        INGEST_REQUESTS.labels(str(status)).inc()
        raw_headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
        ]
        if headers:
            raw_headers += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        await send({"type": "http.response.start", "status": status, "headers": raw_headers})
        await send({"type": "http.response.body", "body": payload})

    async def _read_body(self, receive: Receive) -> bytes:
        limit = self.gateway.options.max_body_bytes
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > limit:
                    raise self.gateway.too_large()
                chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    gateway = Gateway(settings)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        tracing.configure("gateway", settings.otlp_endpoint)
        await gateway.start()
        try:
            grpc_server = await GrpcGateway.start(gateway)  # IngestService, beside HTTP
            try:
                yield
            finally:
                if grpc_server is not None:
                    await grpc_server.stop(grace=settings.gateway.publish_timeout_s)
        finally:
            await gateway.stop()
            await asyncio.to_thread(tracing.shutdown)  # the last spans; never longer than 5 s

    app = FastAPI(
        title="agent-memory ingest gateway",
        dependencies=[Depends(reject_unknown_query_parameters), Depends(authorize)],
        version="0.1.0",
        docs_url=None,  # install_api_docs: /docs and /redoc from local files
        redoc_url=None,
        lifespan=lifespan,
        default_response_class=JSONBytesResponse,
    )
    app.state.gateway = gateway
    app.state.auth = gateway.auth
    install_error_handlers(app)
    install_api_docs(app)
    app.add_middleware(IngestFrontDoor, gateway=gateway)
    # a foreign Host, a browser's cross-site write, an address with too many failed keys, an
    # unauthenticated or oversized body: refused before the front door reads it
    install_http_guards(app, settings, max_body_bytes=settings.gateway.max_body_bytes)
    # outermost: every answer is counted and timed; GET /metrics is served here
    app.add_middleware(HttpMetrics, service="gateway")
    event_schema = EventIn.model_json_schema()

    @app.post(
        "/v1/events",
        status_code=202,
        response_model=Accepted,
        summary="Record one event or a batch",
        responses=error_responses(400, 401, 403, 413, 422, 503),
        dependencies=[WRITE],
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "oneOf": [
                                event_schema,
                                {
                                    "type": "object",
                                    "properties": {
                                        "events": {"type": "array", "items": event_schema}
                                    },
                                    "required": ["events"],
                                },
                            ]
                        }
                    }
                },
            }
        },
    )
    async def post_events(request: Request) -> JSONBytesResponse:
        """Answers 202 only after JetStream has acknowledged every event of the request."""
        # IngestFrontDoor answers this path before FastAPI sees it; this body documents the
        # route and serves it the same way when the app runs without the front door.
        principal = await caller(request)
        body = await gateway.read_body(request)
        trace = {k: v for k, v in request.headers.items() if k in tracing.TRACE_HEADERS}
        return JSONBytesResponse(await gateway.accept(principal, body, trace), status_code=202)

    @app.get(
        "/healthz", summary="The process is alive", response_model=Health, dependencies=[PUBLIC]
    )
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/readyz",
        summary="NATS connected and streams in place",
        response_model=Ready,
        responses=error_responses(503),
        dependencies=[PUBLIC],
    )
    async def readyz() -> dict[str, Any]:
        if not (gateway.link.connected and gateway.streams_ready):
            raise gateway.unavailable("not connected")
        return {"status": "ready"}

    return app
