"""The gateway's gRPC IngestService on the real stack: events go in over gRPC, come back over HTTP.

Same intake as ``POST /v1/events``: redaction, idempotency by event id, the field named in every
refusal, bearer keys (roles and bound keys) from the ``authorization`` metadata.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from agent_memory_embedded.servers import PostgresServer
from agent_memory_proto.v1 import event_pb2, event_pb2_grpc
from agent_memory_proto.v1.event_pb2 import Event, EventBatch
from tests import plain_http
from tests.helpers import eventually
from tests.stack import Stack, module_stack

BOOT = (("authorization", "Bearer boot-token"),)
HTTP_BOOT = {"authorization": "Bearer boot-token"}
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
MAX_BATCH = 20


@pytest.fixture(scope="module")
def stack(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        AGENT_MEMORY_TOKENS="boot-token:acme",
        AGENT_MEMORY_GATEWAY__MAX_BATCH_EVENTS=str(MAX_BATCH),
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    ) as s:
        yield s


@pytest.fixture(scope="module")
def stub(stack: Stack) -> Iterator[Any]:
    with grpc.insecure_channel(stack.gateway_grpc) as channel:
        yield event_pb2_grpc.IngestServiceStub(channel)


@pytest.fixture(scope="module")
def health(stack: Stack) -> Iterator[Any]:
    with grpc.insecure_channel(stack.gateway_grpc) as channel:
        yield health_pb2_grpc.HealthStub(channel)


def status(health: Any, service: str = "") -> str:
    """The health service's answer for ``service``, by name (SERVING, NOT_SERVING...)."""
    response = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))


def event(i: int, session: str, **over: Any) -> Event:
    fields: dict[str, Any] = {
        "event_id": f"{session}-{i}",
        "project_id": "grpc",
        "agent_id": "codex",
        "session_id": session,
        "role": event_pb2.ROLE_USER if i % 2 == 0 else event_pb2.ROLE_ASSISTANT,
        "text": f"grpc event {i}",
        **over,
    }
    return Event(**fields)


def stored(stack: Stack, session: str, count: int) -> list[dict[str, Any]]:
    def read() -> list[dict[str, Any]] | None:
        r = plain_http.get(
            f"{stack.query_url}/v1/events",
            params={"project_id": "grpc", "session_id": session},
            headers=HTTP_BOOT,
        )
        assert r.status_code == 200, r.text
        events: list[dict[str, Any]] = r.json()["events"]
        return events if len(events) >= count else None

    return eventually(read, what=f"{count} events of {session}")


def test_a_batch_goes_in_over_grpc_and_comes_back_over_http(stack: Stack, stub: Any) -> None:
    ts = Timestamp()
    ts.FromDatetime(datetime(2026, 3, 1, 12, 0, 0, 250_000, tzinfo=UTC))
    meta = Struct()
    meta.update({"tool": "bash", "attempt": 2, "tags": ["a", "b"]})
    batch = EventBatch(
        events=[
            event(0, "batch", ts=ts, metadata=meta, text=f"deploy with {AWS_KEY} please"),
            event(1, "batch", type=event_pb2.EVENT_TYPE_TOOL_CALL, user_id="dana"),
            event(2, "batch", event_id=""),  # proto3's empty string: absent, a ULID is given
        ]
    )
    answer = stub.IngestEvents(batch, metadata=BOOT, timeout=30)
    assert answer.accepted == 3
    assert list(answer.event_ids[:2]) == ["batch-0", "batch-1"]
    assert len(answer.event_ids[2]) == 26  # a ULID

    events = {e["event_id"]: e for e in stored(stack, "batch", 3)}
    assert set(events) == set(answer.event_ids)
    first = events["batch-0"]
    assert AWS_KEY not in first["text"] and "[REDACTED:" in first["text"]
    assert first["metadata"]["_redactions"] == {"aws_access_key": 1}
    assert first["metadata"]["tool"] == "bash" and first["metadata"]["tags"] == ["a", "b"]
    assert first["metadata"]["attempt"] == 2  # a Struct number is a double: 2.0 reads as 2
    assert first["ts"].startswith("2026-03-01T12:00:00.25")
    assert (first["role"], first["type"], first["tenant"]) == ("user", "message", "acme")
    second = events["batch-1"]
    assert (second["role"], second["type"], second["user_id"]) == ("assistant", "tool_call", "dana")


def test_a_stream_is_one_batch_and_a_repeated_id_is_stored_once(stack: Stack, stub: Any) -> None:
    sent = [event(i, "stream") for i in range(5)]
    answer = stub.IngestEventStream(iter(sent), metadata=BOOT, timeout=30)
    assert answer.accepted == 5 and list(answer.event_ids) == [f"stream-{i}" for i in range(5)]
    # a retry, over gRPC and over HTTP, with the same ids: nothing new is stored
    again = stub.IngestEvents(EventBatch(events=sent[:2]), metadata=BOOT, timeout=30)
    assert again.accepted == 2
    body = {"project_id": "grpc", "agent_id": "codex", "session_id": "stream", "role": "user"}
    r = plain_http.post(
        f"{stack.gateway_url}/v1/events",
        json={**body, "event_id": "stream-3", "text": "grpc event 3"},
        headers=HTTP_BOOT,
    )
    assert r.status_code == 202, r.text
    # a marker sent last: once it is stored, everything before it is too
    stub.IngestEvents(EventBatch(events=[event(9, "stream")]), metadata=BOOT, timeout=30)
    ids = [e["event_id"] for e in stored(stack, "stream", 6)]
    assert sorted(ids) == sorted([*(f"stream-{i}" for i in range(5)), "stream-9"])


