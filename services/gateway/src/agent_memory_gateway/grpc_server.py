"""``agent_memory.v1.IngestService``: the gRPC twin of ``POST /v1/events``, on the same Gateway.

Nothing here validates, redacts or publishes: each call becomes the JSON body that
``POST /v1/events`` would have received (``{"events": [...]}``, the proto's field names are the
JSON's) and goes through ``Gateway.accept``, so intake rules, redaction, bound keys, the
``Nats-Msg-Id`` idempotency and the "answered only once durable" promise are the HTTP ones by
construction. The credentials are the ``authorization: Bearer <key>`` metadata, through the same
``Authenticator``. An ``ApiError`` becomes a gRPC status (``STATUS``) whose details name the field
at fault, as ``events[1].role: ...``; its code and field also travel as trailing metadata
(``error``, ``field``, and ``retry-after`` on ``UNAVAILABLE``).

proto3 cannot tell an empty string or a zero enum from an absent one, so: an empty ``event_id``
is absent (a ULID is assigned), ``ROLE_UNSPECIFIED`` is a missing role (refused, naming
``role``), ``EVENT_TYPE_UNSPECIFIED`` is the default type (``message``). ``tenant`` and
``received_at`` are refused when set, exactly as in the JSON. ``metadata`` numbers arrive as
doubles (``google.protobuf.Struct``); a NaN or an infinity, which JSON cannot carry (``orjson``
would quietly write ``null``), is refused here, naming the event's ``metadata``.

``IngestEventStream`` takes the stream as one batch when the client closes it: the same limits
(``max_batch_events`` events, ``max_body_bytes`` in all) and one all-or-nothing answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from datetime import UTC
from typing import TYPE_CHECKING, Any, NoReturn

import grpc
import orjson
from google.protobuf.json_format import MessageToDict
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from agent_memory_common.auth.access import Principal
from agent_memory_common.core import tracing
from agent_memory_common.core.logs import get_logger
from agent_memory_common.core.metrics import EVENTS_REJECTED, INGEST_REQUESTS
from agent_memory_common.web.http import ApiError
from agent_memory_proto.v1 import event_pb2, event_pb2_grpc

if TYPE_CHECKING:
    from agent_memory_gateway.app import Gateway

log = get_logger(__name__)

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING

# the HTTP status of an ApiError -> the gRPC status of the same refusal
STATUS = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    422: grpc.StatusCode.INVALID_ARGUMENT,
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
    503: grpc.StatusCode.UNAVAILABLE,
}

_ROLES = {v: n.removeprefix("ROLE_").lower() for n, v in event_pb2.Role.items() if v}
_TYPES = {v: n.removeprefix("EVENT_TYPE_").lower() for n, v in event_pb2.EventType.items() if v}


def event_dict(event: event_pb2.Event, index: int = 0) -> dict[str, Any]:
    """The JSON object of ``POST /v1/events`` that says what ``event`` says (``index``: its
    place in the batch, for the field an error names)."""
    out: dict[str, Any] = {}
    if event.event_id:
        out["event_id"] = event.event_id
    if event.HasField("ts"):
        out["ts"] = _rfc3339(event.ts)
    if event.tenant:
        out["tenant"] = event.tenant  # never taken from the body: refused, naming the field
    out["project_id"] = event.project_id
    out["agent_id"] = event.agent_id
    out["session_id"] = event.session_id
    if event.HasField("user_id"):
        out["user_id"] = event.user_id
    if event.role:
        out["role"] = _ROLES.get(event.role, event.role)  # an unknown number: refused, named
    if event.type:
        out["type"] = _TYPES.get(event.type, event.type)
    out["text"] = event.text
    if event.HasField("metadata"):
        try:
            out["metadata"] = MessageToDict(event.metadata)
        except ValueError:  # a NaN or an infinity, which JSON cannot carry: refused, named
            raise ApiError(
                422,
                "validation_error",
                "metadata holds a number that is not finite (NaN or infinity)",
                field=f"events[{index}].metadata",
            ) from None
    if event.HasField("received_at"):
        out["received_at"] = _rfc3339(event.received_at)  # set by the gateway: refused
    return out


def _rfc3339(ts: Any) -> str:
    try:
        return str(ts.ToDatetime(tzinfo=UTC).isoformat())
    except (ValueError, OverflowError):  # out of datetime's range: the intake words the refusal
        return f"Timestamp(seconds={ts.seconds}, nanos={ts.nanos})"


def _details(err: ApiError) -> str:
    if err.field and not err.message.startswith(f"{err.field}:"):
        return f"{err.field}: {err.message}"
    return err.message


class IngestServicer(event_pb2_grpc.IngestServiceServicer):
    """Both RPCs: authenticate, turn the events into the JSON body, ``Gateway.accept``."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def IngestEvents(
        self, request: event_pb2.EventBatch, context: Any
    ) -> event_pb2.AcceptedResponse:
        try:
            principal = await self._principal(context)
            events = [event_dict(e, i) for i, e in enumerate(request.events)]
            return await self._accept(principal, events, context)
        except ApiError as err:
            await self._abort(context, err)

    async def IngestEventStream(
        self, request_iterator: Any, context: Any
    ) -> event_pb2.AcceptedResponse:
        try:
            principal = await self._principal(context)  # before any event is read, as HTTP
            events = [e async for e in self._bounded(request_iterator)]
            return await self._accept(principal, events, context)
        except ApiError as err:
            await self._abort(context, err)

    async def _bounded(
        self, stream: AsyncIterator[event_pb2.Event]
    ) -> AsyncIterator[dict[str, Any]]:
        """The stream's events, refused (413) as soon as there are too many or too many bytes."""
        options = self.gateway.options
        count = size = 0
        async for event in stream:
            count += 1
            size += event.ByteSize()
            if count > options.max_batch_events:
                raise ApiError(
                    413,
                    "batch_too_large",
                    f"more than {options.max_batch_events} events in one stream",
                    field="events",
                )
            if size > options.max_body_bytes:
                raise self.gateway.too_large()
            yield event_dict(event, count - 1)

    async def _principal(self, context: Any) -> Principal:
        authorization = None
        for key, value in context.invocation_metadata() or ():
            if key == "authorization":
                authorization = value if isinstance(value, str) else value.decode("latin-1")
        principal = await self.gateway.auth.principal(authorization)
        return principal.require("writer")

    async def _accept(
        self, principal: Principal, events: list[dict[str, Any]], context: Any
    ) -> event_pb2.AcceptedResponse:
        body = orjson.dumps({"events": events})
        if len(body) > self.gateway.options.max_body_bytes:
            raise self.gateway.too_large()
        accepted = await self.gateway.accept(
            principal, body, _trace_metadata(context), transport="grpc"
        )
        INGEST_REQUESTS.labels("202").inc()
        return event_pb2.AcceptedResponse(
            accepted=accepted["accepted"],
            event_ids=accepted["event_ids"],
            refused=accepted["refused"],
            refusals=[
                event_pb2.Refusal(event_id=r["event_id"], reason=r["reason"])
                for r in accepted["refusals"]
            ],
        )

    async def _abort(self, context: Any, err: ApiError) -> NoReturn:
        INGEST_REQUESTS.labels(str(err.status)).inc()
        EVENTS_REJECTED.labels(err.code).inc()
        trailing = [("error", err.code)]
        if err.field:
            trailing.append(("field", err.field))
        trailing += [(k.lower(), v) for k, v in (err.headers or {}).items() if k == "Retry-After"]
        code = STATUS.get(err.status, grpc.StatusCode.INTERNAL)
        await context.abort(code, _details(err), trailing_metadata=tuple(trailing))
        raise AssertionError("context.abort returned")  # pragma: no cover


