"""What the pipeline cannot process is refused at the door (issue 55), on the real stack.

Before ``contracts/limits.py`` the gateway answered 202 to events that were then lost: metadata
200 levels deep (dead-lettered by the segmenter and the bm25-indexer), a ``ts`` in year 1 or 9999
(refused by Tantivy, dead-lettered after 8 tries), and 254+ levels or a number out of range broke
the service itself (a plain-text 500). Now each is a 422 in the error shape naming the field,
over HTTP and gRPC, and the query service refuses the same metadata on the episode routes. The
limits themselves go through every stage: stored, segmented and indexed, no dead letter.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp

from agent_memory_embedded.servers import PostgresServer
from agent_memory_proto.v1 import event_pb2, event_pb2_grpc
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.stack import Stack, module_stack

STAGES = ("recorder", "segmenter", "bm25-indexer")


@pytest.fixture(scope="module")
def stack(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        ("gateway", "recorder", "segmenter", "bm25-indexer", "query"),
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",  # no test here ranks by vectors
    ) as s:
        yield s


def nested(levels: int) -> dict[str, Any]:
    value: Any = "leaf"
    for _ in range(levels - 1):
        value = {"a": value}
    return {"a": value}


def post_raw(client: httpx.Client, url: str, body: Any) -> httpx.Response:
    # the standard library writes what orjson (httpx's json=) cannot: 300 levels, NaN
    return client.post(url, content=json.dumps(body), headers={"content-type": "application/json"})


REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("200 levels", {"metadata": nested(200)}, "metadata"),
    ("300 levels", {"metadata": nested(300)}, "metadata"),
    ("33 levels of lists", {"metadata": {"l": json.loads("[" * 32 + "1" + "]" * 32)}}, "metadata"),
    ("1e308", {"metadata": {"f": 1e308}}, "metadata"),
    ("int beyond int64", {"metadata": {"n": [2**63]}}, "metadata"),
    ("ts year 1", {"ts": "0001-01-01T00:00:00Z"}, "ts"),
    ("ts year 9999", {"ts": "9999-12-31T23:59:59Z"}, "ts"),
    ("ts before 1970", {"ts": "1969-12-31T23:59:59Z"}, "ts"),
    ("ts year 1 east of UTC", {"ts": "0001-01-01T00:00:00+01:00"}, "ts"),
    ("ts epoch ms in 2300", {"ts": 10_413_792_000_000}, "ts"),
]


@pytest.mark.parametrize(("name", "over", "field"), REFUSED, ids=[c[0] for c in REFUSED])
def test_the_gateway_refuses_what_a_store_cannot_hold(
    stack: Stack, name: str, over: dict[str, Any], field: str
) -> None:
    url = f"{stack.gateway_url}/v1/events"
    with httpx.Client(timeout=30) as client:  # one connection: it must survive the refusal
        for body, named in (
            ({**make_event(1), **over}, field),
            ({"events": [make_event(2), {**make_event(3), **over}]}, f"events[1].{field}"),
        ):
            r = post_raw(client, url, body)
            assert r.status_code == 422, (name, r.status_code, r.text[:300])
            answer = r.json()
            assert answer["error"] == "validation_error" and answer["field"] == named, answer
        assert client.get(f"{stack.gateway_url}/healthz").status_code == 200


def _grpc_refusal(stack: Stack, event: event_pb2.Event) -> grpc.RpcError:
    with grpc.insecure_channel(stack.gateway_grpc) as channel:
        stub = event_pb2_grpc.IngestServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.IngestEvents(event_pb2.EventBatch(events=[event]), timeout=30)
    err: grpc.RpcError = caught.value
    return err


def _trailing(err: Any) -> dict[str, str]:
    """The refusal's trailing metadata (``error``, ``field``), as text."""
    return {k: v if isinstance(v, str) else v.decode() for k, v in err.trailing_metadata()}


def _grpc_event(**over: Any) -> event_pb2.Event:
    return event_pb2.Event(
        event_id="g-1",
        project_id="limits",
        agent_id="codex",
        session_id="grpc",
        role=event_pb2.ROLE_USER,
        text="x",
        **over,
    )


@pytest.mark.parametrize("number", [float("nan"), float("inf"), 1e308])
def test_grpc_refuses_numbers_the_stores_cannot_hold(stack: Stack, number: float) -> None:
    meta = Struct()
    meta.update({"x": number})
    err = _grpc_refusal(stack, _grpc_event(metadata=meta))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
    assert _trailing(err)["field"] == "events[0].metadata", err.details()


