"""Optional OpenTelemetry traces: a span per ingest request at the gateway, its W3C trace
context carried in the NATS headers of what it publishes, and a child span per batch in each
consumer (whose follow-up messages carry the context on).

Off unless an OTLP endpoint is configured (``AGENT_MEMORY_OTLP_ENDPOINT``, or OpenTelemetry's
own ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT``): then no provider
exists and every call here returns at its first check, because the gateway's hot path spends
~45 µs per event in all and an idle tracer API (a no-op span, a context attach) would be paid on
every request for nothing. When on, spans leave through a ``BatchSpanProcessor`` (a background
thread) and OTLP over HTTP/protobuf: a collector that is down or slow costs dropped spans and a
logged warning, never a failed request or message.

A batch consumer handles many messages, from many requests, in one transaction; its span is a
child of the first message that carries a context and links to the others (OpenTelemetry's
convention for batch processing), so one request's trace shows each consumer that handled it
either as a child or as a link.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from opentelemetry.trace import Link, SpanKind, Tracer, get_current_span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agent_memory_common.core.logs import get_logger

if TYPE_CHECKING:
    from nats.aio.msg import Msg
    from opentelemetry.sdk.trace import TracerProvider

log = get_logger(__name__)

# W3C trace context only (``traceparent``, ``tracestate``): what a client may send and what any
# collector understands; the lower-case names are what travel in the NATS headers.
_PROPAGATOR = TraceContextTextMapPropagator()
TRACE_HEADERS = frozenset(_PROPAGATOR.fields)

_provider: TracerProvider | None = None
_tracer: Tracer | None = None


def traces_endpoint(otlp_endpoint: str = "") -> str | None:
    """Where spans are POSTed, or None when tracing is off.

    ``otlp_endpoint`` (the settings' ``otlp_endpoint``) and ``OTEL_EXPORTER_OTLP_ENDPOINT`` are
    a collector's base URL (``http://collector:4318``, traces go to ``/v1/traces``);
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is the full URL, as OpenTelemetry specifies.
    ``OTEL_SDK_DISABLED=true`` turns tracing off whatever is set.
    """
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if otlp_endpoint.strip():
        return otlp_endpoint.strip().rstrip("/") + "/v1/traces"
    full = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if full:
        return full
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return base.rstrip("/") + "/v1/traces" if base else None


def configure(service: str, otlp_endpoint: str = "") -> bool:
    """Start exporting this process's spans as ``agent-memory-<service>`` when an endpoint is
    configured; True if tracing is on. Idempotent; a failure to set up logs and leaves it off
    (tracing is never a reason for a service not to start)."""
    global _provider, _tracer
    if _provider is not None:
        return True
    url = traces_endpoint(otlp_endpoint)
    if url is None:
        return False
    try:  # imported here: a process without tracing never loads the SDK and the exporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(
            resource=Resource.create({SERVICE_NAME: f"agent-memory-{service}"})
        )
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    except Exception as exc:  # a bad OTEL_* variable, say: run untraced rather than not at all
        log.warning("tracing.setup_failed", error=repr(exc))
        return False
    _provider = provider
    _tracer = provider.get_tracer("agent_memory")
    log.info("tracing.enabled", endpoint=url, service=f"agent-memory-{service}")
    return True


def enabled() -> bool:
    return _tracer is not None


def shutdown(timeout_s: float = 5.0) -> None:
    """Export what is queued and turn tracing off again, waiting at most ``timeout_s``.

    The provider's shutdown exports the queue and waits out the exporter's retries (~10 s more
    when the collector is down; its timeouts cannot be passed down), so it runs on a daemon
    thread that a stopping service leaves behind after ``timeout_s``."""
    global _provider, _tracer
    provider, _provider, _tracer = _provider, None, None
    if provider is None:
        return

    def export_rest() -> None:
        with contextlib.suppress(Exception):  # the collector may be gone: the spans are lost
            provider.shutdown()

    worker = threading.Thread(target=export_rest, name="tracing-shutdown", daemon=True)
    worker.start()
    worker.join(timeout_s)


def inject() -> dict[str, str] | None:
    """The current span's W3C headers for a NATS message; None when there is nothing to carry
    (tracing off, or no span current)."""
    if _tracer is None or not get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier or None


@contextlib.contextmanager
def ingest_span(transport: str, carrier: Mapping[str, str] | None) -> Iterator[None]:
    """The gateway's span of one ingest request, continuing the client's ``traceparent``.

    Callers check ``enabled()`` first and skip this altogether when tracing is off."""
    tracer = _tracer
    if tracer is None:
        yield
        return
    parent = _PROPAGATOR.extract(carrier) if carrier else None
    attributes = (
        {"rpc.system": "grpc", "rpc.service": "agent_memory.v1.IngestService"}
        if transport == "grpc"
        else {"http.request.method": "POST", "http.route": "/v1/events"}
    )
    with tracer.start_as_current_span(
        "gateway ingest", context=parent, kind=SpanKind.SERVER, attributes=attributes
    ):
        yield


@contextlib.contextmanager
def consume_span(consumer: str, msgs: Sequence[Msg]) -> Iterator[None]:
    """A consumer's span around one batch: child of the first message's context, links to the
    other messages' contexts; subject, stream sequence and redelivery count of the first."""
    tracer = _tracer
    if tracer is None or not msgs:
        yield
        return
    parent = None
    links: list[Link] = []
    for msg in msgs:
        if not msg.headers or "traceparent" not in msg.headers:
            continue
        context = _PROPAGATOR.extract(msg.headers)
        if parent is None:
            parent = context
        else:
            span_context = get_current_span(context).get_span_context()
            if span_context.is_valid:
                links.append(Link(span_context))
    first = msgs[0]
    attributes: dict[str, str | int] = {
        "messaging.system": "nats",
        "messaging.operation.type": "process",
        "messaging.destination.name": first.subject,
        "messaging.consumer.group.name": consumer,
        "messaging.batch.message_count": len(msgs),
    }
    sequence, delivered = _position(first)
    if sequence is not None:
        attributes["messaging.nats.stream_sequence"] = sequence
    if delivered is not None:
        attributes["messaging.nats.redelivery_count"] = max(delivered - 1, 0)
    with tracer.start_as_current_span(
        f"{consumer} process",
        context=parent,
        kind=SpanKind.CONSUMER,
        links=links,
        attributes=attributes,
    ):
        yield


def _position(msg: Msg) -> tuple[int | None, int | None]:
    """A JetStream message's stream sequence and delivery count; (None, None) for others."""
    try:
        metadata = msg.metadata
        return int(metadata.sequence.stream), int(metadata.num_delivered)
    except Exception:  # not a JetStream message (a test's plain NATS message)
        return None, None
