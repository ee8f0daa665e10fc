"""Team mode on the TOC and topic routes (issue 17): filter by user, nodes say who they came from.

The cheapest real setup: the query service alone over the rows of ``tests/team_support`` (two
users in one project, inserted as the recorder, summarizer and topics service would have).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.stack import Stack
from tests.team_support import (
    DAY16,
    DAY17,
    MONTH,
    SEG_DANA,
    SEG_ELI,
    SEG_PAIR,
    WEEK,
    YEAR,
    P,
    team_query_stack,
)


@pytest.fixture(scope="module")
def team(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with team_query_stack(pg_server, tmp_path_factory.mktemp("team")) as s:
        yield s


def call(stack: Stack, method: str, path: str, status: int = 200, **kw: Any) -> Any:
    r = plain_http.request(method, f"{stack.query_url}{path}", timeout=30, **kw)
    assert r.status_code == status, r.text
    return r.json()


def children(stack: Stack, node_id: str, user: str | None = None) -> list[str]:
    params = {"user_id": user} if user else {}
    data = call(stack, "GET", f"/v1/toc/nodes/{node_id}/children", params=params)
    return [c["node_id"] for c in data["children"]]


def test_toc_listings_filter_by_user(team: Stack) -> None:
    years = call(team, "GET", "/v1/toc", params={"project_id": P, "user_id": "dana"})["years"]
    assert [y["node_id"] for y in years] == [YEAR]
    assert call(team, "GET", "/v1/toc", params={"user_id": "zoe"})["years"] == []
    assert children(team, WEEK) == [DAY16, DAY17]
    assert children(team, WEEK, "dana") == [DAY16, DAY17]  # the pairing session on the 17th
    assert children(team, WEEK, "eli") == [DAY17]
    assert children(team, DAY17, "dana") == [SEG_PAIR]
    assert children(team, DAY17, "eli") == [SEG_ELI, SEG_PAIR]
    assert children(team, MONTH, "zoe") == []
    # a segment's children are its events: only the user's
    events = call(team, "GET", f"/v1/toc/nodes/{SEG_PAIR}/children", params={"user_id": "eli"})
    assert [e["event_id"] for e in events["events"]] == ["p2"]


def test_toc_search_filters_by_user(team: Stack) -> None:
    def hits(user: str | None) -> set[str]:
        body = {"query": "billing", "project_id": P, "levels": ["segment", "day"], "limit": 50}
        if user:
            body["user_id"] = user
        return {h["node_id"] for h in call(team, "POST", "/v1/toc/search", json=body)["hits"]}

    assert hits(None) == {DAY16, DAY17, SEG_DANA, SEG_ELI, SEG_PAIR}
    assert hits("dana") == {DAY16, DAY17, SEG_DANA, SEG_PAIR}
    assert hits("eli") == {DAY17, SEG_ELI, SEG_PAIR}
    assert hits("zoe") == set()


def test_nodes_say_which_agents_and_users_they_came_from(team: Stack) -> None:
    def who(node_id: str) -> tuple[list[str], list[str], Any]:
        node = call(team, "GET", f"/v1/toc/nodes/{node_id}")
        return node["agent_ids"], node["user_ids"], node.get("user_id", "absent")

    assert who(SEG_DANA) == (["claude-code"], ["dana"], "dana")
    assert who(SEG_ELI) == (["codex"], ["eli"], "eli")  # an event without a user counts for none
    assert who(SEG_PAIR) == (["claude-code"], ["dana", "eli"], None)
    assert who(DAY16) == (["claude-code"], ["dana"], "absent")
    assert who(DAY17) == (["claude-code", "codex"], ["dana", "eli"], "absent")
    assert who(YEAR) == (["claude-code", "codex"], ["dana", "eli"], "absent")


def test_openapi_tells_the_filters_and_the_attribution(team: Stack) -> None:
    spec = call(team, "GET", "/openapi.json")
    node = spec["components"]["schemas"]["NodeAnswer"]
    assert {"agent_ids", "user_ids"} <= set(node["required"])
    for path, method in (("/v1/toc", "get"), ("/v1/toc/nodes/{node_id}/children", "get"),
                         ("/v1/topics", "get")):  # fmt: skip
        names = {p["name"] for p in spec["paths"][path][method]["parameters"]}
        assert "user_id" in names, path
    for name in ("TocSearch", "TopicSearch"):
        assert "user_id" in spec["components"]["schemas"][name]["properties"], name


def test_topics_filter_by_user(team: Stack) -> None:
    def listed(user: str | None) -> list[str]:
        params = {"project_id": P} | ({"user_id": user} if user else {})
        found = call(team, "GET", "/v1/topics", params=params)["topics"]
        return sorted(t["topic_id"] for t in found)

    def searched(user: str | None) -> list[str]:
        body = {"query": "billing invoices", "project_id": P} | ({"user_id": user} if user else {})
        found = call(team, "POST", "/v1/topics/search", json=body)["topics"]
        return sorted(t["topic_id"] for t in found)

    assert listed(None) == ["topic:dana", "topic:team"]
    assert listed("dana") == ["topic:dana", "topic:team"]  # the pairing session is Dana's too
    assert listed("eli") == ["topic:team"]
    assert listed("zoe") == []
    assert searched(None) == ["topic:dana", "topic:team"]
    assert searched("eli") == ["topic:team"]
    assert searched("zoe") == []
    # the topic is shown whole: its size counts every member, not only the user's
    team_topic = call(team, "GET", "/v1/topics", params={"user_id": "eli"})["topics"][0]
    assert team_topic["size"] == 2


@pytest.mark.parametrize(
    ("method", "path", "kw"),
    [
        ("GET", "/v1/toc", {"params": {"user_id": ""}}),
        ("GET", f"/v1/toc/nodes/{WEEK}/children", {"params": {"user_id": "a\x01b"}}),
        ("POST", "/v1/toc/search", {"json": {"query": "billing", "user_id": ""}}),
        ("GET", "/v1/topics", {"params": {"user_id": "x" * 201}}),
        ("POST", "/v1/topics/search", {"json": {"query": "billing", "user_id": 7}}),
    ],
)
def test_a_bad_user_id_is_a_422_naming_it(
    team: Stack, method: str, path: str, kw: dict[str, Any]
) -> None:
    body = call(team, method, path, 422, **kw)
    assert body["field"] == "user_id", body
