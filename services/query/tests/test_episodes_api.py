"""Episodes and the playbook over HTTP on the real query service (Postgres, migration 0006)."""

from __future__ import annotations

import httpx
import pytest

from agent_memory_client import AgentMemoryClient, ApiError
from agent_memory_client.types import EpisodeAction
from tests.stack import Stack


def client_of(stack: Stack) -> AgentMemoryClient:
    return AgentMemoryClient(gateway_url=stack.gateway_url, query_url=stack.query_url)


async def test_episode_lifecycle_is_idempotent(lean_stack: Stack) -> None:
    async with client_of(lean_stack) as client:
        ep = await client.start_episode(
            "Fix the flaky login test", project_id="ep1", agent_id="a", episode_id="ep-1"
        )
        assert ep["status"] == "running" and ep["memory_kind"] == "episode"
        again = await client.start_episode(
            "Fix the flaky login test", project_id="ep1", episode_id="ep-1"
        )
        assert again["started_at"] == ep["started_at"]
        with pytest.raises(ApiError) as clash:
            await client.start_episode("Another task", project_id="ep1", episode_id="ep-1")
        assert clash.value.status == 409

        actions: list[EpisodeAction] = [
            {"action_id": "a1", "action": "ran pytest -k login", "result": "1 failed", "ok": False},
            {"action_id": "a2", "action": "added a wait for the session cookie", "ok": True},
        ]
        first = await client.add_actions("ep-1", actions)
        assert first["actions_count"] == 2
        retried = await client.add_actions("ep-1", actions)  # a retry changes nothing
        assert retried["actions_count"] == 2

        done = await client.complete_episode(
            "ep-1", "success", lessons=["wait for the session cookie before asserting"]
        )
        assert done["outcome"] == "success" and done["value"] == 1.0
        same = await client.complete_episode(
            "ep-1", "success", lessons=["wait for the session cookie before asserting"]
        )
        assert same["completed_at"] == done["completed_at"]
        with pytest.raises(ApiError) as twice:
            await client.complete_episode("ep-1", "failure")
        assert twice.value.status == 409 and twice.value.field == "outcome"
        with pytest.raises(ApiError) as late:
            await client.add_actions("ep-1", [{"action": "one more thing"}])
        assert late.value.status == 409

        full = await client.episode("ep-1")
        assert [a["action_id"] for a in full["actions"]] == ["a1", "a2"]
        assert full["actions"][0]["ok"] is False


async def test_similar_episodes_rank_by_text_and_value(lean_stack: Stack) -> None:
    async with client_of(lean_stack) as client:
        runs = [
            (
                "s1",
                "Migrate the postgres schema for billing",
                "success",
                ["run migrations in a transaction"],
            ),
            ("s2", "Migrate the postgres schema for users", "failure", []),
            ("s3", "Write the release notes", "success", []),
        ]
        for eid, task, outcome, lessons in runs:
            await client.start_episode(task, project_id="ep2", episode_id=eid)
            await client.complete_episode(eid, outcome, lessons=lessons)  # type: ignore[arg-type]
        await client.start_episode("Migrate postgres again", project_id="ep2", episode_id="s4")

        found = await client.similar_episodes("postgres schema migration", project_id="ep2")
        # the running one is not a past episode; the unrelated one does not match
        assert [e["episode_id"] for e in found] == ["s1", "s2"]
        assert found[0]["score"] > found[1]["score"] > 0
        assert found[1]["value"] == 0.2  # a failure that taught nothing
        failures = await client.similar_episodes("postgres", project_id="ep2", outcome="failure")
        assert [e["episode_id"] for e in failures] == ["s2"]
        assert await client.similar_episodes("postgres", project_id="other") == []
        assert await client.similar_episodes("the of and", project_id="ep2") == []


