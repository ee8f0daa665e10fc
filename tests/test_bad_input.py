"""Every kind of bad input gets a 4xx naming the field, never a 500, and nothing is stored."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests import plain_http
from tests.helpers import make_event
from tests.stack import Stack

GOOD = make_event(1)


def _without(key: str) -> dict[str, Any]:
    return {k: v for k, v in GOOD.items() if k != key}


def _nested(levels: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(levels - 1):
        value = {"a": value}
    return {"a": value}


CASES: list[tuple[str, bytes | dict[str, Any] | list[Any], int, str | None]] = [
    ("malformed json", b'{"project_id": ', 400, None),
    ("invalid utf-8", b'{"text": "\xff\xfe"}', 400, None),
    ("not an object", b'"just a string"', 422, "body"),
    ("missing text", _without("text"), 422, "text"),
    ("missing project", _without("project_id"), 422, "project_id"),
    ("text not a string", {**GOOD, "text": 42}, 422, "text"),
    ("unknown role", {**GOOD, "role": "robot"}, 422, "role"),
    ("unknown type", {**GOOD, "type": "thought"}, 422, "type"),
    ("metadata not an object", {**GOOD, "metadata": [1, 2]}, 422, "metadata"),
    ("ts in seconds", {**GOOD, "ts": 1767225600}, 422, "ts"),
    ("ts not a date", {**GOOD, "ts": "last tuesday"}, 422, "ts"),
    ("ts boolean", {**GOOD, "ts": True}, 422, "ts"),
    ("unknown field", {**GOOD, "sesion_id": "typo"}, 422, "sesion_id"),
    ("empty project", {**GOOD, "project_id": ""}, 422, "project_id"),
    ("control char in id", {**GOOD, "session_id": "a\nb"}, 422, "session_id"),
    ("tenant in body", {**GOOD, "tenant": "other"}, 422, "tenant"),
    ("batch not a list", {"events": {"a": 1}}, 422, "events"),
    ("empty batch", {"events": []}, 422, "events"),
    ("bad item in batch", {"events": [GOOD, {**GOOD, "role": "x"}]}, 422, "events[1].role"),
    ("extra key beside events", {"events": [GOOD], "x": 1}, 422, "x"),
    # what a store cannot hold (contracts/limits.py): a 202 and dead letters, or a 500, before
    ("metadata 33 levels deep", {**GOOD, "metadata": _nested(33)}, 422, "metadata"),
    ("metadata 300 levels deep", {**GOOD, "metadata": _nested(300)}, 422, "metadata"),
    ("metadata float 1e308", {**GOOD, "metadata": {"f": 1e308}}, 422, "metadata"),
    ("metadata int beyond int64", {**GOOD, "metadata": {"n": 2**63}}, 422, "metadata"),
    ("ts in year 1", {**GOOD, "ts": "0001-01-01T00:00:00Z"}, 422, "ts"),
    ("ts in year 9999", {**GOOD, "ts": "9999-12-31T23:59:59Z"}, 422, "ts"),
    ("oversize event", {**GOOD, "text": "x" * (256 * 1024 + 1)}, 413, "text"),
    ("oversize batch", {"events": [make_event(i) for i in range(1001)]}, 413, "events"),
]


@pytest.mark.parametrize(("name", "body", "status", "field"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_clear_4xx(
    shared_stack: Stack,
    name: str,
    body: bytes | dict[str, Any] | list[Any],
    status: int,
    field: str | None,
) -> None:
    url = f"{shared_stack.gateway_url}/v1/events"
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()  # the standard library writes 300 levels, orjson not
    r = plain_http.post(url, content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    payload = r.json()
    assert payload["error"] and payload["message"]
    if field is not None:
        assert payload["field"] == field, payload


def test_oversize_body_is_refused_before_reading_it_all(shared_stack: Stack) -> None:
    big = b'{"events": [' + b" " * (17 * 1024 * 1024) + b"]}"
    r = plain_http.post(
        f"{shared_stack.gateway_url}/v1/events",
        content=big,
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413
    assert r.json()["field"] == "body"


def test_nothing_from_bad_requests_is_stored(shared_stack: Stack) -> None:
    """On the module's stack, where every other test only sends what is refused: the one good
    event is all that is ever stored (the other tests' bad requests included)."""
    for _, body, _, _ in CASES[:6]:
        if isinstance(body, bytes):
            plain_http.post(f"{shared_stack.gateway_url}/v1/events", content=body)
        else:
            plain_http.post(f"{shared_stack.gateway_url}/v1/events", json=body)
    good = plain_http.post(f"{shared_stack.gateway_url}/v1/events", json=make_event(99))
    assert good.status_code == 202
    from tests.helpers import drained, eventually

    eventually(lambda: drained(shared_stack.query_url, 1), what="only the good event stored")


@pytest.mark.parametrize(
    ("service", "path", "params", "field"),
    [
        ("query", "/v1/events", {"foo": "bar"}, "foo"),
        ("query", "/v1/events", {"project_id": "p", "sesion_id": "typo"}, "sesion_id"),
        ("query", "/v1/toc", {"projectid": "p"}, "projectid"),
        ("query", "/v1/status", {"x": ""}, "x"),
        ("gateway", "/healthz", {"verbose": "1"}, "verbose"),
    ],
)
def test_an_unknown_query_parameter_is_named_not_ignored(
    shared_stack: Stack, service: str, path: str, params: dict[str, str], field: str
) -> None:
    base = shared_stack.query_url if service == "query" else shared_stack.gateway_url
    r = plain_http.get(f"{base}{path}", params=params)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field and "unknown query parameter" in r.json()["message"]
    # the known parameters of the same route still work
    known = {k: v for k, v in params.items() if k != field}
    assert plain_http.get(f"{base}{path}", params=known).status_code == 200