def _refusal(call: Any) -> Any:
    """The ``grpc.RpcError`` raised by ``call`` (also a ``grpc.Call``: code, details...)."""
    with pytest.raises(grpc.RpcError) as err:
        call()
    return err.value


def trailing(err: Any) -> dict[str, str]:
    return {k: v if isinstance(v, str) else v.decode() for k, v in err.trailing_metadata()}


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"role": event_pb2.ROLE_UNSPECIFIED}, "events[1].role"),
        ({"project_id": ""}, "events[1].project_id"),
        ({"role": 42}, "events[1].role"),
        ({"tenant": "globex"}, "events[1].tenant"),
        ({"session_id": "bad\nid"}, "events[1].session_id"),
    ],
)
def test_bad_input_is_invalid_argument_naming_the_field(
    stub: Any, bad: dict[str, Any], field: str
) -> None:
    batch = EventBatch(events=[event(0, "bad"), event(1, "bad", **bad)])
    err = _refusal(lambda: stub.IngestEvents(batch, metadata=BOOT, timeout=30))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
    assert err.details().startswith(f"{field}: "), err.details()
    assert trailing(err)["field"] == field
    # the same refusal for the stream
    err = _refusal(lambda: stub.IngestEventStream(iter(batch.events), metadata=BOOT, timeout=30))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details().startswith(f"{field}: "), err.details()


def test_an_empty_batch_and_too_many_events_are_refused(stub: Any) -> None:
    err = _refusal(lambda: stub.IngestEvents(EventBatch(), metadata=BOOT, timeout=30))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and err.details().startswith("events:")
    many = [event(i, "many") for i in range(MAX_BATCH + 1)]
    err = _refusal(lambda: stub.IngestEvents(EventBatch(events=many), metadata=BOOT, timeout=30))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    err = _refusal(lambda: stub.IngestEventStream(iter(many), metadata=BOOT, timeout=30))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert trailing(err)["error"] == "batch_too_large"


def test_keys_are_checked_as_over_http(stack: Stack, stub: Any) -> None:
    batch = EventBatch(events=[event(0, "auth")])
    for metadata in ((), (("authorization", "Bearer nope"),)):
        err = _refusal(lambda m=metadata: stub.IngestEvents(batch, metadata=m, timeout=30))
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED, err.details()
        err = _refusal(lambda m=metadata: stub.IngestEventStream(iter([]), metadata=m, timeout=30))
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED

    def issue(**body: Any) -> tuple[tuple[str, str]]:
        r = plain_http.post(f"{stack.query_url}/v1/keys", json=body, headers=HTTP_BOOT)
        assert r.status_code == 201, r.text
        return (("authorization", f"Bearer {r.json()['secret']}"),)

    reader = issue(role="reader")
    err = _refusal(lambda: stub.IngestEvents(batch, metadata=reader, timeout=30))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    bound = issue(role="writer", agent_id="claude-code", projects=["grpc"])
    err = _refusal(lambda: stub.IngestEvents(batch, metadata=bound, timeout=30))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    assert err.details().startswith("events[0].agent_id: "), err.details()


def test_health_is_serving_for_the_server_and_the_ingest_service(health: Any) -> None:
    assert status(health) == "SERVING"
    assert status(health, "agent_memory.v1.IngestService") == "SERVING"
    with pytest.raises(grpc.RpcError) as caught:
        status(health, "agent_memory.v1.NoSuchService")
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


def test_reflection_lists_the_services_and_describes_ingest(stack: Stack) -> None:
    """What ``grpcurl <host:port> list`` and ``describe`` ask, without the proto file."""
    with grpc.insecure_channel(stack.gateway_grpc) as channel:
        reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
        asks = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="agent_memory.v1.IngestService"
            ),
        ]
        listed, described = list(reflect.ServerReflectionInfo(iter(asks), timeout=10))
    names = {s.name for s in listed.list_services_response.service}
    assert {"agent_memory.v1.IngestService", "grpc.health.v1.Health"} <= names
    files = described.file_descriptor_response.file_descriptor_proto
    assert files and any(b"IngestEventStream" in f for f in files)


def test_unavailable_while_nats_is_down_then_accepted_again(
    stack: Stack, stub: Any, health: Any
) -> None:
    """What ``POST /v1/events`` answers 503 (JetStream away) is UNAVAILABLE, which gRPC clients
    retry; the same batch goes in once NATS is back, stored once. Meanwhile the health service
    says NOT_SERVING, as ``/readyz`` answers 503, so a balancer sends batches elsewhere."""
    batch = EventBatch(events=[event(i, "nats-away") for i in range(3)])
    stack.nats.stop()
    try:
        err = _refusal(lambda: stub.IngestEvents(batch, metadata=BOOT, timeout=30))
        assert err.code() == grpc.StatusCode.UNAVAILABLE, err.details()
        eventually(lambda: status(health) == "NOT_SERVING", timeout=30, what="NOT_SERVING")
        assert status(health, "agent_memory.v1.IngestService") == "NOT_SERVING"
    finally:
        stack.nats.start(timeout=30)
    eventually(lambda: status(health) == "SERVING", timeout=60, what="SERVING again")

    def accepted() -> bool:
        try:
            stub.IngestEvents(batch, metadata=BOOT, timeout=30)
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.UNAVAILABLE, exc.details()
            return False
        return True

    eventually(accepted, timeout=60, what="accepted once NATS is back")
    assert [e["event_id"] for e in stored(stack, "nats-away", 3)] == [
        f"nats-away-{i}" for i in range(3)
    ]
