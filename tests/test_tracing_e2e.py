"""Tracing end to end (issue 18): the gateway, the recorder and the segmenter, each a real
process on a real nats-server and Postgres, export to a fake OTLP collector (an external
endpoint) through the standard ``OTEL_EXPORTER_OTLP_ENDPOINT``. One ingest request is one
trace: the gateway's span (continuing the client's ``traceparent`` over HTTP and gRPC), the
recorder's span under it (the context rode in the NATS headers), and the segmenter's under the
recorder's (the recorder's ``mem.recorded`` announcement carried it on)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import grpc
import pytest

from agent_memory_embedded.servers import PostgresServer
from agent_memory_proto.v1 import event_pb2, event_pb2_grpc
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.otlp_collector import FakeCollector, ReceivedSpan
from tests.stack import Stack, module_stack


@pytest.fixture(scope="module")
def collector() -> Iterator[FakeCollector]:
    c = FakeCollector()
    yield c
    c.close()


@pytest.fixture(scope="module")
def stack(
    pg_server: PostgresServer,
    tmp_path_factory: pytest.TempPathFactory,
    collector: FakeCollector,
) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        ("gateway", "recorder", "segmenter"),
        OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
        OTEL_BSP_SCHEDULE_DELAY="100",  # export within a tenth of a second, not five
    ) as s:
        yield s


def _client_context() -> tuple[str, str, str]:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, span_id, f"00-{trace_id}-{span_id}-01"


GATEWAY, RECORDER, SEGMENTER = (
    "agent-memory-gateway",
    "agent-memory-recorder",
    "agent-memory-segmenter",
)


def _trace(collector: FakeCollector, trace_id: str, *services: str) -> dict[str, ReceivedSpan]:
    """The spans of one trace by service, once each of ``services`` has exported its own: each
    service exports on its own timer, so the segmenter's span may arrive before the
    recorder's (waiting for a count of services let a test read a trace without the
    recorder's)."""

    def spans() -> dict[str, ReceivedSpan] | None:
        found = {s.service: s for s in collector.spans() if s.trace_id == trace_id}
        return found if all(name in found for name in services) else None

    return eventually(spans, timeout=60, what=f"spans of {', '.join(services)} in {trace_id}")


def test_an_http_request_is_one_trace_through_the_pipeline(
    stack: Stack, collector: FakeCollector
) -> None:
    trace_id, client_span, traceparent = _client_context()
    r = plain_http.post(
        f"{stack.gateway_url}/v1/events",
        json=make_event(1, session="traced-http"),
        headers={"traceparent": traceparent},
        timeout=30,
    )
    assert r.status_code == 202, r.text
    spans = _trace(collector, trace_id, GATEWAY, RECORDER, SEGMENTER)
    gateway, recorder, segmenter = spans[GATEWAY], spans[RECORDER], spans[SEGMENTER]
    assert (gateway.name, gateway.parent_span_id) == ("gateway ingest", client_span)
    assert (recorder.name, recorder.parent_span_id) == ("recorder process", gateway.span_id)
    assert recorder.attributes["messaging.destination.name"].startswith("mem.events.")
    assert recorder.attributes["messaging.nats.redelivery_count"] == 0
    assert recorder.attributes["messaging.nats.stream_sequence"] >= 1
    assert (segmenter.name, segmenter.parent_span_id) == ("segmenter process", recorder.span_id)
    assert segmenter.attributes["messaging.destination.name"].startswith("mem.recorded.")


def test_a_grpc_request_continues_the_clients_trace(stack: Stack, collector: FakeCollector) -> None:
    trace_id, client_span, traceparent = _client_context()
    event = event_pb2.Event(
        event_id="traced-grpc-1",
        project_id="proj",
        agent_id="codex",
        session_id="traced-grpc",
        role=event_pb2.ROLE_USER,
        text="a traced event over gRPC",
    )
    with grpc.insecure_channel(stack.gateway_grpc) as channel:
        answer = event_pb2_grpc.IngestServiceStub(channel).IngestEvents(
            event_pb2.EventBatch(events=[event]),
            metadata=(("traceparent", traceparent),),
            timeout=30,
        )
    assert answer.accepted == 1
    spans = _trace(collector, trace_id, GATEWAY, RECORDER)
    gateway, recorder = spans[GATEWAY], spans[RECORDER]
    assert gateway.parent_span_id == client_span
    assert gateway.attributes["rpc.system"] == "grpc"
    assert recorder.parent_span_id == gateway.span_id


def test_a_request_without_traceparent_starts_a_trace(
    stack: Stack, collector: FakeCollector
) -> None:
    before = {s.span_id for s in collector.spans()}
    r = plain_http.post(
        f"{stack.gateway_url}/v1/events", json=make_event(2, session="untraced"), timeout=30
    )
    assert r.status_code == 202, r.text

    def new_root() -> ReceivedSpan | None:
        for s in collector.spans():
            if s.span_id not in before and s.name == "gateway ingest" and not s.parent_span_id:
                return s
        return None

    gateway = eventually(new_root, timeout=60, what="a new root gateway span")
    recorder = _trace(collector, gateway.trace_id, RECORDER)[RECORDER]
    assert recorder.parent_span_id == gateway.span_id