async def test_bad_episode_input_names_the_field(lean_stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=lean_stack.query_url) as http:
        cases = [
            ("/v1/episodes", {"project_id": "p"}, "task"),
            ("/v1/episodes", {"task": "t", "project_id": "p", "colour": 1}, "colour"),
        ]
        for path, body, field in cases:
            r = await http.post(path, json=body)
            assert r.status_code == 422, r.text
            assert r.json()["field"] == field
        r = await http.post("/v1/episodes/nope/complete", json={"outcome": "won"})
        assert r.status_code == 422 and r.json()["field"] == "outcome"
        r = await http.post("/v1/episodes/nope/complete", json={"outcome": "success"})
        assert r.status_code == 404
        r = await http.post("/v1/episodes/nope/actions", json={"actions": [{"action": "x"}]})
        assert r.status_code == 404
        r = await http.post(
            "/v1/episodes/nope/actions", json={"actions": [{"action": "x", "ts": "soon"}]}
        )
        assert r.status_code == 422 and "actions[0]" in r.json()["field"]
        r = await http.get("/v1/episodes/similar")
        assert r.status_code == 422 and r.json()["field"] == "q"


async def test_playbook_curator_merges_by_meaning_and_counts(lean_stack: Stack) -> None:
    async with client_of(lean_stack) as client:
        added = await client.curate(
            "pb1",
            [
                {"text": "Run pytest before committing", "mark": "+"},
                {"text": "Apply database migrations in order", "mark": "o"},
            ],
            agent_id="agent-a",
        )
        assert [r["action"] for r in added] == ["added", "added"]
        # another agent, other words, same meaning (shared terms): merged, counted
        merged = await client.curate(
            "pb1",
            [
                {"text": "Before committing, run pytest", "mark": "+"},
                {"text": "The database migrations must be applied in order", "mark": "-"},
                {"text": "Prefer small pull requests", "mark": "o"},
            ],
            agent_id="agent-b",
        )
        assert [r["action"] for r in merged] == ["merged", "merged", "added"]
        assert merged[0]["id"] == added[0]["id"] and merged[1]["id"] == added[1]["id"]
        marked = await client.curate("pb1", [{"id": added[0]["id"], "mark": "+"}])
        assert marked == [{"id": added[0]["id"], "action": "marked", "similarity": None}]

        entries = {e["id"]: e for e in await client.playbook("pb1")}
        assert len(entries) == 3
        pytest_entry = entries[added[0]["id"]]
        assert (pytest_entry["helpful"], pytest_entry["harmful"], pytest_entry["uses"]) == (3, 0, 3)
        migration_entry = entries[added[1]["id"]]
        assert (migration_entry["neutral"], migration_entry["harmful"]) == (1, 1)

        # the generator's view: most relevant to the task first
        ranked = await client.playbook("pb1", q="commit the fix once pytest passes", limit=2)
        assert ranked[0]["id"] == added[0]["id"] and len(ranked) == 2
        assert ranked[0]["score"] > ranked[1]["score"]
        ranked = await client.playbook("pb1", q="add a migration for the orders table", limit=1)
        assert [e["id"] for e in ranked] == [added[1]["id"]]
        # the playbook is per project
        assert await client.playbook("pb2") == []


async def test_playbook_submission_is_counted_once_and_bad_input_refused(
    lean_stack: Stack,
) -> None:
    body = {
        "entries": [{"text": "Use uv lock after editing dependencies", "mark": "+"}],
        "submission_id": "run-42",
    }
    async with httpx.AsyncClient(base_url=lean_stack.query_url) as http:
        first = await http.post("/v1/playbooks/pb3/entries", json=body)
        again = await http.post("/v1/playbooks/pb3/entries", json=body)
        assert first.status_code == again.status_code == 200
        assert first.json()["results"] == again.json()["results"]
        entries = (await http.get("/v1/playbooks/pb3/entries")).json()["entries"]
        assert [e["helpful"] for e in entries] == [1]

        both = {"entries": [{"text": "x", "id": "y"}]}
        r = await http.post("/v1/playbooks/pb3/entries", json=both)
        assert r.status_code == 422 and r.json()["field"] == "entries[0]"
        r = await http.post(
            "/v1/playbooks/pb3/entries", json={"entries": [{"text": "x", "mark": "!"}]}
        )
        assert r.status_code == 422 and r.json()["field"] == "entries[0].mark"
        r = await http.post("/v1/playbooks/pb3/entries", json={"entries": [{"id": "missing"}]})
        assert r.status_code == 404 and r.json()["field"] == "entries[0].id"
        r = await http.post("/v1/playbooks/pb3/entries", json={"entries": []})
        assert r.status_code == 422 and r.json()["field"] == "entries"