def test_grpc_refuses_a_ts_no_index_holds(stack: Stack) -> None:
    err = _grpc_refusal(stack, _grpc_event(ts=Timestamp(seconds=253_402_300_799)))  # 9999-12-31
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
    assert _trailing(err)["field"] == "events[0].ts", err.details()


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/episodes", {"task": "t", "project_id": "p", "metadata": {"f": 1e308}}, "metadata"),
        ("/v1/episodes", {"task": "t", "project_id": "p", "metadata": {"f": 2**64}}, "metadata"),
        ("/v1/episodes", {"task": "t", "project_id": "p", "metadata": nested(33)}, "metadata"),
    ],
)
def test_the_query_service_refuses_metadata_it_could_not_read_back(
    stack: Stack, path: str, body: dict[str, Any], field: str
) -> None:
    """``1e308`` was stored by ``jsonb`` as a 309-digit integer: a 500 on the way back."""
    with httpx.Client(timeout=30) as client:
        r = post_raw(client, f"{stack.query_url}{path}", body)
    assert r.status_code == 422, r.text[:300]
    assert r.json()["field"].startswith(field), r.json()  # metadata or metadata.f


def test_an_episode_action_and_a_non_finite_number_are_refused(stack: Stack) -> None:
    with httpx.Client(timeout=30) as client:
        started = client.post(
            f"{stack.query_url}/v1/episodes", json={"task": "limits", "project_id": "limits"}
        )
        assert started.status_code == 201, started.text
        episode = started.json()["episode_id"]
        url = f"{stack.query_url}/v1/episodes/{episode}/actions"
        for raw, field in (
            ('{"actions": [{"action": "a", "metadata": {"x": NaN}}]}', "actions[0].metadata"),
            ('{"actions": [{"action": "a", "metadata": {"x": 1e400}}]}', "actions[0].metadata"),
            ('{"actions": [{"action": "a", "ts": "9999-01-01T00:00:00Z"}]}', "actions[0]"),
        ):
            r = client.post(url, content=raw, headers={"content-type": "application/json"})
            assert r.status_code == 422, (raw, r.status_code, r.text[:300])
            assert r.json()["field"].startswith(field), (raw, r.json())


def _stages(stack: Stack) -> dict[str, dict[str, Any]]:
    status = plain_http.get(f"{stack.query_url}/v1/status", timeout=10).json()
    return {c["name"]: c for c in status["consumers"] if c["name"] in STAGES}


def test_events_at_the_limits_are_stored_segmented_and_indexed(stack: Stack) -> None:
    at_limits = [
        make_event(1, project="edge", metadata=nested(32), ts="1970-01-01T00:00:00Z"),
        make_event(2, project="edge", metadata={"n": 2**63 - 1, "f": -9.2e18, "t": 5e-324}),
        make_event(3, project="edge", ts="2199-12-31T23:59:59.999Z", text="zyzzyva at the end"),
    ]
    r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": at_limits}, timeout=30)
    assert r.status_code == 202, r.text

    def through_every_stage() -> bool:
        stages = _stages(stack)
        return len(stages) == len(STAGES) and all(c["caught_up"] for c in stages.values())

    eventually(through_every_stage, timeout=120, what="every stage caught up")
    assert {name: c["dead_letters"] for name, c in _stages(stack).items()} == dict.fromkeys(
        STAGES, 0
    )
    events = plain_http.get(
        f"{stack.query_url}/v1/events", params={"project_id": "edge"}, timeout=30
    ).json()["events"]
    by_id = {e["event_id"]: e for e in events}
    assert by_id["e-000002"]["metadata"]["n"] == 2**63 - 1
    assert by_id["e-000003"]["ts"].startswith("2199-12-31T23:59:59.999")
    found = plain_http.get(
        f"{stack.query_url}/v1/search",
        params={"q": "zyzzyva", "project_id": "edge", "tiers": "bm25"},
        timeout=30,
    )
    assert found.status_code == 200, found.text
    assert "e-000003" in found.text


@pytest.mark.parametrize("tiers", ["bm25", None])
def test_a_search_window_beyond_the_index_dates_is_answered(
    stack: Stack, tiers: str | None
) -> None:
    """``until=9999-12-31`` ("no end") reached Tantivy as a date it refuses: now clamped."""
    params = {"q": "anything", "since": "0001-01-01T00:00:00Z", "until": "9999-12-31T00:00:00Z"}
    if tiers:
        params["tiers"] = tiers
    r = plain_http.get(f"{stack.query_url}/v1/search", params=params, timeout=30)
    assert r.status_code == 200, r.text[:300]
