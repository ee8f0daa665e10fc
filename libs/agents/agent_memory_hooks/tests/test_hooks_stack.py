"""``agent-memory hook`` against the real stack: gateway, recorder and query service processes.

Every hook runs as the installed console script, the way a coding agent runs it, with the
stack's environment. What the tests prove: each runtime's payloads end up as stored events;
assistant replies read from a transcript are stored once however often the transcript is read;
with the gateway down (or answering 503) hooks still exit 0 at once and their events wait in
the spool, to be stored exactly once after the gateway returns, by ``agent-memory spool flush``
or by the next hook.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_memory_embedded.servers import free_port
from agent_memory_hooks.spool import Spool
from tests import plain_http
from tests.stack import Stack

from .conftest import (
    AGENT_MEMORY,
    FIXTURES,
    load_fixture,
    run_hook,
    session_events,
    wait_for_events,
)
from .opencode_node import install_plugin, run_plugin

EnvFactory = Callable[..., dict[str, str]]


def _claude_payloads(transcript: Path, session: str) -> list[dict[str, Any]]:
    names = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "PreCompact", "SessionEnd")
    return [
        {
            **load_fixture("claude-code", n),
            "session_id": session,
            "transcript_path": str(transcript),
        }
        for n in names
    ]


def test_claude_code_hooks_store_prompts_tools_and_replies(
    shared_stack: Stack, hook_env: EnvFactory, tmp_path: Path
) -> None:
    session = "cc-stack-1"
    transcript = tmp_path / "transcript.jsonl"
    lines = (FIXTURES / "claude-code" / "transcript.jsonl").read_text().splitlines(keepends=True)
    # Anthropic's transcript lines name their session; keep them consistent with the hooks
    transcript.write_text(
        "".join(lines[:3]).replace("8c35adc1-2f4e-4c1a-9a53-3f7a1c6d2b10", session)
    )
    env = hook_env(shared_stack.env)
    payloads = _claude_payloads(transcript, session)
    for i, payload in enumerate(payloads):
        if payload["hook_event_name"] == "Stop":  # the reply is written before Stop fires
            transcript.write_text(
                "".join(lines).replace("8c35adc1-2f4e-4c1a-9a53-3f7a1c6d2b10", session)
            )
        result = run_hook("claude-code", payload, env)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "", (
            f"hook {i} printed {result.stdout!r} (Claude adds it to context)"
        )
    # SessionStart, prompt, tool call + result, compaction note, session end, two replies
    events = wait_for_events(shared_stack.query_url, session, 8)
    texts = {(e["role"], e["type"], e["text"][:40]) for e in events}
    assert ("user", "message", "Why does the orders migration fail on an") in texts
    assert ("assistant", "message", "Let me run the orders tests first.") in texts
    assert ("assistant", "message", "The migration adds a NOT NULL column wit") in texts
    assert ("tool", "tool_result", "$ pytest tests/test_orders.py -q\nexit 0\n") in texts
    # what the transcript records takes the transcript's time, not the hook's clock
    stamps = {json.loads(x)["uuid"]: json.loads(x)["timestamp"] for x in lines[1:]}
    for event in events:
        line = event["metadata"].get("transcript_uuid")
        if line:
            assert event["ts"].replace("+00:00", "Z")[:19] == stamps[line][:19]
    assert sum(1 for e in events if e["metadata"].get("transcript_uuid")) == 5
    assert {e["agent_id"] for e in events} == {"claude-code"}
    assert {e["project_id"] for e in events} == {"shop-api"}
    # the hooks ran again (a replayed spool, a second install): still stored once
    for payload in payloads[1:3]:
        run_hook("claude-code", payload, env)
    time.sleep(1.0)
    assert len(session_events(shared_stack.query_url, session)) == 8


def test_transcript_replies_are_posted_once_as_the_session_grows(
    shared_stack: Stack, hook_env: EnvFactory, tmp_path: Path
) -> None:
    session = "cc-stack-grow"
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    env = hook_env(shared_stack.env)
    stop = {**load_fixture("claude-code", "Stop"), "session_id": session}
    stop["transcript_path"] = str(transcript)

    def reply(n: int) -> str:
        line = {
            "type": "assistant",
            "uuid": f"line-{n}",
            "sessionId": session,
            "timestamp": f"2026-01-15T10:{n:02d}:00.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": f"reply {n}"}]},
        }
        return json.dumps(line) + "\n"

    for turn in range(4):
        with transcript.open("a") as f:
            f.write(reply(turn))
        for _ in range(2):  # Stop and e.g. a PostToolUse both read the tail
            assert run_hook("claude-code", stop, env).returncode == 0
    events = wait_for_events(shared_stack.query_url, session, 4)
    assert sorted(e["text"] for e in events) == [f"reply {n}" for n in range(4)]


def test_gemini_copilot_opencode_codex_hooks_store_events(
    shared_stack: Stack, hook_env: EnvFactory, tmp_path: Path
) -> None:
    env = hook_env(shared_stack.env)

    gemini = ("SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "PreCompress", "SessionEnd")
    for name in gemini:
        result = run_hook("gemini-cli", load_fixture("gemini-cli", name), env)
        assert result.returncode == 0
        assert json.loads(result.stdout) == {}  # Gemini reads stdout as JSON
    session = load_fixture("gemini-cli", "SessionStart")["session_id"]
    events = wait_for_events(shared_stack.query_url, session, 7)
    assert {e["agent_id"] for e in events} == {"gemini-cli"}

    transcript = tmp_path / "events.jsonl"
    shutil.copy(FIXTURES / "copilot-cli" / "events.jsonl", transcript)
    copilot = (
        "sessionStart",
        "userPromptSubmitted",
        "postToolUse",
        "postToolUseFailure",
        "agentStop",
        "sessionEnd",
    )
    for name in copilot:
        payload = load_fixture("copilot-cli", name)
        if name == "agentStop":
            payload["transcriptPath"] = str(transcript)
        result = run_hook("copilot-cli", payload, env, "--event", name)
        assert (result.returncode, result.stdout) == (0, "")
    session = load_fixture("copilot-cli", "sessionStart")["sessionId"]
    # start, prompt, 2 tool events, 2 failed-tool events, the reply from events.jsonl, end
    events = wait_for_events(shared_stack.query_url, session, 8)
    assert any(e["text"].startswith("The test was flaky") for e in events)

    for name in ("session.created", "chat.message", "tool.execute.after", "assistant.message"):
        assert run_hook("opencode", load_fixture("opencode", name), env).returncode == 0
    session = load_fixture("opencode", "chat.message")["session_id"]
    wait_for_events(shared_stack.query_url, session, 5)

    notify = json.dumps(load_fixture("codex", "agent-turn-complete"))
    result = run_hook("codex", notify, env, argv_payload=True)  # Codex passes it as argv
    assert (result.returncode, result.stdout) == (0, "")
    events = wait_for_events(shared_stack.query_url, "b5f6c1c2-1111-2222-3333-444455556666", 2)
    assert [e["role"] for e in sorted(events, key=lambda e: e["ts"])] == ["user", "assistant"]


def test_gateway_down_spools_then_flush_stores_each_event_once(
    stack: Stack, hook_env: EnvFactory, tmp_path: Path
) -> None:
    env = hook_env(stack.env)
    spool = Spool(str(Path(env["AGENT_MEMORY_HOME"]) / "spool"))
    stack.processes["gateway"].stop()

    def prompt(n: int) -> dict[str, Any]:
        return {
            **load_fixture("claude-code", "UserPromptSubmit"),
            "session_id": "down-1",
            "prompt_id": f"prompt-{n}",
            "prompt": f"question {n}",
            "transcript_path": str(tmp_path / "none.jsonl"),
        }

    for n in range(5):
        result = run_hook("claude-code", prompt(n), env)
        assert result.returncode == 0 and result.stdout == ""
    # ten more at the same time, as parallel tool hooks would: appends must not interleave
    threads = [
        threading.Thread(target=run_hook, args=("claude-code", prompt(n), env))
        for n in range(5, 15)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert spool.count() == 15
    assert session_events(stack.query_url, "down-1") == []
    assert "spooled" in (Path(env["AGENT_MEMORY_HOME"]) / "logs" / "hooks.log").read_text()

    stack.start("gateway")
    flush = subprocess.run(
        [AGENT_MEMORY, "spool", "flush"], env=env, capture_output=True, text=True, timeout=60
    )
    assert flush.returncode == 0, flush.stdout + flush.stderr
    assert "sent 15 event(s)" in flush.stdout
    events = wait_for_events(stack.query_url, "down-1", 15)
    assert sorted(e["text"] for e in events) == sorted(f"question {n}" for n in range(15))
    assert spool.count() == 0
    again = subprocess.run(
        [AGENT_MEMORY, "spool", "flush"], env=env, capture_output=True, text=True, timeout=60
    )
    assert "spool is empty" in again.stdout
    time.sleep(1.0)
    assert len(session_events(stack.query_url, "down-1")) == 15  # nothing doubled


def test_next_hook_flushes_the_spool_and_503_counts_as_down(
    stack: Stack, hook_env: EnvFactory, tmp_path: Path
) -> None:
    # NATS away: the gateway is up but answers 503, which must spool like a dead gateway
    env = hook_env(
        stack.env, AGENT_MEMORY_HOOK_TIMEOUT_MS="8000", AGENT_MEMORY_HOOK_BUDGET_MS="9000"
    )
    stack.nats.stop()
    base = {**load_fixture("claude-code", "UserPromptSubmit"), "session_id": "flaky-1"}
    base["transcript_path"] = str(tmp_path / "none.jsonl")
    result = run_hook("claude-code", {**base, "prompt_id": "a", "prompt": "first"}, env)
    assert result.returncode == 0
    log = (Path(env["AGENT_MEMORY_HOME"]) / "logs" / "hooks.log").read_text()
    assert "spooled (HTTP 503)" in log
    stack.nats.start(timeout=30)
    deadline = time.monotonic() + 60
    while plain_http.get(f"{stack.gateway_url}/readyz").status_code != 200:
        assert time.monotonic() < deadline, "gateway did not reconnect to NATS"
        time.sleep(0.2)
    # no explicit flush: the next hook posts its own event and then drains the spool
    env = hook_env(
        stack.env, AGENT_MEMORY_HOOK_TIMEOUT_MS="2000", AGENT_MEMORY_HOOK_BUDGET_MS="3000"
    )
    run_hook("claude-code", {**base, "prompt_id": "b", "prompt": "second"}, env)
    events = wait_for_events(stack.query_url, "flaky-1", 2)
    assert sorted(e["text"] for e in events) == ["first", "second"]
    assert Spool(str(Path(env["AGENT_MEMORY_HOME"]) / "spool")).count() == 0


def test_hooks_appending_while_a_flush_runs_lose_and_double_nothing(
    shared_stack: Stack, hook_env: EnvFactory, tmp_path: Path
) -> None:
    """The flusher renames the spool away while hooks append to it: every line must end up
    either in the claimed file or in the new one, never in neither or both."""
    flusher_env = hook_env(shared_stack.env)
    spool = Spool(str(Path(flusher_env["AGENT_MEMORY_HOME"]) / "spool"))
    backlog = [
        {
            "event_id": f"backlog-{n}",
            "project_id": "shop-api",
            "agent_id": "claude-code",
            "session_id": "race-1",
            "role": "user",
            "type": "message",
            "text": f"backlog {n}",
        }
        for n in range(1500)
    ]
    spool.append(backlog)  # several batches: the flush is still sending while hooks append
    # the hooks cannot reach a gateway (so they append); the flusher can
    dead = hook_env(shared_stack.env, AGENT_MEMORY_GATEWAY__PORT=str(free_port()))
    base = {**load_fixture("claude-code", "UserPromptSubmit"), "session_id": "race-1"}
    base["transcript_path"] = str(tmp_path / "none.jsonl")
    flusher = subprocess.Popen(
        [AGENT_MEMORY, "spool", "flush"], env=flusher_env, stdout=subprocess.DEVNULL
    )
    threads = [
        threading.Thread(
            target=run_hook,
            args=("claude-code", {**base, "prompt_id": f"r{n}", "prompt": f"live {n}"}, dead),
        )
        for n in range(12)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    flusher.wait(timeout=120)
    final = subprocess.run(
        [AGENT_MEMORY, "spool", "flush"], env=flusher_env, capture_output=True, text=True
    )
    assert final.returncode == 0, final.stdout
    assert spool.count() == 0
    events = wait_for_events(shared_stack.query_url, "race-1", 1512)
    texts = sorted(e["text"] for e in events)
    assert texts == sorted([f"backlog {n}" for n in range(1500)] + [f"live {n}" for n in range(12)])


def test_a_refused_event_is_set_aside_and_the_rest_delivered(
    shared_stack: Stack, hook_env: EnvFactory
) -> None:
    env = hook_env(shared_stack.env)
    spool = Spool(str(Path(env["AGENT_MEMORY_HOME"]) / "spool"))
    good = {
        "event_id": "spool-good-1",
        "project_id": "shop-api",
        "agent_id": "claude-code",
        "session_id": "refused-1",
        "role": "user",
        "type": "message",
        "text": "kept",
    }
    bad = {**good, "event_id": "spool-bad-1", "role": "narrator"}  # not a role: 422
    spool.append([good, bad, {**good, "event_id": "spool-good-2", "text": "kept too"}])
    flush = subprocess.run(
        [AGENT_MEMORY, "spool", "flush"], env=env, capture_output=True, text=True, timeout=60
    )
    assert "sent 2 event(s)" in flush.stdout and "1 refused" in flush.stdout, flush.stdout
    events = wait_for_events(shared_stack.query_url, "refused-1", 2)
    assert sorted(e["text"] for e in events) == ["kept", "kept too"]
    (refused,) = [json.loads(x) for x in Path(spool.rejected).read_text().splitlines()]
    assert refused["event_id"] == "spool-bad-1" and refused["_rejected"].startswith("422")
    assert spool.count() == 0


def test_a_line_torn_by_a_killed_hook_costs_only_that_line(
    shared_stack: Stack, hook_env: EnvFactory
) -> None:
    env = hook_env(shared_stack.env)
    spool = Spool(str(Path(env["AGENT_MEMORY_HOME"]) / "spool"))
    event = {
        "project_id": "shop-api",
        "agent_id": "claude-code",
        "session_id": "torn-1",
        "role": "user",
        "type": "message",
    }
    spool.append([{**event, "event_id": "torn-a", "text": "before"}])
    with open(spool.pending, "a") as f:  # a hook killed in the middle of its write
        f.write('{"event_id":"torn-x","project_id":"shop-ap')
    spool.append([{**event, "event_id": "torn-b", "text": "after"}])
    flush = subprocess.run(
        [AGENT_MEMORY, "spool", "flush"], env=env, capture_output=True, text=True, timeout=60
    )
    assert "sent 2 event(s)" in flush.stdout and "1 refused" in flush.stdout, flush.stdout
    events = wait_for_events(shared_stack.query_url, "torn-1", 2)
    assert sorted(e["text"] for e in events) == ["after", "before"]
    assert Path(spool.rejected).read_text().startswith('{"event_id":"torn-x"')


def test_opencode_plugin_in_node_records_a_session(
    shared_stack: Stack, hook_env: EnvFactory, tmp_path: Path
) -> None:
    """The real plugin file, loaded by node with a stand-in for OpenCode calling its hooks in
    the documented order, spawns the real hook command, and the events land in the stack. With
    recall off (``hook_env``), it adds nothing to the message or the system prompt."""
    plugin = install_plugin(tmp_path)
    session = "ses_node_1"
    started = time.monotonic()
    env = hook_env(shared_stack.env)
    run = run_plugin(plugin, env, session, ["count the lines"])
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - started < 5  # the plugin never waits for the capture processes
    (turn,) = run.turns
    assert [p["text"] for p in turn["parts"]] == ["count the lines"]
    assert turn["system"] == ["You are OpenCode."]
    events = wait_for_events(shared_stack.query_url, session, 5)
    by_type = {(e["role"], e["type"]): e["text"] for e in events}
    assert by_type[("user", "message")] == "count the lines"
    assert by_type[("assistant", "message")] == "There are 42 lines."  # the final text, once
    assert by_type[("assistant", "tool_call")] == "$ wc -l"
    assert by_type[("tool", "tool_result")] == "$ wc -l\n42"
    assert {e["project_id"] for e in events} == {"shop-api"}
