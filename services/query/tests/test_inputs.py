"""What Postgres and JSON cannot hold is a 422 naming the field, never a 500 (issue 16).

In process and without servers: the guard answers before any route needs the database.
"""

from __future__ import annotations

import httpx
import orjson
import pytest

from agent_memory_query.app import create_app
from agent_memory_query.inputs import INT_MAX, INT_MIN

CASES: list[tuple[str, str, bytes | None, str]] = [
    ("GET", "/v1/events?project_id=a%00b", None, "project_id"),
    ("GET", "/v1/events/a%00", None, "event_id"),
    ("GET", "/v1/episodes/similar?q=fix%00it", None, "q"),
    ("POST", "/v1/episodes", b'{"task": "t\\u0000", "project_id": "p"}', "task"),
    (
        "POST",
        "/v1/episodes",
        b'{"task": "t", "project_id": "p", "metadata": {"n": [1, 123456789012345678901234]}}',
        "metadata.n[1]",
    ),
    (
        "POST",
        "/v1/episodes",
        b'{"task": "t", "project_id": "p", "metadata": {"x": 1e400}}',
        "metadata.x",
    ),
    (
        "POST",
        "/v1/episodes/e1/actions",
        b'{"actions": [{"action": "a"}, {"action": "b", "result": "\\u0000"}]}',
        "actions[1].result",
    ),
    ("POST", "/v1/search", b'{"query": "a\\u0000b"}', "query"),
    ("POST", "/v1/episodes", b'{"task": "t\\ud800", "project_id": "p"}', "task"),
    (
        "POST",
        "/v1/playbooks/p/entries",
        b'{"entries": [{"text": "x", "source": {"k\\u0000": 1}}]}',
        "entries[0].source",
    ),
]


@pytest.mark.parametrize(("method", "url", "body", "field"), CASES)
async def test_nul_and_out_of_range_numbers_are_a_422_naming_the_field(
    method: str, url: str, body: bytes | None, field: str
) -> None:
    transport = httpx.ASGITransport(app=create_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        r = await client.request(
            method, url, content=body, headers={"content-type": "application/json"}
        )
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field, r.json()
    assert r.json()["error"] == "validation_error"


async def test_parameters_a_route_does_not_read_are_not_inspected_but_refused_by_name() -> None:
    """The NUL guard looks only at what a route reads; a parameter the route does not read is
    an unknown parameter (issue 16: it is named, never silently ignored)."""
    transport = httpx.ASGITransport(app=create_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        r = await client.get("/healthz?unused=%00")
    assert r.status_code == 422
    assert r.json()["field"] == "unused" and "unknown query parameter" in r.json()["message"]


def test_the_bounds_are_what_orjson_writes() -> None:
    assert orjson.dumps([INT_MIN, INT_MAX])
    for beyond in (INT_MIN - 1, INT_MAX + 1):
        with pytest.raises(TypeError):
            orjson.dumps(beyond)
