"""The TOC endpoints over HTTP, on the real query service and a TOC the real summarizer built.

One tree for the module (two projects, a segment with two versions, a week across the March /
April boundary); tokens are configured so that tenant isolation is checked as well.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import nats
import orjson
import pytest

from agent_memory_common.contracts.subjects import STREAM_TOC, toc_subject
from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.stack import Stack
from tests.toc_support import FakeEvent, toc_service_stack

OWNER = {"authorization": "Bearer tok-owner"}
STRANGER = {"authorization": "Bearer tok-stranger"}


class Tree:
    def __init__(self, stack: Stack, events: dict[str, list[FakeEvent]]) -> None:
        self.stack = stack
        self.events = events
        self.client = httpx.Client(base_url=stack.query_url, headers=OWNER, timeout=30)

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.client.get(path, params=params)

    def ok(self, path: str, **params: Any) -> Any:
        r = self.get(path, **params)
        assert r.status_code == 200, r.text
        return r.json()


@pytest.fixture(scope="module")
def tree(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with toc_service_stack(
        pg_server,
        tmp_path_factory.mktemp("toc-api"),
        AGENT_MEMORY_TOKENS="tok-owner:default,tok-stranger:acme",
    ) as (stack, events):
        t = Tree(stack, events)
        yield t
        t.client.close()


def error(r: httpx.Response, status: int, field: str | None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body: dict[str, Any] = r.json()
    assert body["field"] == field, body
    return body


def test_years_of_a_project_and_of_all(tree: Tree) -> None:
    data = tree.ok("/v1/toc", project_id="proj")
    assert [y["node_id"] for y in data["years"]] == ["year:2026@proj"]
    year = data["years"][0]
    assert year["title"].startswith("2026") and year["keywords"]
    assert year["child_count"] == 2 and year["version"] == 5  # March, April; 5 messages
    every = tree.ok("/v1/toc")
    assert {y["node_id"] for y in every["years"]} == {"year:2026@proj", "year:2026@other"}
    assert tree.ok("/v1/toc", project_id="nobody")["years"] == []


def test_descent_from_year_to_the_events_of_a_segment(tree: Tree) -> None:
    node_id = "year:2026@proj"
    path = [node_id]
    for level in ("month", "week", "day", "segment"):
        children = tree.ok(f"/v1/toc/nodes/{node_id}/children")["children"]
        assert children and all(c["level"] == level for c in children), children
        starts = [c["start_ts"] for c in children]
        assert starts == sorted(starts)
        node_id = children[-1]["node_id"] if level != "segment" else children[0]["node_id"]
        path.append(node_id)
    # the week of Mon 2026-03-30 belongs to April (its Thursday is April 2nd)
    assert path[:3] == ["year:2026@proj", "month:2026-04@proj", "week:2026-W14@proj"]
    assert path[3] == "day:2026-04-02@proj" and path[4] == "segment:sg_apr02"

    segment = tree.ok("/v1/toc/nodes/segment:sg_apr02")
    assert segment["level"] == "segment" and segment["parent_id"] == "day:2026-04-02@proj"
    assert 3 <= len(segment["bullets"]) <= 7
    assert segment["session_id"] == "c" and segment["event_ids"][0] == "apr02-00000"
    for bullet in segment["bullets"]:
        assert bullet["grips"], bullet
        assert bullet["kind"] in {
            "decision",
            "constraint",
            "definition",
            "procedure",
            "preference",
            "observation",
        }
    events = tree.ok("/v1/toc/nodes/segment:sg_apr02/children")
    assert [e["event_id"] for e in events["events"]] == [
        e.event_id for e in tree.events["sg_apr02"]
    ]
    assert events["children"] == [] and not any(e["overlap"] for e in events["events"])

    day = tree.ok("/v1/toc/nodes/week:2026-W14@proj")
    assert day["child_ids"] == [
        "day:2026-03-30@proj",
        "day:2026-03-31@proj",
        "day:2026-04-02@proj",
    ]
    for bullet in day["bullets"]:
        assert bullet["source_node_id"] in day["child_ids"]
        assert bullet["grips"] and bullet["grips"][0]["node_id"].startswith("segment:")


def test_old_versions_stay_readable(tree: Tree) -> None:
    latest = tree.ok("/v1/toc/nodes/segment:sg_mar31")
    assert latest["version"] == latest["latest_version"] == 2 and latest["is_latest"]
    assert len(latest["event_ids"]) == 12
    old = tree.ok("/v1/toc/nodes/segment:sg_mar31", version=1)
    assert old["version"] == 1 and not old["is_latest"] and len(old["event_ids"]) == 10
    day_v1 = tree.ok("/v1/toc/nodes/day:2026-03-31@proj", version=1)
    assert day_v1["version"] == 1 and day_v1["latest_version"] == 2
    error(tree.get("/v1/toc/nodes/segment:sg_mar31", version=9), 404, "version")
    error(tree.get("/v1/toc/nodes/segment:sg_mar31", version=0), 422, "version")
    error(tree.get("/v1/toc/nodes/segment:sg_mar31", version="x"), 422, "version")
    error(tree.get("/v1/toc/nodes/segment:nope"), 404, "node_id")
    error(tree.get("/v1/toc/nodes/segment:nope/children"), 404, "node_id")


def test_path_at_an_instant(tree: Tree) -> None:
    inside = tree.ok("/v1/toc/at", ts="2026-03-31T14:05:00Z", project_id="proj")
    assert inside["segment_id"] == "segment:sg_mar31"
    assert [n["node_id"] for n in inside["path"]] == [
        "year:2026@proj",
        "month:2026-04@proj",
        "week:2026-W14@proj",
        "day:2026-03-31@proj",
        "segment:sg_mar31",
    ]
    # epoch milliseconds work too; a quiet hour of a recorded day gives the calendar path
    quiet = tree.ok("/v1/toc/at", ts=str(1_774_947_600_000), project_id="proj")  # 03-31 09:00
    assert quiet["segment_id"] is None
    assert [n["level"] for n in quiet["path"]] == ["year", "month", "week", "day"]
    error(tree.get("/v1/toc/at", ts="2031-01-01T00:00:00Z", project_id="proj"), 404, "ts")
    error(tree.get("/v1/toc/at", ts="yesterday-ish", project_id="proj"), 422, "ts")
    error(tree.get("/v1/toc/at", ts="2026-03-31T14:05:00Z"), 422, "project_id")
    error(tree.get("/v1/toc/at", project_id="proj"), 422, "ts")


def test_grip_with_its_events_and_context(tree: Tree) -> None:
    segment = tree.ok("/v1/toc/nodes/segment:sg_mar30")
    grip = segment["bullets"][1]["grips"][0]
    full = tree.ok(f"/v1/grips/{grip['grip_id']}", context=2)
    (source,) = full["events"]
    assert source["event_id"] == grip["event_ids"][0]
    assert full["excerpt"].strip("…") in " ".join(source["text"].split())
    index = [e.event_id for e in tree.events["sg_mar30"]].index(source["event_id"])
    ids = [e.event_id for e in tree.events["sg_mar30"]]
    assert [e["event_id"] for e in full["before"]] == ids[max(0, index - 2) : index]
    assert [e["event_id"] for e in full["after"]] == ids[index + 1 : index + 3]
    none = tree.ok(f"/v1/grips/{grip['grip_id']}", context=0)
    assert none["before"] == none["after"] == []
    error(tree.get(f"/v1/grips/{grip['grip_id']}", context=-1), 422, "context")
    error(tree.get(f"/v1/grips/{grip['grip_id']}", context=51), 422, "context")
    error(tree.get("/v1/grips/grip:0000"), 404, "grip_id")


def search(tree: Tree, **body: Any) -> httpx.Response:
    return tree.client.post("/v1/toc/search", json=body)


def test_search_without_any_index(tree: Tree) -> None:
    r = search(tree, query="advisory lock replicas", project_id="proj")
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["terms"] == ["advisory", "lock", "replicas"]
    hits = data["hits"]
    assert hits and all(h["project_id"] == "proj" for h in hits)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    for hit in hits:
        assert hit["matched_terms"]
        for bullet in hit["bullets"]:
            assert bullet["grip_ids"]
    # a subtree: only nodes under March 30th (a word of a rule its user stated: the agent's
    # sentences are no memory unless a choice, so not always a bullet)
    under = search(tree, query="structlog", node_id="day:2026-03-30@proj").json()["hits"]
    mar30 = {"day:2026-03-30@proj", "segment:sg_mar30"}
    assert under and {h["node_id"] for h in under} <= mar30
    everywhere = search(tree, query="structlog", project_id="proj").json()["hits"]
    assert {h["node_id"] for h in everywhere} - mar30  # the word is said on other days too
    # a time range and levels
    ranged = search(
        tree,
        query="lock",
        since="2026-04-02T00:00:00Z",
        until=1_775_174_400_000,
        levels=["segment"],
    ).json()["hits"]
    assert {h["node_id"] for h in ranged} == {"segment:sg_apr02", "segment:sg_other"}
    # "lock" is a word prefix match, never inside another word
    assert search(tree, query="ock").json()["hits"] == []


def test_search_bad_input_names_the_field(tree: Tree) -> None:
    error(search(tree, query=""), 422, "query")
    error(search(tree, query="?! …"), 422, "query")
    error(search(tree, query="lock " * 300), 422, "query")
    error(search(tree), 422, "query")
    error(search(tree, query="lock", since="soon"), 422, "since")
    error(
        search(tree, query="lock", since=1_775_174_400_000, until=1_775_000_000_000), 422, "until"
    )
    error(search(tree, query="lock", levels=["century"]), 422, "levels[0]")
    error(search(tree, query="lock", limit=0), 422, "limit")
    error(search(tree, query="lock", color="red"), 422, "color")
    error(search(tree, query="lock", node_id="day:1999-01-01@proj"), 404, "node_id")


def last_toc_message(tree: Tree) -> dict[str, Any]:
    """The newest ``mem.toc`` message of project ``proj``, read from the stream."""

    async def read() -> dict[str, Any]:
        nc = await nats.connect(tree.stack.nats.url)
        try:
            msg = await nc.jetstream().get_last_msg(STREAM_TOC, toc_subject("default", "proj"))
            data: dict[str, Any] = orjson.loads(msg.data or b"{}")
            return data
        finally:
            await nc.close()

    return asyncio.run(read())


def test_pin_and_unpin_recompute_salience(tree: Tree) -> None:
    segment = tree.ok("/v1/toc/nodes/segment:sg_apr02")
    grip = segment["bullets"][0]["grips"][0]
    r = tree.client.post(f"/v1/memories/{grip['grip_id']}/pin")
    assert r.status_code == 200, r.text
    assert r.json() == {
        "memory_id": grip["grip_id"],
        "type": "grip",
        "pinned": True,
        "salience": pytest.approx(grip["salience"] + 0.2),
        "reindexed": True,
    }
    # the version that made the grip is announced again, pin included, for the indexers
    announced = last_toc_message(tree)
    assert announced["node_id"] == "segment:sg_apr02"
    by_grip = {g["grip_id"]: g for g in announced["grips"]}
    assert by_grip[grip["grip_id"]]["salience"] == pytest.approx(grip["salience"] + 0.2)
    again = tree.ok("/v1/toc/nodes/segment:sg_apr02")["bullets"][0]["grips"][0]
    assert again["pinned"] and again["salience"] == pytest.approx(grip["salience"] + 0.2)
    back = tree.client.post(f"/v1/memories/{grip['grip_id']}/unpin").json()
    assert back["pinned"] is False and back["salience"] == pytest.approx(grip["salience"])

    node = tree.client.post("/v1/memories/day:2026-04-02@proj/pin").json()
    assert node["type"] == "node" and node["pinned"] and node["reindexed"]
    announced = last_toc_message(tree)
    assert (announced["node_id"], announced["pinned"]) == ("day:2026-04-02@proj", True)
    assert announced["salience"] == pytest.approx(node["salience"])
    assert announced["version"] == tree.ok("/v1/toc/nodes/day:2026-04-02@proj")["version"]
    day = tree.ok("/v1/toc/nodes/day:2026-04-02@proj")
    assert day["pinned"] and day["salience"] == pytest.approx(node["salience"])
    unpinned = tree.client.post("/v1/memories/day:2026-04-02@proj/unpin").json()
    assert unpinned["salience"] == pytest.approx(node["salience"] - 0.2)
    error(tree.client.post("/v1/memories/grip:ffff/pin"), 404, "memory_id")
    error(tree.client.post("/v1/memories/day:1999-01-01@proj/unpin"), 404, "memory_id")


def test_other_tenants_see_nothing(tree: Tree) -> None:
    other = httpx.Client(base_url=tree.stack.query_url, headers=STRANGER, timeout=30)
    with other:
        assert other.get("/v1/toc").json()["years"] == []
        error(other.get("/v1/toc/nodes/year:2026@proj"), 404, "node_id")
        grip = tree.ok("/v1/toc/nodes/segment:sg_apr02")["bullets"][0]["grips"][0]["grip_id"]
        error(other.get(f"/v1/grips/{grip}"), 404, "grip_id")
        error(other.post(f"/v1/memories/{grip}/pin"), 404, "memory_id")
        assert other.post("/v1/toc/search", json={"query": "lock"}).json()["hits"] == []
        r = other.get("/v1/toc/at", params={"ts": "2026-03-31T14:05:00Z", "project_id": "proj"})
        error(r, 404, "ts")
    assert plain_http.get(f"{tree.stack.query_url}/v1/toc").status_code == 401
