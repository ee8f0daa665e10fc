"""Recall end to end (issue 54): events through the real pipeline, ``POST /v1/recall`` on the
query service with its sentence model, and the Claude Code hook run as the runtime runs it (its
command, the payload on stdin) against that stack, and against no stack at all.

What must hold: the relevant memory comes back within the budget and cites its id; a prompt
that no memory answers ("thanks") gets nothing; what a session was given is not given again;
the session's own turns are never recalled; the hook prints the documented JSON or nothing, and
with the service down or silent it exits 0 with no output within a second.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import eventually
from tests.stack import Stack, recall_ready_stack

PROJECT = "recall-proj"
FACTS = [
    "We decided the billing service stores money as integer cents, never floats.",
    "The staging deploy failed because the migration took an exclusive lock on invoices.",
    "Decision: the recorder acknowledges a message only after the Postgres commit.",
    "I prefer pytest fixtures over unittest setUp methods in this repository.",
    "The nightly export job writes gzip JSON lines to the archive bucket.",
    "We use ruff for linting and formatting, with a line length of 100.",
]
AGENT_MEMORY = str(Path(sys.executable).with_name("agent-memory"))


@pytest.fixture(scope="module")
def recall_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """Gateway, recorder, both indexers and the query service with its model: recall's
    confidence is the best cosine, so the vector tier must be there."""
    with recall_ready_stack(pg_server, tmp_path_factory, PROJECT, FACTS) as s:
        yield s


def recall(url: str, **body: Any) -> dict[str, Any]:
    r = plain_http.post(f"{url}/v1/recall", json={"project_id": PROJECT, **body}, timeout=60)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def run_hook(env: dict[str, str], session: str, prompt: str, cwd: Path) -> tuple[float, int, str]:
    payload = {
        "session_id": session,
        "transcript_path": str(cwd / "none.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    command = f"{AGENT_MEMORY} hook claude-code --project-id {PROJECT}"
    t0 = time.monotonic()
    done = subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=30,
    )
    return time.monotonic() - t0, done.returncode, done.stdout


def hook_env(stack: Stack, tmp_path: Path, query_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in stack.env.items() if not k.startswith("AGENT_MEMORY_")}
    env.update(
        {
            "AGENT_MEMORY_HOME": str(tmp_path / "hook-home"),
            "AGENT_MEMORY_GATEWAY_URL": stack.gateway_url,
            "AGENT_MEMORY_QUERY_URL": query_url or stack.query_url,
        }
    )
    return env


def test_the_relevant_memory_comes_back_within_budget(recall_stack: Stack) -> None:
    answer = recall(
        recall_stack.query_url,
        session_id="now-1",
        prompt="how do we store money amounts in billing?",
        budget_tokens=120,
    )
    assert answer["silence"] is None, answer
    assert "integer cents" in answer["context"]
    assert answer["tokens"] <= 120
    assert "[e-000000]" in answer["context"]  # each line cites the memory it quotes
    assert answer["memories"][0]["event_ids"] == ["e-000000"]


def test_an_off_topic_prompt_gets_nothing(recall_stack: Stack) -> None:
    for prompt in ("thanks", "ok, go ahead", "Who owns the iOS release of the mobile app?"):
        answer = recall(recall_stack.query_url, session_id="now-2", prompt=prompt)
        assert answer["context"] == "", answer
        assert answer["silence"] in ("too_short", "no_match", "below_threshold")


def test_what_was_given_and_the_own_session_are_left_out(recall_stack: Stack) -> None:
    prompt = "how do we store money amounts in billing?"
    first = recall(recall_stack.query_url, session_id="now-3", prompt=prompt)
    given = [i for m in first["memories"] for i in (m["id"], *m["event_ids"])]
    again = recall(recall_stack.query_url, session_id="now-3", prompt=prompt, exclude_ids=given)
    assert "integer cents" not in again["context"]
    own = recall(recall_stack.query_url, session_id="old-0", prompt=prompt)
    assert "integer cents" not in own["context"]


def test_a_missing_field_is_named(recall_stack: Stack) -> None:
    r = plain_http.post(
        f"{recall_stack.query_url}/v1/recall", json={"project_id": PROJECT}, timeout=30
    )
    assert r.status_code == 422
    assert "prompt" in r.text


def test_the_hook_prints_the_documented_shape_once_per_session(
    recall_stack: Stack, tmp_path: Path
) -> None:
    env = hook_env(recall_stack, tmp_path)
    prompt = "how do we store money amounts in billing?"
    _, code, out = run_hook(env, "hook-session-1", prompt, tmp_path)
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"hookSpecificOutput"}
    assert data["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "integer cents" in data["hookSpecificOutput"]["additionalContext"]
    # the same prompt again in the same session: what it was given is not given twice
    _, code, out = run_hook(env, "hook-session-1", prompt, tmp_path)
    assert code == 0
    assert "integer cents" not in out
    _, code, out = run_hook(env, "hook-session-2", "thanks", tmp_path)
    assert (code, out) == (0, "")
    off = {**env, "AGENT_MEMORY_RECALL": "off"}
    _, code, out = run_hook(off, "hook-session-3", prompt, tmp_path)
    assert (code, out) == (0, "")


def test_a_project_turned_off_is_given_nothing_until_on_again(
    recall_stack: Stack, tmp_path: Path
) -> None:
    """One switch on the server (``PUT /v1/projects/{id}/recall``) silences every runtime's
    hook; on again, the same prompt is answered, and its tokens are kept for its session."""
    switch = f"{recall_stack.query_url}/v1/projects/{PROJECT}/recall"
    prompt = "how do we store money amounts in billing?"
    try:
        r = plain_http.put(switch, json={"injection": "off"}, timeout=10)
        assert r.status_code == 200 and r.json()["injection"] == "off", r.text
        off = recall(recall_stack.query_url, session_id="off-1", prompt=prompt)
        assert (off["silence"], off["context"], off["memories"]) == ("off", "", [])
        _, code, out = run_hook(hook_env(recall_stack, tmp_path), "off-hook-1", prompt, tmp_path)
        assert (code, out) == (0, "")
    finally:
        r = plain_http.put(switch, json={"injection": "on"}, timeout=10)
        assert r.status_code == 200, r.text
    on = recall(recall_stack.query_url, session_id="off-2", prompt=prompt)
    assert on["silence"] is None and "integer cents" in on["context"], on

    def kept() -> dict[str, Any] | None:
        sessions = plain_http.get(switch, params={"sessions": 100}, timeout=10).json()["sessions"]
        by_id = {s["session_id"]: s for s in sessions}
        assert "off-1" not in by_id and "off-hook-1" not in by_id  # nothing given: not counted
        return by_id.get("off-2")

    cost = eventually(kept, timeout=10, what="the session's tokens kept")
    assert (cost["answers"], cost["given"], cost["tokens"]) == (1, 1, on["tokens"])


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A port that accepts connections and never answers: a service hung mid-request."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


@pytest.mark.serial  # a wall-clock budget: measured alone, not beside the other workers
def test_with_the_service_down_or_silent_the_hook_is_quiet_and_quick(
    tmp_path: Path, silent_server: str
) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "AGENT_MEMORY_HOME": str(tmp_path / "home"),
        "AGENT_MEMORY_GATEWAY_URL": "http://127.0.0.1:9",
    }
    for url in ("http://127.0.0.1:9", silent_server):
        seconds, code, out = run_hook(
            {**env, "AGENT_MEMORY_QUERY_URL": url}, "down-1", "how do we store money?", tmp_path
        )
        assert (code, out) == (0, "")
        assert seconds < 1.0, f"{url}: {seconds:.2f} s"


def settled_brief(url: str) -> dict[str, Any] | None:
    """The project's brief once the recorder has caught up and two readings a second apart
    agree, else None: the hooks of the tests before this one posted prompts (new sessions,
    so a new "last session") that may still be on their way in."""
    status = plain_http.get(f"{url}/v1/status", timeout=5).json()
    if not all(c.get("caught_up") for c in status["consumers"] if c.get("name") == "recorder"):
        return None
    first = plain_http.get(f"{url}/v1/projects/{PROJECT}/brief", timeout=30)
    assert first.status_code == 200, first.text
    time.sleep(1)
    second = plain_http.get(f"{url}/v1/projects/{PROJECT}/brief", timeout=30)
    brief: dict[str, Any] = first.json()
    return brief if second.json() == brief else None


def test_a_session_starts_with_the_brief(recall_stack: Stack, tmp_path: Path) -> None:
    brief = eventually(
        lambda: settled_brief(recall_stack.query_url), timeout=60, what="the brief settled"
    )
    assert brief["tokens"] <= brief["budget_tokens"] == 1500
    assert "Last session" in brief["context"] and brief["ids"]
    payload = {
        "session_id": "start-1",
        "transcript_path": str(tmp_path / "none.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    command = f"{AGENT_MEMORY} hook claude-code --project-id {PROJECT}"
    done = subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=hook_env(recall_stack, tmp_path),
        timeout=30,
    )
    assert done.returncode == 0
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out == {"hookEventName": "SessionStart", "additionalContext": brief["context"]}
    r = plain_http.get(f"{recall_stack.query_url}/v1/projects/{PROJECT}/brief?budget_tokens=5")
    assert r.status_code == 422 and "budget_tokens" in r.text


def test_gemini_cli_gets_the_same_recall_in_its_shape(recall_stack: Stack, tmp_path: Path) -> None:
    payload = {
        "session_id": "gemini-1",
        "transcript_path": str(tmp_path / "none.json"),
        "cwd": str(tmp_path),
        "hook_event_name": "BeforeAgent",
        "timestamp": "2026-12-07T08:00:00Z",
        "prompt": "how do we store money amounts in billing?",
    }
    done = subprocess.run(
        ["sh", "-c", f"{AGENT_MEMORY} hook gemini-cli --project-id {PROJECT}"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=hook_env(recall_stack, tmp_path),
        timeout=30,
    )
    assert done.returncode == 0
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "BeforeAgent"
    assert "integer cents" in out["additionalContext"]
    payload.update(hook_event_name="BeforeAgent", session_id="gemini-2", prompt="thanks")
    done = subprocess.run(
        ["sh", "-c", f"{AGENT_MEMORY} hook gemini-cli --project-id {PROJECT}"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=hook_env(recall_stack, tmp_path),
        timeout=30,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "{}")  # Gemini's "nothing to add"
