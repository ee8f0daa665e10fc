"""``agent-memory projects`` and ``agent-memory sessions PROJECT`` against the real gateway,
recorder and query service: what is stored, as the listing API answers it, newest first; a
project that does not exist and a limit out of range are refused with the field named."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator

import pytest

from agent_memory_cli.__main__ import main
from tests import plain_http
from tests.stack import Stack

Cli = Callable[..., tuple[int, str]]
DAY = 86_400_000
T0 = 1_764_547_200_000  # 2025-12-01T00:00:00Z


def event(
    project: str, session: str, n: int, ts: int, agent: str = "claude-code"
) -> dict[str, object]:
    return {
        "event_id": f"{project}-{session}-{n}",
        "project_id": project,
        "agent_id": agent,
        "session_id": session,
        "role": "user" if n % 2 == 0 else "assistant",
        "ts": ts,
        "text": f"turn {n} of {session}",
    }


@pytest.fixture(scope="module")
def stored(lean_stack: Stack) -> Stack:
    """Two projects: ``shop`` with three sessions a day apart (the last by two agents), and
    ``docs`` with one; recorded before any test runs."""
    events = [
        *(event("shop", "s-old", n, T0 + n * 1000) for n in range(3)),
        *(event("shop", "s-mid", n, T0 + DAY + n * 1000) for n in range(4)),
        *(event("shop", "s-new", n, T0 + 2 * DAY + n * 1000) for n in range(2)),
        event("shop", "s-new", 2, T0 + 2 * DAY + 5000, agent="codex"),
        *(event("docs", "d-1", n, T0 + n * 1000) for n in range(5)),
    ]
    plain_http.post(
        f"{lean_stack.gateway_url}/v1/events", json={"events": events}, timeout=30
    ).raise_for_status()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = plain_http.get(f"{lean_stack.query_url}/v1/status", timeout=10).json()
        if status["events_stored"] >= len(events):
            return lean_stack
        time.sleep(0.2)
    raise AssertionError("the seed events were not recorded within 60 s")


@pytest.fixture
def cli(
    stored: Stack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Cli]:
    monkeypatch.setenv("AGENT_MEMORY_QUERY__PORT", stored.query_url.rsplit(":", 1)[1])

    def run(*argv: str) -> tuple[int, str]:
        code = main(list(argv))
        return code, capsys.readouterr().out

    yield run


def test_projects_lists_every_project_with_its_counts(cli: Cli) -> None:
    code, out = cli("projects")
    assert code == 0, out
    rows = {
        m["project"]: m
        for m in (
            re.match(
                r"^(?P<project>\S+)\s+(?P<events>\d+)\s+(?P<sessions>\d+)\s+(?P<agents>\d+)\s", line
            )
            for line in out.splitlines()
        )
        if m
    }
    assert set(rows) == {"shop", "docs"}
    assert (rows["shop"]["events"], rows["shop"]["sessions"], rows["shop"]["agents"]) == (
        "10",
        "3",
        "2",
    )
    assert (rows["docs"]["events"], rows["docs"]["sessions"], rows["docs"]["agents"]) == (
        "5",
        "1",
        "1",
    )
    shop = next(line for line in out.splitlines() if line.startswith("shop "))
    assert "2025-12-01 00:00" in shop and "2025-12-03 00:00" in shop  # first and last activity
    assert "agent-memory sessions PROJECT" in out


def test_projects_json_is_the_api_answer(cli: Cli, stored: Stack) -> None:
    code, out = cli("projects", "--json")
    assert code == 0
    answer = plain_http.get(f"{stored.query_url}/v1/projects", timeout=10).json()
    assert json.loads(out) == answer


def test_sessions_newest_first(cli: Cli) -> None:
    code, out = cli("sessions", "shop")
    assert code == 0, out
    assert out.startswith("3 session(s) of shop, newest first:")
    order = re.findall(r"^  (s-\w+)  ", out, flags=re.MULTILINE)
    assert order == ["s-new", "s-mid", "s-old"]
    newest = next(line for line in out.splitlines() if line.startswith("  s-new"))
    assert "2025-12-03 00:00 → 2025-12-03 00:00" in newest
    assert "3 event(s)" in newest and "claude-code, codex" in newest
    assert "agent-memory toc --project shop" in out


def test_sessions_options_after_the_project_and_limit(cli: Cli) -> None:
    code, out = cli("sessions", "--limit", "1", "shop", "--json")
    assert code == 0, out
    answer = json.loads(out)
    assert answer["project_id"] == "shop"
    assert [s["session_id"] for s in answer["sessions"]] == ["s-new"]


def test_unknown_project_and_bad_limit_are_refused_naming_the_field(cli: Cli) -> None:
    code, out = cli("sessions", "no-such-project")
    assert code == 1
    assert "404" in out and "no-such-project" in out
    code, out = cli("projects", "--limit", "0")
    assert code == 1
    assert "422" in out and "limit" in out
