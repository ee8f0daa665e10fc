"""Tracing (``tracing.py``) on a real nats-server: off without an endpoint; with one, the
request span's W3C context rides in the NATS headers of both publish paths (beside an intact
``Nats-Msg-Id``) and becomes the parent of a consumer's batch span. Spans go to a fake OTLP
collector (an external endpoint), decoded as a real collector would."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import pytest
from nats.aio.msg import Msg

from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.publisher import Outgoing
from agent_memory_common.bus.streams import ensure_streams
from agent_memory_common.contracts.subjects import STREAM_EVENTS
from agent_memory_common.core import tracing
from agent_memory_common.core.settings import CommonSettings
from agent_memory_embedded.servers import NatsServer, free_port
from tests.otlp_collector import FakeCollector, ReceivedSpan

OTEL_ENV = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_SDK_DISABLED",
)
CLIENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
CLIENT_SPAN = "b7ad6b7169203331"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in OTEL_ENV:
        monkeypatch.delenv(name, raising=False)
    yield
    tracing.shutdown()


@pytest.fixture
def collector() -> Iterator[FakeCollector]:
    c = FakeCollector()
    yield c
    c.close()


@pytest.fixture
async def link(nats_server: NatsServer) -> AsyncIterator[NatsLink]:
    """Connected, with the product's streams, as the gateway and the consumers open it."""
    link = NatsLink([nats_server.url], name="tracing-test")
    await link.start(wait=5)
    try:
        await ensure_streams(link.require_js(), CommonSettings())
        yield link
    finally:
        await link.close()


def test_no_endpoint_means_no_provider_and_no_headers() -> None:
    assert tracing.traces_endpoint("") is None
    assert not tracing.configure("recorder", "")
    assert not tracing.enabled()
    with tracing.ingest_span("http", {"traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"}):
        assert tracing.inject() is None


def test_endpoint_from_settings_or_opentelemetry_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert tracing.traces_endpoint("http://c:4318/") == "http://c:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318")
    assert tracing.traces_endpoint() == "http://base:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://full:4318/x")
    assert tracing.traces_endpoint() == "http://full:4318/x"
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert tracing.traces_endpoint("http://c:4318") is None
    assert not tracing.configure("gateway", "http://c:4318")


async def _fetch(link: NatsLink, count: int) -> list[Msg]:
    js = link.require_js()
    sub = await js.pull_subscribe("mem.events.>", durable="tracing-test", stream=STREAM_EVENTS)
    return await sub.fetch(count, timeout=5)


def _one(spans: list[ReceivedSpan], name: str) -> ReceivedSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, (name, spans)
    return found[0]


async def test_context_rides_in_nats_headers_to_the_consumer_span(
    link: NatsLink, collector: FakeCollector
) -> None:
    assert tracing.configure("gateway", collector.url)
    client = {"traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"}
    with tracing.ingest_span("http", client):
        await link.publish([Outgoing("mem.events.t.p", b"a", "id-a")], 5, hot=True)
        await link.publish([Outgoing("mem.events.t.p", b"b", "id-b")], 5)  # the broker's
        await link.publish([Outgoing("mem.events.t.p", b"a", "id-a")], 5, hot=True)  # retry
    info = await link.require_js().stream_info(STREAM_EVENTS)
    assert info.state.messages == 2  # Nats-Msg-Id still de-duplicates
    msgs = await _fetch(link, 2)
    assert [m.data for m in msgs] == [b"a", b"b"]
    assert [(m.headers or {}).get("Nats-Msg-Id") for m in msgs] == ["id-a", "id-b"]
    with tracing.consume_span("recorder", msgs):
        pass
    tracing.shutdown()  # flushes the spans to the collector
    spans = collector.spans()
    gateway = _one(spans, "gateway ingest")
    assert (gateway.service, gateway.trace_id) == ("agent-memory-gateway", CLIENT_TRACE)
    assert gateway.parent_span_id == CLIENT_SPAN  # the client's traceparent is continued
    for msg in msgs:
        assert (msg.headers or {})["traceparent"] == f"00-{CLIENT_TRACE}-{gateway.span_id}-01"
    consumer = _one(spans, "recorder process")
    assert (consumer.trace_id, consumer.parent_span_id) == (CLIENT_TRACE, gateway.span_id)
    assert consumer.attributes["messaging.destination.name"] == "mem.events.t.p"
    assert consumer.attributes["messaging.nats.stream_sequence"] == 1
    assert consumer.attributes["messaging.nats.redelivery_count"] == 0
    assert consumer.attributes["messaging.batch.message_count"] == 2


async def test_a_batch_span_links_the_other_requests(
    link: NatsLink, collector: FakeCollector
) -> None:
    assert tracing.configure("gateway", collector.url)
    for name in ("first", "second"):
        with tracing.ingest_span("grpc", None):  # no client context: a new trace each
            await link.publish([Outgoing("mem.events.t.p", b"x", name)], 5, hot=True)
    msgs = await _fetch(link, 2)
    with tracing.consume_span("recorder", msgs):
        pass
    tracing.shutdown()
    spans = collector.spans()
    first, second = (s for s in spans if s.name == "gateway ingest")
    assert first.trace_id != second.trace_id and not first.parent_span_id
    consumer = _one(spans, "recorder process")
    assert (consumer.trace_id, consumer.parent_span_id) == (first.trace_id, first.span_id)
    assert consumer.links == ((second.trace_id, second.span_id),)


async def test_a_collector_that_is_down_fails_nothing(link: NatsLink) -> None:
    assert tracing.configure("gateway", f"http://127.0.0.1:{free_port()}")  # nobody listens
    with tracing.ingest_span("http", None):
        await link.publish([Outgoing("mem.events.t.p", b"x", "id")], 5, hot=True)
    assert len(await _fetch(link, 1)) == 1
    started = time.monotonic()
    tracing.shutdown(timeout_s=1.0)
    assert time.monotonic() - started < 3
    assert not tracing.enabled()
