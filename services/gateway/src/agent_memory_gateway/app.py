"""The ingest gateway: validate, redact, publish to JetStream, answer 202 only once it is durable.

The 202 is a promise: every event it names is in JetStream (acknowledged by the stream), and the
event id is the JetStream message id, so a client that retries after a timeout never stores an
event twice. When NATS is away the answer is a quick 503 with ``Retry-After``, never a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import nats.errors
import nats.js.errors
from fastapi import FastAPI, Request

from agent_memory_common.errors import TransientError
from agent_memory_common.event import EventIn
from agent_memory_common.http import (
    ApiError,
    JSONBytesResponse,
    TenantResolver,
    error_responses,
    install_error_handlers,
)
from agent_memory_common.logs import get_logger
from agent_memory_common.natslink import NatsLink
from agent_memory_common.publisher import NoStreamError, Outgoing
from agent_memory_common.streams import ensure_pipeline
from agent_memory_common.subjects import event_subject, msg_id
from agent_memory_gateway.intake import normalise, parse_body, validate
from agent_memory_gateway.redaction import Redactor
from agent_memory_gateway.settings import Settings

log = get_logger(__name__)

_PUBLISH_ERRORS = (
    TransientError,
    TimeoutError,
    nats.errors.Error,
    nats.js.errors.Error,
)


class Gateway:
    """Composition root: settings, NATS link, redactor, and the readiness state."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.options = settings.gateway
        self.link = NatsLink(settings.nats_servers, name="agent-memory-gateway")
        self.redactor = Redactor(self.options.redact_extra, self.options.redact_disable)
        self.resolver = TenantResolver(settings.tokens)
        self.streams_ready = False
        self._setup_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
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

    def unavailable(self, reason: str) -> ApiError:
        return ApiError(
            503,
            "unavailable",
            f"event log temporarily unavailable ({reason}); retry with the same event ids",
            headers={"Retry-After": str(self.options.retry_after_s)},
        )

    async def read_body(self, request: Request) -> bytes:
        limit = self.options.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise ApiError(413, "body_too_large", f"body exceeds {limit} bytes", field="body")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ApiError(413, "body_too_large", f"body exceeds {limit} bytes", field="body")
            chunks.append(chunk)
        return b"".join(chunks)

    async def accept(self, tenant: str, body: bytes) -> dict[str, Any]:
        raw, batch = parse_body(body)
        items = validate(raw, batch, self.options)
        events = normalise(
            items, tenant=tenant, received_at=datetime.now(UTC), redactor=self.redactor
        )
        if not self.streams_ready:
            raise self.unavailable("JetStream streams not ready")
        outgoing = [
            Outgoing(
                event_subject(e.tenant, e.project_id), e.to_wire(), msg_id(e.tenant, e.event_id)
            )
            for e in events
        ]
        try:
            await self.link.require_publisher().publish(outgoing, self.options.publish_timeout_s)
        except NoStreamError:
            self.streams_ready = False  # the stream vanished (fresh NATS store): recreate it
            self._setup_task = asyncio.create_task(self._ensure_streams_forever())
            raise self.unavailable("stream missing, recreating") from None
        except _PUBLISH_ERRORS as exc:
            log.warning("gateway.publish_failed", error=repr(exc))
            raise self.unavailable("NATS did not acknowledge") from None
        return {"accepted": len(events), "event_ids": [e.event_id for e in events]}


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    gateway = Gateway(settings)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await gateway.start()
        try:
            yield
        finally:
            await gateway.stop()

    app = FastAPI(
        title="agent-memory ingest gateway",
        version="0.1.0",
        lifespan=lifespan,
        default_response_class=JSONBytesResponse,
    )
    app.state.gateway = gateway
    install_error_handlers(app)
    event_schema = EventIn.model_json_schema()

    @app.post(
        "/v1/events",
        status_code=202,
        summary="Record one event or a batch",
        responses=error_responses(400, 401, 413, 422, 503),
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
        tenant = gateway.resolver.tenant_for(request.headers.get("authorization"))
        body = await gateway.read_body(request)
        return JSONBytesResponse(await gateway.accept(tenant, body), status_code=202)

    @app.get("/healthz", summary="The process is alive")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/readyz", summary="NATS connected and streams in place", responses=error_responses(503)
    )
    async def readyz() -> dict[str, Any]:
        if not (gateway.link.connected and gateway.streams_ready):
            raise gateway.unavailable("not connected")
        return {"status": "ready"}

    return app
