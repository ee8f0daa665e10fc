"""API keys with roles, bound keys and sharing strategies, on the real gateway, recorder, query
service, nats-server and Postgres (docs/team.md)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import drained, eventually, make_event
from tests.stack import Stack, module_stack

BOOT = {"authorization": "Bearer boot-token"}


@pytest.fixture(scope="module")
def team(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        AGENT_MEMORY_TOKENS="boot-token:acme,other-boot:globex",
        AGENT_MEMORY_KEY_CACHE_S="0",  # a revocation shows at once (the default caches 5 s)
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    ) as s:
        yield s


def issue(stack: Stack, headers: dict[str, str] = BOOT, **body: Any) -> dict[str, Any]:
    r = plain_http.post(f"{stack.query_url}/v1/keys", json=body, headers=headers)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def bearer(key: dict[str, Any]) -> dict[str, str]:
    return {"authorization": f"Bearer {key['secret']}"}


def post(stack: Stack, body: Any, headers: dict[str, str]) -> httpx.Response:
    return plain_http.post(f"{stack.gateway_url}/v1/events", json=body, headers=headers)


def test_secret_is_shown_once_and_only_its_hash_is_stored(team: Stack) -> None:
    key = issue(team, role="reader", label="dana's laptop", expires="90d")
    assert key["secret"].startswith(f"amk_{key['key_id']}_") and key["tenant"] == "acme"
    assert key["expires_at"] is not None
    listed = plain_http.get(f"{team.query_url}/v1/keys", headers=BOOT).json()["keys"]
    mine = next(k for k in listed if k["key_id"] == key["key_id"])
    assert "secret" not in mine and mine["label"] == "dana's laptop"
    assert key["secret"] not in plain_http.get(f"{team.query_url}/v1/keys", headers=BOOT).text
    import psycopg

    with psycopg.connect(team.pg_dsn) as conn:
        row = conn.execute(
            "SELECT secret_hash FROM api_keys WHERE key_id = %s", (key["key_id"],)
        ).fetchone()
    assert row is not None and len(bytes(row[0])) == 32  # sha256, not the secret
    assert key["secret"].encode() not in bytes(row[0])
    # another tenant's admin does not see it
    other = plain_http.get(
        f"{team.query_url}/v1/keys", headers={"authorization": "Bearer other-boot"}
    ).json()
    assert key["key_id"] not in {k["key_id"] for k in other["keys"]}


def test_bad_key_requests_name_the_field(team: Stack) -> None:
    for body, field in (
        ({"role": "owner"}, "role"),
        ({"role": "reader", "expires": "soon"}, "expires"),
        ({"role": "reader", "expires": "0d"}, "expires"),
        ({"role": "reader", "extra": 1}, "extra"),
    ):
        r = plain_http.post(f"{team.query_url}/v1/keys", json=body, headers=BOOT)
        assert r.status_code == 422, r.text
        assert r.json()["field"] == field
    missing = plain_http.delete(f"{team.query_url}/v1/keys/nope", headers=BOOT)
    assert missing.status_code == 404 and missing.json()["field"] == "key_id"


def test_roles_reader_writer_admin(team: Stack) -> None:
    reader, writer = issue(team, role="reader"), issue(team, role="writer")
    r = post(team, make_event(1, project="roles"), bearer(reader))
    assert r.status_code == 403 and "writer" in r.json()["message"]
    assert post(team, make_event(1, project="roles"), bearer(writer)).status_code == 202
    eventually(lambda: drained(team.query_url, 1, bearer(reader)), what="the event")
    got = plain_http.get(
        f"{team.query_url}/v1/events", params={"project_id": "roles"}, headers=bearer(reader)
    )
    assert got.status_code == 200 and len(got.json()["events"]) == 1
    # a writer may not issue keys nor change sharing; a reader may not pin
    assert (
        plain_http.post(
            f"{team.query_url}/v1/keys", json={"role": "admin"}, headers=bearer(writer)
        ).status_code
        == 403
    )
    assert (
        plain_http.put(
            f"{team.query_url}/v1/projects/roles/sharing",
            json={"strategy": "team"},
            headers=bearer(writer),
        ).status_code
        == 403
    )
    pin = plain_http.post(f"{team.query_url}/v1/memories/n_x/pin", headers=bearer(reader))
    assert pin.status_code == 403


def test_revoked_and_expired_keys_are_refused(team: Stack) -> None:
    key = issue(team, role="writer")
    assert post(team, make_event(1, project="rev"), bearer(key)).status_code == 202
    revoked = plain_http.delete(f"{team.query_url}/v1/keys/{key['key_id']}", headers=BOOT)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    assert post(team, make_event(2, project="rev"), bearer(key)).status_code == 401
    assert plain_http.get(f"{team.query_url}/v1/events", headers=bearer(key)).status_code == 401
    # a tampered secret of a live key is refused too
    live = issue(team, role="reader")
    forged = {"authorization": f"Bearer {live['secret'][:-2]}xx"}
    assert plain_http.get(f"{team.query_url}/v1/status", headers=forged).status_code == 401
    import psycopg

    with psycopg.connect(team.pg_dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE key_id = %s",
            (live["key_id"],),
        )
    assert plain_http.get(f"{team.query_url}/v1/status", headers=bearer(live)).status_code == 401


def test_bound_key_writes_only_as_its_agent_user_and_projects(team: Stack) -> None:
    key = issue(team, role="writer", agent_id="codex", user_id="dana", projects=["web"])
    h = bearer(key)
    wrong_agent = post(team, {"events": [make_event(1, project="web")]}, h)
    assert wrong_agent.status_code == 403
    assert wrong_agent.json()["field"] == "events[0].agent_id"
    wrong_user = post(team, make_event(1, project="web", agent_id="codex", user_id="eve"), h)
    assert wrong_user.status_code == 403 and wrong_user.json()["field"] == "user_id"
    wrong_project = post(team, make_event(1, project="api", agent_id="codex"), h)
    assert wrong_project.status_code == 403 and wrong_project.json()["field"] == "project_id"
    # a missing user_id is filled in from the key
    batch = [make_event(i, project="web", agent_id="codex", session="b1") for i in (11, 12)]
    assert post(team, {"events": batch}, h).status_code == 202

    def stored() -> list[dict[str, Any]] | None:
        r = plain_http.get(f"{team.query_url}/v1/events", params={"project_id": "web"}, headers=h)
        events: list[dict[str, Any]] = r.json()["events"]
        return events if len(events) == 2 else None

    events = eventually(stored, what="the bound key's events")
    assert {e["user_id"] for e in events} == {"dana"}
    # reads are bounded too: another project, or none named, is refused
    other = plain_http.get(f"{team.query_url}/v1/projects/api/sharing", headers=h)
    assert other.status_code == 403
    search = plain_http.post(
        f"{team.query_url}/v1/search", json={"query": "x", "project_id": "api"}, headers=h
    )
    assert search.status_code == 403 and search.json()["field"] == "project_id"


def test_sharing_strategies(team: Stack) -> None:
    url = f"{team.query_url}/v1/projects/shared/sharing"
    assert plain_http.get(url, headers=BOOT).json()["strategy"] == "unified"
    bad = plain_http.put(url, json={"strategy": "open"}, headers=BOOT)
    assert bad.status_code == 422 and bad.json()["field"] == "strategy"
    claude = issue(team, role="writer", agent_id="claude-code", user_id="dana")
    codex = issue(team, role="writer", agent_id="codex", user_id="lee")
    text = "the deploy pipeline uses blue green releases"
    assert post(team, make_event(21, project="shared", text=text), bearer(claude)).status_code
    assert (
        post(
            team,
            make_event(
                22,
                project="shared",
                session="s2",
                agent_id="codex",
                text="codex rewrote the deploy pipeline config in yaml",
            ),
            bearer(codex),
        ).status_code
        == 202
    )
    eventually(
        lambda: (
            len(
                plain_http.get(
                    f"{team.query_url}/v1/events", params={"project_id": "shared"}, headers=BOOT
                ).json()["events"]
            )
            == 2
        ),
        what="both agents' events",
    )

    def search(headers: dict[str, str], **extra: Any) -> list[dict[str, Any]]:
        # the raw-scan tier: this stack runs no indexer, the events are in Postgres only
        body = {
            "query": "deploy pipeline blue green",
            "project_id": "shared",
            "tiers": ["scan"],
            **extra,
        }
        r = plain_http.post(f"{team.query_url}/v1/search", json=body, headers=headers)
        assert r.status_code == 200, r.text
        results: list[dict[str, Any]] = r.json()["results"]
        return results

    def agents(results: list[dict[str, Any]]) -> set[tuple[str, str | None]]:
        return {(r["agent_id"], r["user_id"]) for r in results if r["type"] == "event"}

    both = {("claude-code", "dana"), ("codex", "lee")}
    # unified (default): each agent sees the other's session; results say agent and user
    seen: list[Any] = []

    def unified() -> bool:
        seen[:] = search(bearer(codex))
        return agents(seen) == both

    try:
        eventually(unified, what="unified search")
    except AssertionError:
        raise AssertionError(seen) from None
    # separate: an agent-bound key reads only its own agent's memories
    assert plain_http.put(url, json={"strategy": "separate"}, headers=BOOT).json()["strategy"] == (
        "separate"
    )
    assert agents(search(bearer(codex))) == {("codex", "lee")}
    assert agents(search(bearer(claude))) == {("claude-code", "dana")}
    refused = plain_http.post(
        f"{team.query_url}/v1/search",
        json={"query": "deploy", "project_id": "shared", "agent_id": "claude-code"},
        headers=bearer(codex),
    )
    assert refused.status_code == 403 and refused.json()["field"] == "agent_id"
    assert agents(search(BOOT)) == both  # an unbound admin key still sees every agent
    # team: everyone shares, and search filters by user
    plain_http.put(url, json={"strategy": "team"}, headers=BOOT)
    assert agents(search(bearer(codex))) == both
    assert agents(search(bearer(codex), user_id="dana")) == {("claude-code", "dana")}
    got = plain_http.get(
        f"{team.query_url}/v1/search",
        params={"q": "deploy pipeline", "project_id": "shared", "user_id": "lee", "tiers": "scan"},
        headers=bearer(claude),
    )
    assert {r["user_id"] for r in got.json()["results"]} == {"lee"}


def test_cli_keys_create_list_revoke(team: Stack) -> None:
    env = {**team.env}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_memory_cli", "admin", "keys", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,  # each run imports the whole CLI: slow on a busy machine
        )

    made = cli(
        "create",
        "--tenant",
        "acme",
        "--role",
        "writer",
        "--agent",
        "gemini",
        "--projects",
        "web,api",
        "--expires",
        "30d",
    )
    assert made.returncode == 0, made.stderr
    secret = next(w for w in made.stdout.split() if w.startswith("amk_"))
    key_id = secret.split("_")[1]
    h = {"authorization": f"Bearer {secret}"}
    assert post(team, make_event(31, project="api", agent_id="gemini"), h).status_code == 202
    listed = cli("list", "--tenant", "acme")
    assert listed.returncode == 0 and key_id in listed.stdout and secret not in listed.stdout
    assert cli("revoke", key_id).returncode == 0
    assert post(team, make_event(32, project="api", agent_id="gemini"), h).status_code == 401