def _trace_metadata(context: Any) -> dict[str, str] | None:
    """The client's W3C trace context (``traceparent``, ``tracestate`` metadata), if any."""
    if not tracing.enabled():
        return None
    return {
        key: value if isinstance(value, str) else value.decode("latin-1")
        for key, value in context.invocation_metadata() or ()
        if key in tracing.TRACE_HEADERS
    }


def _options(gateway: Gateway) -> Iterator[tuple[str, int]]:
    # one message holds at most a whole request body; grpc refuses more with RESOURCE_EXHAUSTED
    yield ("grpc.max_receive_message_length", gateway.options.max_body_bytes)


# the names a client may ask health of: the whole server ("") and the ingest service
INGEST_SERVICE = event_pb2.DESCRIPTOR.services_by_name["IngestService"].full_name
HEALTH_NAMES = ("", INGEST_SERVICE)
HEALTH_POLL_S = 1.0


class GrpcGateway:
    """The gRPC server: ``IngestService``, the standard health service (``grpc.health.v1``)
    and server reflection.

    Health says what ``GET /readyz`` says: SERVING while NATS is connected and the streams are
    in place, NOT_SERVING otherwise, so a gRPC load balancer or a Kubernetes ``grpc`` probe
    stops sending batches that would only be refused with UNAVAILABLE. Reflection lets
    ``grpcurl`` and other tools list and call the service without the proto file.
    """

    def __init__(self, gateway: Gateway, server: grpc.aio.Server) -> None:
        self.gateway = gateway
        self.server = server
        self.health = health.aio.HealthServicer()
        self._watch: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, gateway: Gateway) -> GrpcGateway | None:
        """Serve on ``AGENT_MEMORY_GATEWAY__GRPC_PORT`` (0: not at all)."""
        options = gateway.options
        if not options.grpc_port:
            return None
        server = grpc.aio.server(options=list(_options(gateway)))
        started = cls(gateway, server)
        event_pb2_grpc.add_IngestServiceServicer_to_server(IngestServicer(gateway), server)
        health_pb2_grpc.add_HealthServicer_to_server(started.health, server)
        reflection.enable_server_reflection(
            (INGEST_SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
        address = f"{options.host}:{options.grpc_port}"
        if server.add_insecure_port(address) == 0:  # older grpc answers 0 rather than raising
            raise RuntimeError(f"gRPC: cannot listen on {address}")
        await started._set_health()
        await server.start()
        started._watch = asyncio.create_task(started._follow_readiness(), name="grpc-health")
        log.info("gateway.grpc_listening", address=address)
        return started

    def ready(self) -> bool:
        return bool(self.gateway.link.connected and self.gateway.streams_ready)

    async def _set_health(self) -> None:
        status = SERVING if self.ready() else NOT_SERVING
        for name in HEALTH_NAMES:
            await self.health.set(name, status)

    async def _follow_readiness(self) -> None:
        """Readiness changes without a call (NATS goes away): poll it, as a probe would."""
        while True:
            await asyncio.sleep(HEALTH_POLL_S)
            await self._set_health()

    async def stop(self, grace: float) -> None:
        """NOT_SERVING first (clients move away), then the calls under way get ``grace``."""
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace=grace)
