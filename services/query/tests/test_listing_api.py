"""The listings over HTTP on real servers: gateway -> recorder -> segmenter -> summarizer, and
the query service reading the event log, the segments and the TOC they wrote."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.stack import Stack, module_stack

OWNER = {"authorization": "Bearer tok-owner"}
STRANGER = {"authorization": "Bearer tok-stranger"}


@pytest.fixture(scope="module")
def listed(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        AGENT_MEMORY_TOKENS="tok-owner:default,tok-stranger:acme",
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    ) as stack:
        for name in ("segmenter", "summarizer"):
            stack.start(name)
        closed = [
            make_event(i, project="alpha", session="s1", user_id="dana") for i in range(4)
        ] + [make_event(4, project="alpha", session="s1", user_id="dana", type="session_end")]
        # a live session (events of now): its last segment waits for the agent, open; one of
        # months ago would be closed seconds after its events are in (a historical session)
        now_ms = int(time.time() * 1000)
        still_open = [
            make_event(10 + i, project="alpha", session="s2", agent_id="codex", ts=now_ms + i)
            for i in range(2)
        ]
        other = [make_event(20, project="beta", session="s9")]
        post(stack, closed + still_open + other, OWNER)
        post(stack, [make_event(30, project="secret", session="x")], STRANGER)
        yield stack


def post(stack: Stack, events: list[dict[str, Any]], headers: dict[str, str]) -> None:
    r = plain_http.post(
        f"{stack.gateway_url}/v1/events", json={"events": events}, headers=headers, timeout=30
    )
    assert r.status_code == 202, r.text


def get(stack: Stack, path: str, headers: dict[str, str] = OWNER, **params: Any) -> Any:
    r = plain_http.get(f"{stack.query_url}{path}", params=params, headers=headers, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def test_a_project_is_listed_from_its_first_stored_event(listed: Stack) -> None:
    def alpha() -> dict[str, Any] | None:
        rows = {p["project_id"]: p for p in get(listed, "/v1/projects")["projects"]}
        p = rows.get("alpha")
        return p if p and p["events"] == 7 and "beta" in rows else None

    p = eventually(alpha, timeout=60, what="alpha listed with 7 events")
    assert p["sessions"] == 2 and p["agents"] == 2
    assert p["agent_ids"] == ["claude-code", "codex"]
    assert p["first_ts"] < p["last_ts"]
    assert set(p) >= {"open_segments", "closed_segments", "last_recorded_at"}


def test_sessions_carry_agents_users_span_and_latest_title(listed: Stack) -> None:
    def titled() -> dict[str, Any] | None:
        rows = {s["session_id"]: s for s in get(listed, "/v1/projects/alpha/sessions")["sessions"]}
        s1 = rows.get("s1")
        return rows if s1 and s1["latest_title"] else None

    rows = eventually(titled, timeout=120, what="s1 summarised")
    s1, s2 = rows["s1"], rows["s2"]
    assert s1["agent_ids"] == ["claude-code"] and s1["user_ids"] == ["dana"]
    assert s1["events"] == 5 and not s1["open"]
    assert s1["latest_node_id"].startswith("segment:")
    assert s2["agent_ids"] == ["codex"] and s2["user_ids"] == []
    assert s2["open"] and s2["latest_title"] is None
    project = next(p for p in get(listed, "/v1/projects")["projects"] if p["project_id"] == "alpha")
    assert project["open_segments"] == 1 and project["closed_segments"] == 1


def test_agents_listing_with_and_without_a_project(listed: Stack) -> None:
    eventually(lambda: len(get(listed, "/v1/agents")["agents"]) == 2, timeout=60, what="two agents")
    agents = {a["agent_id"]: a for a in get(listed, "/v1/agents")["agents"]}
    assert agents["claude-code"]["project_ids"] == ["alpha", "beta"]
    assert agents["claude-code"]["sessions"] == 2
    assert agents["codex"]["events"] == 2
    only_beta = get(listed, "/v1/agents", project_id="beta")["agents"]
    assert [a["agent_id"] for a in only_beta] == ["claude-code"]


def test_tenants_never_see_each_other(listed: Stack) -> None:
    eventually(lambda: get(listed, "/v1/projects", STRANGER)["projects"], timeout=60, what="secret")
    assert [p["project_id"] for p in get(listed, "/v1/projects", STRANGER)["projects"]] == [
        "secret"
    ]
    r = plain_http.get(f"{listed.query_url}/v1/projects/alpha/sessions", headers=STRANGER)
    assert r.status_code == 404 and r.json()["field"] == "project_id"
    (agent,) = get(listed, "/v1/agents", STRANGER)["agents"]
    assert agent["project_ids"] == ["secret"] and agent["events"] == 1


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/projects?limit=0", "limit"),
        ("/v1/agents?limit=5000", "limit"),
        ("/v1/projects/nope/sessions", "project_id"),
        ("/v1/agents?project_id=", "project_id"),
    ],
)
def test_bad_input_names_the_field(listed: Stack, path: str, field: str) -> None:
    r = plain_http.get(f"{listed.query_url}{path}", headers=OWNER)
    assert 400 <= r.status_code < 500, r.text
    body = r.json()
    assert body["field"] == field or field in str(body.get("details")), body


def test_without_a_token_listing_is_refused(listed: Stack) -> None:
    assert plain_http.get(f"{listed.query_url}/v1/projects").status_code == 401
