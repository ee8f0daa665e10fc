"""``GET/PUT /v1/projects/{project_id}/retention`` on a real query service and Postgres."""

from __future__ import annotations

import pytest

from tests import plain_http
from tests.stack import Stack


def _url(stack: Stack, project: str = "proj") -> str:
    return f"{stack.query_url}/v1/projects/{project}/retention"


def test_defaults_then_overrides(lean_stack: Stack) -> None:
    got = plain_http.get(_url(lean_stack, "fresh"), timeout=10)
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["overrides"] == {} and body["updated_at"] is None
    assert body["matrix"] == body["defaults"]
    assert body["matrix"]["vector"]["segment"] == "30d"
    assert body["matrix"]["bm25"]["day"] == "180d"

    put = plain_http.put(
        _url(lean_stack), json={"vector": {"segment": "90D"}, "bm25": {"day": "forever"}}
    )
    assert put.status_code == 200, put.text
    assert put.json()["matrix"]["vector"]["segment"] == "90d"
    again = plain_http.get(_url(lean_stack)).json()
    assert again["overrides"] == {"vector": {"segment": "90d"}, "bm25": {"day": "forever"}}
    assert again["matrix"]["bm25"]["day"] == "forever"
    assert again["matrix"]["vector"]["day"] == "365d"
    assert again["updated_at"] is not None
    # a PUT replaces: what it leaves out goes back to the default
    reset = plain_http.put(_url(lean_stack), json={}).json()
    assert reset["overrides"] == {} and reset["matrix"] == reset["defaults"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"vector": {"segment": "30 days"}}, "vector.segment"),
        ({"vector": {"segmnt": "30d"}}, "vector.segmnt"),
        ({"bm25": {"day": "0d"}}, "bm25.day"),
        ({"bm25": {"day": 30}}, "bm25.day"),
        ({"qdrant": {"day": "1y"}}, "qdrant"),
        ({"vector": ["30d"]}, "vector"),
    ],
)
def test_bad_durations_are_422_naming_the_cell(
    lean_stack: Stack, body: dict[str, object], field: str
) -> None:
    r = plain_http.put(_url(lean_stack), json=body, timeout=10)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field, r.json()
