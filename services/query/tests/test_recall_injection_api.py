"""A project's recall injection switch and what injection costs it (issue 54, point 5), on a
real query service, recorder and Postgres: ``GET/PUT /v1/projects/{id}/recall``,
``GET /v1/recall/projects``, the brief and ``POST /v1/recall`` when a project is off, the tokens
kept per project and session (also through an outage of the table), an erasure taking them
away, and ``agent-memory recall`` / ``agent-memory status`` printing them.

Recall's given answers need the sentence model: ``tests/test_recall_e2e.py`` turns a project
off and on there. Here the brief gives the tokens (it reads the event log, no model).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from agent_memory_cli.__main__ import main
from tests import plain_http
from tests.helpers import drained, eventually, make_event, scrape, value
from tests.stack import Stack

PROJECT = "inj"
QUIET = "inj-quiet"
Cli = Callable[..., tuple[int, str]]


@pytest.fixture(scope="module")
def stored(lean_stack: Stack) -> Stack:
    """A last session (its goal and outcome make a brief) in ``inj``, ``inj-quiet`` and the
    project an erasure takes away."""
    events = [
        make_event(0, project=PROJECT, session="old", text="Please move billing to cents."),
        make_event(1, project=PROJECT, session="old", text="Done: billing stores cents now."),
        make_event(2, project=QUIET, session="q-1", text="What does the cron job archive?"),
        make_event(3, project=QUIET, session="q-1", text="It archives last month's logs."),
        make_event(4, project="inj-erase", session="gone", text="Start the gone session."),
        make_event(5, project="inj-erase", session="gone", text="The gone session replies."),
    ]
    r = plain_http.post(f"{lean_stack.gateway_url}/v1/events", json={"events": events})
    assert r.status_code == 202, r.text
    eventually(lambda: drained(lean_stack.query_url, len(events)), what="the events stored")
    return lean_stack


def _url(stack: Stack, project: str = PROJECT) -> str:
    return f"{stack.query_url}/v1/projects/{project}/recall"


def switch(stack: Stack, injection: str, project: str = PROJECT) -> dict[str, Any]:
    r = plain_http.put(_url(stack, project), json={"injection": injection}, timeout=10)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def brief(stack: Stack, session: str, project: str = PROJECT) -> dict[str, Any]:
    r = plain_http.get(
        f"{stack.query_url}/v1/projects/{project}/brief",
        params={"session_id": session},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def recall(stack: Stack, session: str, prompt: str, project: str = PROJECT) -> dict[str, Any]:
    body = {"project_id": project, "session_id": session, "prompt": prompt}
    r = plain_http.post(f"{stack.query_url}/v1/recall", json=body, timeout=30)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def usage(stack: Stack, project: str = PROJECT) -> dict[str, Any]:
    r = plain_http.get(_url(stack, project), params={"sessions": 100}, timeout=10)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def session_cost(stack: Stack, session: str, project: str = PROJECT) -> dict[str, Any] | None:
    return next((s for s in usage(stack, project)["sessions"] if s["session_id"] == session), None)


def test_off_silences_the_brief_and_recall_on_gives_again(stored: Stack) -> None:
    fresh = usage(stored)
    assert (fresh["injection"], fresh["updated_at"]) == ("on", None)
    assert [w["days"] for w in fresh["windows"]] == [1, 7, 30]
    before = brief(stored, "b-1")
    assert before["injection"] == "on" and "billing" in before["context"], before
    try:
        off = switch(stored, "off")
        assert off["injection"] == "off" and off["updated_at"] is not None
        assert usage(stored)["injection"] == "off"
        silent = brief(stored, "b-2")
        assert silent == {
            "project_id": PROJECT,
            "context": "",
            "tokens": 0,
            "budget_tokens": 1500,
            "ids": [],
            "injection": "off",
        }
        asked = recall(stored, "r-1", "where does billing store money amounts now?")
        assert (asked["silence"], asked["context"], asked["memories"]) == ("off", "", [])
        assert brief(stored, "b-2", project=QUIET)["context"]  # another project: untouched
        metrics = scrape(stored.query_url)
        assert value(metrics, "agent_memory_recall_answers_total", kind="brief", outcome="off")
        assert value(metrics, "agent_memory_recall_answers_total", kind="recall", outcome="off")
    finally:
        switch(stored, "on")
    assert brief(stored, "b-3") == {**before, "injection": "on"}


def test_tokens_are_kept_per_project_and_session(stored: Stack) -> None:
    tokens = brief(stored, "cost-1")["tokens"]
    assert tokens > 0
    brief(stored, "cost-1")
    brief(stored, "cost-2")
    assert recall(stored, "cost-2", "ok")["silence"] == "too_short"  # asked, nothing given
    expected = {
        "cost-1": {"answers": 2, "given": 2, "tokens": 2 * tokens},
        "cost-2": {"answers": 2, "given": 1, "tokens": tokens},
    }

    def recorded() -> bool:
        return all(
            (cost := session_cost(stored, session)) is not None
            and {k: cost[k] for k in want} == want
            for session, want in expected.items()
        )

    eventually(recorded, timeout=10, what="the answers counted per session")
    answer = usage(stored)
    today = answer["windows"][0]
    assert today["days"] == 1 and today["brief"]["tokens"] >= 3 * tokens
    assert today["recall"]["answers"] >= 1 and today["recall"]["tokens"] == 0
    assert today["tokens"] == today["brief"]["tokens"] + today["recall"]["tokens"]
    assert all(w["tokens"] >= today["tokens"] for w in answer["windows"])
    tops = [s["tokens"] for s in answer["sessions"]]
    assert tops == sorted(tops, reverse=True)
    assert plain_http.get(_url(stored), params={"sessions": 1}).json()["sessions"] == [
        answer["sessions"][0]
    ]

    listed = plain_http.get(f"{stored.query_url}/v1/recall/projects", timeout=10).json()
    by_project = {p["project_id"]: p for p in listed["projects"]}
    assert by_project[PROJECT]["windows"][1]["tokens"] >= 3 * tokens
    assert listed["projects"][0]["project_id"] == PROJECT  # the most tokens over 7 days first


def test_a_failed_write_never_fails_the_answer_and_is_retried(stored: Stack) -> None:
    """The table away (a real Postgres error on every flush), the brief still answers; its
    count is kept and written once the table is back, once."""
    with psycopg.connect(stored.pg_dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE recall_usage RENAME TO recall_usage_away")
        try:
            answer = brief(stored, "outage-1")
            assert answer["tokens"] > 0
            time.sleep(1.5)  # three flushes, each refused
            rows = conn.execute(
                "SELECT count(*) FROM recall_usage_away WHERE session_id = 'outage-1'"
            ).fetchone()
            assert rows == (0,)
        finally:
            conn.execute("ALTER TABLE recall_usage_away RENAME TO recall_usage")
    cost = eventually(lambda: session_cost(stored, "outage-1"), timeout=10, what="retried")
    time.sleep(1)  # a second write of the same counts would show by now
    cost = session_cost(stored, "outage-1")
    assert cost is not None
    assert (cost["answers"], cost["given"], cost["tokens"]) == (1, 1, answer["tokens"])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"injection": "maybe"}, "injection"),
        ({"injection": True}, "injection"),
        ({}, "injection"),
        ({"injection": "off", "project": "x"}, "project"),
    ],
)
def test_a_bad_body_is_a_422_naming_the_field(
    stored: Stack, body: dict[str, object], field: str
) -> None:
    r = plain_http.put(_url(stored), json=body, timeout=10)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field, r.json()
    assert usage(stored)["injection"] == "on"


def test_a_bad_parameter_is_a_422_naming_it(stored: Stack) -> None:
    r = plain_http.get(_url(stored), params={"sessions": 1000}, timeout=10)
    assert r.status_code == 422 and r.json()["field"] == "sessions", r.text


def test_the_api_document_types_the_routes(stored: Stack) -> None:
    doc = plain_http.get(f"{stored.query_url}/openapi.json", timeout=10).json()
    route = doc["paths"]["/v1/projects/{project_id}/recall"]
    assert set(route) >= {"get", "put"}
    body = route["put"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    update = doc["components"]["schemas"][body.rsplit("/", 1)[1]]
    assert update["properties"]["injection"]["enum"] == ["on", "off"]
    assert update["additionalProperties"] is False
    answer = route["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert answer.endswith("/ProjectRecall")
    assert "/v1/recall/projects" in doc["paths"]


def test_an_erasure_takes_the_session_s_counts_away(stored: Stack) -> None:
    brief(stored, "gone", project="inj-erase")
    brief(stored, "kept", project="inj-erase")
    eventually(
        lambda: (
            session_cost(stored, "gone", "inj-erase") and session_cost(stored, "kept", "inj-erase")
        ),
        timeout=10,
        what="both sessions counted",
    )
    body = {"project_id": "inj-erase", "scope": {"session_id": "gone"}}
    r = plain_http.post(f"{stored.query_url}/v1/erasures", json=body, timeout=30)
    assert r.status_code == 202, r.text
    erasure = r.json()["erasure_id"]

    def reported() -> dict[str, Any] | None:
        receipt = plain_http.get(f"{stored.query_url}/v1/erasures/{erasure}", timeout=10).json()
        part: dict[str, Any] | None = receipt["participants"].get("query")
        return part

    assert eventually(reported, timeout=60, what="the query service's report")["recall_usage"] == 1
    assert session_cost(stored, "gone", "inj-erase") is None
    assert session_cost(stored, "kept", "inj-erase") is not None


@pytest.fixture
def cli(
    stored: Stack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Cli]:
    monkeypatch.setenv("AGENT_MEMORY_QUERY__PORT", stored.query_url.rsplit(":", 1)[1])

    def run(*argv: str) -> tuple[int, str]:
        code = main(list(argv))
        return code, capsys.readouterr().out

    yield run


def test_the_cli_turns_it_off_and_on_and_shows_the_cost(cli: Cli, stored: Stack) -> None:
    code, out = cli("recall", "off", "--project", QUIET)
    assert code == 0, out
    assert f"recall injection is off for project {QUIET}" in out
    try:
        assert brief(stored, "q-2", project=QUIET)["injection"] == "off"
        code, out = cli("status")
        assert code == 0, out
        assert "recall injected (tokens given unasked; UTC days):" in out
        lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  inj")}
        assert lines[QUIET].endswith("injection OFF"), out
        today = usage(stored)["windows"][0]["tokens"]
        assert lines[PROJECT].split()[1] == f"{today:,}", out  # today's tokens
        assert "injection OFF" not in lines[PROJECT]
    finally:
        code, out = cli("recall", "on", "--project", QUIET)
    assert code == 0 and f"recall injection is on for project {QUIET}" in out
    assert brief(stored, "q-3", project=QUIET)["injection"] == "on"

    code, out = cli("recall", "status", "--project", PROJECT)
    assert code == 0, out
    assert out.startswith(f"recall injection for {PROJECT}: on")
    assert "tokens given" in out and "answers given/asked" in out
    assert "sessions given the most (30 d):" in out and "  cost-1 " in out
    code, out = cli("recall", "status", "--project", PROJECT, "--sessions", "500")
    assert code == 1 and "sessions" in out  # the API's 422, named
