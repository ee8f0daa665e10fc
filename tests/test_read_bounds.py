"""Reads by id and listings stay inside a key's bounds (issue 17, docs/team.md), on the real
gateway, recorder, query service, nats-server and Postgres.

A key bound to project ``alpha`` gets 404, as for an unknown id, for an event, TOC node (and its
children), grip, pin, episode, topic or erasure receipt of project ``beta``, and 200 for those of
``alpha``; the listings of the event log show it ``alpha`` only. Under ``separate`` sharing a key
bound to an agent gets 404 for another agent's event or episode. TOC nodes, grips and topics are
written straight into their tables (this stack runs no summarizer or topics service).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.stack import Stack, module_stack
from tests.topics_support import theme_segment, write_toc

BOOT = {"authorization": "Bearer boot-token"}
TENANT = "acme"
PROJECTS = ("alpha", "beta")


@pytest.fixture(scope="module")
def team(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        AGENT_MEMORY_TOKENS="boot-token:acme",
        AGENT_MEMORY_KEY_CACHE_S="0",
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    ) as s:
        yield s


def issue(stack: Stack, **body: Any) -> dict[str, str]:
    r = plain_http.post(f"{stack.query_url}/v1/keys", json=body, headers=BOOT)
    assert r.status_code == 201, r.text
    return {"authorization": f"Bearer {r.json()['secret']}"}


def get(stack: Stack, path: str, headers: dict[str, str], **params: Any) -> httpx.Response:
    return plain_http.get(f"{stack.query_url}{path}", params=params, headers=headers, timeout=30)


def _events() -> list[dict[str, Any]]:
    return [
        make_event(1, project="alpha", session="sa"),
        make_event(2, project="beta", session="sb", agent_id="gemini"),
        make_event(3, project="sep", session="s-claude"),
        make_event(4, project="sep", session="s-codex", agent_id="codex"),
    ]


def _seed_tables(dsn: str) -> dict[str, dict[str, str]]:
    """A segment node, a grip and a topic in each project; their ids by project."""
    ids: dict[str, dict[str, str]] = {}
    end = datetime(2026, 1, 1, 12, tzinfo=UTC)
    nodes = [theme_segment(TENANT, p, "ci pipeline", 1, f"s{p[0]}", end) for p in PROJECTS]
    write_toc(dsn, nodes)
    with psycopg.connect(dsn) as conn:
        for project, node, event_id in zip(PROJECTS, nodes, ("e-000001", "e-000002"), strict=True):
            grip_id, topic_id = f"grip:{project}", f"topic:{project}"
            conn.execute(
                """INSERT INTO toc_grips (tenant, grip_id, project_id, node_id, node_version,
                       bullet_index, event_ids, excerpt, memory_kind, base_salience)
                   VALUES (%s, %s, %s, %s, 1, 0, %s, 'an excerpt', 'observation', 0.5)""",
                (TENANT, grip_id, project, node.node_id, [event_id]),
            )
            conn.execute(
                """INSERT INTO topics (tenant, topic_id, project_id, label, keywords, centroid)
                   VALUES (%s, %s, %s, 'ci pipeline', '{ci,pipeline}', '{1.0}')""",
                (TENANT, topic_id, project),
            )
            ids[project] = {"node": node.node_id, "grip": grip_id, "topic": topic_id}
    return ids


@pytest.fixture(scope="module")
def seeded(team: Stack) -> dict[str, dict[str, str]]:
    r = plain_http.post(f"{team.gateway_url}/v1/events", json={"events": _events()}, headers=BOOT)
    assert r.status_code == 202, r.text
    eventually(
        lambda: len(get(team, "/v1/events", BOOT).json()["events"]) == len(_events()),
        what="the events stored",
    )
    ids = _seed_tables(team.pg_dsn)
    for episode_id, project, agent in (
        ("ep-alpha", "alpha", "claude-code"),
        ("ep-beta", "beta", "gemini"),
        ("ep-sep-claude", "sep", "claude-code"),
        ("ep-sep-codex", "sep", "codex"),
    ):
        body = {"episode_id": episode_id, "task": "fix the build", "project_id": project}
        r = plain_http.post(
            f"{team.query_url}/v1/episodes", json=body | {"agent_id": agent}, headers=BOOT
        )
        assert r.status_code == 201, r.text
    for project in PROJECTS:
        scope = {"session_id": "no-such-session"}
        r = plain_http.post(
            f"{team.query_url}/v1/erasures",
            json={"project_id": project, "scope": scope},
            headers=BOOT,
        )
        assert r.status_code == 202, r.text
        ids[project]["erasure"] = r.json()["erasure_id"]
    ids["alpha"]["event"], ids["beta"]["event"] = "e-000001", "e-000002"
    ids["alpha"]["episode"], ids["beta"]["episode"] = "ep-alpha", "ep-beta"
    return ids


def _by_id_paths(ids: dict[str, str]) -> list[str]:
    return [
        f"/v1/events/{ids['event']}",
        f"/v1/toc/nodes/{ids['node']}",
        f"/v1/toc/nodes/{ids['node']}/children",
        f"/v1/grips/{ids['grip']}",
        f"/v1/episodes/{ids['episode']}",
        f"/v1/topics/{ids['topic']}",
        f"/v1/erasures/{ids['erasure']}",
    ]


def test_a_project_bound_key_reads_by_id_only_in_its_projects(
    team: Stack, seeded: dict[str, dict[str, str]]
) -> None:
    alpha = issue(team, role="admin", projects=["alpha"])  # admin: erasure receipts too
    for path in _by_id_paths(seeded["alpha"]):
        r = get(team, path, alpha)
        assert r.status_code == 200, (path, r.text)
    for path in _by_id_paths(seeded["beta"]):
        r = get(team, path, alpha)
        assert r.status_code == 404, (path, r.status_code, r.text)  # not 403: no hint it exists
        unknown = get(team, path.replace("beta", "gamma").replace("e-000002", "e-999999"), alpha)
        assert unknown.status_code == 404, path
        assert [r.json()[k] for k in ("error", "field")] == [
            unknown.json()[k] for k in ("error", "field")
        ], path  # the same answer as an unknown id
        assert get(team, path, BOOT).status_code == 200, path  # an unbound key reads it
    # a write by id is bounded the same way: pinning beta's grip is a 404, nothing changes
    pin = plain_http.post(
        f"{team.query_url}/v1/memories/{seeded['beta']['grip']}/pin", headers=alpha
    )
    assert pin.status_code == 404, pin.text
    assert get(team, f"/v1/grips/{seeded['beta']['grip']}", BOOT).json()["pinned"] is False
    mine = plain_http.post(
        f"{team.query_url}/v1/memories/{seeded['alpha']['grip']}/pin", headers=alpha
    )
    assert mine.status_code == 200, mine.text


def test_listings_show_a_bound_key_its_projects_only(
    team: Stack, seeded: dict[str, dict[str, str]]
) -> None:
    alpha = issue(team, role="reader", projects=["alpha"])
    projects = get(team, "/v1/projects", alpha).json()["projects"]
    assert [p["project_id"] for p in projects] == ["alpha"]
    everything = get(team, "/v1/projects", BOOT).json()["projects"]
    assert {p["project_id"] for p in everything} == {"alpha", "beta", "sep"}
    assert get(team, "/v1/projects/alpha/sessions", alpha).status_code == 200
    assert get(team, "/v1/projects/beta/sessions", alpha).status_code == 404
    agents = get(team, "/v1/agents", alpha).json()["agents"]
    assert [(a["agent_id"], a["project_ids"]) for a in agents] == [("claude-code", ["alpha"])]
    events = get(team, "/v1/events", alpha).json()["events"]
    assert {e["project_id"] for e in events} == {"alpha"}
    refused = get(team, "/v1/events", alpha, project_id="beta")
    assert refused.status_code == 403 and refused.json()["field"] == "project_id"
    # settings of another project: a 403 naming project_id, as for sharing
    for setting in ("sharing", "retention", "recall"):
        other = get(team, f"/v1/projects/beta/{setting}", alpha)
        assert other.status_code == 403 and other.json()["field"] == "project_id", setting
        assert get(team, f"/v1/projects/alpha/{setting}", alpha).status_code == 200, setting
    topics = get(team, "/v1/topics", alpha).json()["topics"]
    assert {t["project_id"] for t in topics} <= {"alpha"}


def test_separate_hides_other_agents_from_an_agent_bound_key(
    team: Stack, seeded: dict[str, dict[str, str]]
) -> None:
    codex = issue(team, role="reader", agent_id="codex")
    # unified (the default): another agent's event and episode are readable
    assert get(team, "/v1/events/e-000003", codex).status_code == 200
    assert get(team, "/v1/episodes/ep-sep-claude", codex).status_code == 200
    r = plain_http.put(
        f"{team.query_url}/v1/projects/sep/sharing", json={"strategy": "separate"}, headers=BOOT
    )
    assert r.status_code == 200, r.text
    assert get(team, "/v1/events/e-000003", codex).status_code == 404
    assert get(team, "/v1/episodes/ep-sep-claude", codex).status_code == 404
    assert get(team, "/v1/events/e-000004", codex).status_code == 200
    assert get(team, "/v1/episodes/ep-sep-codex", codex).status_code == 200
    listed = get(team, "/v1/events", codex, project_id="sep").json()["events"]
    assert [e["event_id"] for e in listed] == ["e-000004"]
    sessions = get(team, "/v1/projects/sep/sessions", codex).json()["sessions"]
    assert [s["session_id"] for s in sessions] == ["s-codex"]
    # what recall injected, by session: the same sessions as the listing
    for session in ("s-claude", "s-codex"):
        assert get(team, "/v1/projects/sep/brief", BOOT, session_id=session).status_code == 200

    def injected(headers: dict[str, str]) -> set[str]:
        cost = get(team, "/v1/projects/sep/recall", headers).json()["sessions"]
        return {s["session_id"] for s in cost}

    eventually(lambda: injected(BOOT) == {"s-claude", "s-codex"}, what="both briefs counted")
    assert injected(codex) == {"s-codex"}
    # other projects stay unified; an unbound key still reads every agent
    assert get(team, "/v1/events/e-000001", codex).status_code == 200
    assert get(team, "/v1/events/e-000003", BOOT).status_code == 200
