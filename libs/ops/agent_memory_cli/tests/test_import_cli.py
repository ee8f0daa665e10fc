"""``agent-memory import claude-code``: real transcripts into the real stack, stored once.

Run as the real command against a gateway, recorder and query service (each its own process):
a Claude Code projects folder (a session and its subagent) imported twice stores each event
once, every event at its transcript line's own time; a session first captured by the hook and
then imported is stored once too (the hook and the import share the parser and the ids).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests import plain_http
from tests.stack import Stack

HOOK_TESTS = Path(__file__).parents[3] / "agents" / "agent_memory_hooks" / "tests"
FIXTURES = HOOK_TESTS / "fixtures" / "hooks" / "claude-code"
PROJECTS = FIXTURES / "projects"
SESSION = "5d0c7a3e-9b1f-4e2a-8c6d-2f4e6a8b0c1d"
AGENT_MEMORY = str(Path(sys.executable).parent / "agent-memory")


@pytest.fixture(scope="module")
def stack(shared_stack: Stack) -> Stack:
    """One stack for the module: each test imports and reads sessions of its own (their event
    ids, made from the transcripts' line ids, differ too), so none sees another's events."""
    return shared_stack


def events_of(stack: Stack, session: str) -> list[dict[str, Any]]:
    params: dict[str, str | int] = {"session_id": session, "limit": 1000}
    response = plain_http.get(f"{stack.query_url}/v1/events", params=params, timeout=10)
    response.raise_for_status()
    events: list[dict[str, Any]] = response.json()["events"]
    return events


def settle(stack: Stack, session: str, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
    """Wait for ``count`` events, then a little longer: a double would arrive meanwhile."""
    deadline = time.monotonic() + timeout
    while len(events := events_of(stack, session)) < count:
        assert time.monotonic() < deadline, f"{len(events)} of {count} events stored"
        time.sleep(0.2)
    time.sleep(1.5)
    return events_of(stack, session)


def run_import(
    stack: Stack, *args: str, env: dict[str, str] | None = None, runtime: str = "claude-code"
) -> str:
    proc = subprocess.run(
        [AGENT_MEMORY, "import", runtime, *args, "--quiet"],
        env={**stack.env, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def transcript_times(*files: Path) -> dict[str, datetime]:
    """uuid -> timestamp of every line."""
    times = {}
    for path in files:
        for raw in path.read_text().splitlines():
            line = json.loads(raw)
            if "uuid" in line:
                times[line["uuid"]] = datetime.fromisoformat(line["timestamp"])
    return times


def test_import_twice_stores_each_event_once_at_its_own_time(stack: Stack) -> None:
    out = run_import(stack, str(PROJECTS), env={"AGENT_MEMORY_PROJECT_ID": "shop-api"})
    assert "imported 1 session(s) from 2 file(s): 20 event(s) sent" in out
    first = settle(stack, SESSION, 20)
    assert len(first) == 20
    again = run_import(stack, str(PROJECTS), env={"AGENT_MEMORY_PROJECT_ID": "shop-api"})
    assert "20 event(s) sent" in again
    second = settle(stack, SESSION, 20)
    assert sorted(e["event_id"] for e in second) == sorted(e["event_id"] for e in first)

    main = PROJECTS / "-home-dev-shop-api" / f"{SESSION}.jsonl"
    sub = PROJECTS / "-home-dev-shop-api" / SESSION / "subagents" / "agent-a1b2c3d.jsonl"
    times = transcript_times(main, sub)
    for event in second:
        line = event["metadata"]["transcript_uuid"]
        assert datetime.fromisoformat(event["ts"]) == times[line], event["text"][:60]
    assert {e["project_id"] for e in second} == {"shop-api"}
    assert {e["agent_id"] for e in second} == {"claude-code"}

    by_kind = [(e["type"], e["metadata"].get("tool_name")) for e in second]
    assert by_kind.count(("tool_result", "Bash")) == 2
    (failed,) = [e for e in second if e["metadata"].get("exit_code") == 1]
    assert failed["text"].startswith("$ pytest tests/test_orders.py -v\nexit 1\n")
    assert "[... 137 lines omitted ...]" in failed["text"]
    assert failed["metadata"]["failed"] is True
    edit = [e for e in second if e["metadata"].get("tool_name") == "Edit"]
    assert any("+    return sum(line.amount_cents" in e["text"] for e in edit)
    assert not any("helper_57" in e["text"] for e in second)  # the original file is not stored
    assert any(e["metadata"].get("subagent_id") == "a1b2c3d" for e in second)


def test_hook_then_import_stores_once(stack: Stack, tmp_path: Path) -> None:
    session = "cc-hook-then-import"
    original = (FIXTURES / "transcript.jsonl").read_text()
    text = original.replace("8c35adc1-2f4e-4c1a-9a53-3f7a1c6d2b10", session)
    folder = tmp_path / "projects" / "-home-dev-shop-api"
    folder.mkdir(parents=True)
    transcript = folder / f"{session}.jsonl"
    transcript.write_text(text)
    env = {
        **stack.env,
        "AGENT_MEMORY_HOME": str(tmp_path / "am-home"),
        "AGENT_MEMORY_PROJECT_ID": "shop-api",
        "AGENT_MEMORY_HOOK_TIMEOUT_MS": "3000",
        "AGENT_MEMORY_HOOK_BUDGET_MS": "4000",
    }
    for name in ("UserPromptSubmit", "PostToolUse", "Stop"):
        payload = json.loads((FIXTURES / f"{name}.json").read_text())
        payload.update(session_id=session, transcript_path=str(transcript))
        proc = subprocess.run(
            [AGENT_MEMORY, "hook", "claude-code"],
            input=json.dumps(payload),
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert proc.returncode == 0
    # prompt, two replies, the tool call and its result, each at its line's time
    hooked = settle(stack, session, 5)
    assert len(hooked) == 5
    times = transcript_times(transcript)
    for event in hooked:
        assert datetime.fromisoformat(event["ts"]) == times[event["metadata"]["transcript_uuid"]]

    out = run_import(stack, str(tmp_path / "projects"), env={"AGENT_MEMORY_PROJECT_ID": "shop-api"})
    assert "5 event(s) sent" in out
    imported = settle(stack, session, 5)
    assert sorted(e["event_id"] for e in imported) == sorted(e["event_id"] for e in hooked)


def test_import_of_one_transcript_and_unsupported_runtimes(stack: Stack, tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    shutil.copy(FIXTURES / "transcript.jsonl", one)
    with one.open("a") as f:
        f.write("{not json\n")
    out = run_import(stack, str(one), "--dry-run")
    assert "imported 1 session(s) from 1 file(s): 5 event(s) read, 1 line(s) skipped" in out
    proc = subprocess.run(
        [AGENT_MEMORY, "import", "copilot-cli", str(tmp_path)],
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "not supported yet" in proc.stderr


CODEX_SESSION = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
CODEX_FIXTURES = Path(__file__).parent / "fixtures" / "codex"


def test_import_codex_twice_stores_each_event_once_at_its_own_time(stack: Stack) -> None:
    env = {"AGENT_MEMORY_PROJECT_ID": "payments"}
    out = run_import(stack, str(CODEX_FIXTURES), env=env, runtime="codex")
    # 8 events of the session and its environment context, which Codex wrote (``runtime``)
    assert "imported 2 session(s) from 2 file(s): 11 event(s) sent" in out
    first = settle(stack, CODEX_SESSION, 9)
    run_import(stack, str(CODEX_FIXTURES), env=env, runtime="codex")
    second = settle(stack, CODEX_SESSION, 9)
    assert sorted(e["event_id"] for e in second) == sorted(e["event_id"] for e in first)
    assert len(second) == 9 and sum(e["type"] == "runtime" for e in second) == 1
    said = [e for e in second if e["type"] != "runtime"]
    assert min(e["ts"] for e in said).startswith("2025-10-29T00:59:38.318")
    (failed,) = [e for e in second if e["metadata"].get("failed")]
    assert failed["metadata"]["exit_code"] == 1 and failed["duplicate_of"] is None


def worktree_sessions(root: Path, repo: str, places: dict[str, tuple[str, str]]) -> None:
    """The fixture session copied once per ``places`` entry (session id -> (cwd, gitBranch)),
    each as if recorded in another worktree of ``repo`` on a machine where none of its folders
    exist, the way Claude Code lays them out (``projects/<escaped cwd>/<session>.jsonl``)."""
    source = PROJECTS / "-home-dev-shop-api" / f"{SESSION}.jsonl"
    for session, (cwd, branch) in places.items():
        folder = root / ("-" + cwd.strip("/").replace("/", "-").replace(".", "-"))
        folder.mkdir(parents=True)
        lines = [json.loads(raw) for raw in source.read_text().splitlines() if raw.strip()]
        for line in lines:
            if "sessionId" in line:
                line.update(sessionId=session, cwd=cwd, gitBranch=branch)
        (folder / f"{session}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_worktrees_of_a_repository_import_as_one_project(stack: Stack, tmp_path: Path) -> None:
    """Issue 52, point 4: one repository's sessions from several worktrees, whose folders do not
    exist on this machine, are one project (they were seven ``dir-<hash>`` projects); with
    ``--project NAME`` every session is NAME's."""
    repo = f"shopfront{int(time.time() * 1000) % 10**8}"
    gone = f"/nonexistent-am-import/home/dev/{repo}"
    places = {
        f"{repo}-main": (gone, "main"),
        f"{repo}-sub": (f"{gone}/services/api", "main"),  # started in a subfolder
        f"{repo}-wt": (f"{gone}/.worktrees/feature-x", "feature-x"),
        f"{repo}-cc": (f"{gone}/.claude/worktrees/fix-login", "fix-login"),
        f"{repo}-sib": (f"{gone}-feature-cart", "feature/cart"),
    }
    worktree_sessions(tmp_path / "projects", repo, places)
    out = run_import(stack, str(tmp_path / "projects"))
    assert f"imported {len(places)} session(s)" in out, out
    projects = {s: {e["project_id"] for e in settle(stack, s, 16)} for s in places}
    assert projects.pop(f"{repo}-sub") == {"api"}  # a subfolder of a vanished folder: its name
    assert all(p == {repo} for p in projects.values()), projects

    named = {f"{repo}-named": (f"{gone}/.worktrees/other", "other")}
    worktree_sessions(tmp_path / "named", repo, named)
    out = run_import(stack, str(tmp_path / "named"), "--project", "shop-renamed")
    assert "imported 1 session(s)" in out, out
    assert {e["project_id"] for e in settle(stack, f"{repo}-named", 16)} == {"shop-renamed"}
