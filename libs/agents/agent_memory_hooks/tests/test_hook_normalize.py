"""Each runtime's documented payloads (the fixtures) normalize to the events we expect.

Pure functions, no servers: the fixture goes in, the list of events comes out, and every event
must also be one the gateway accepts (validated with the gateway's own ``EventIn`` model).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_memory_common.contracts.event import EventIn
from agent_memory_hooks import claude_code, codex, copilot_cli, gemini_cli, opencode, shape
from agent_memory_hooks.events import HookContext, clip
from agent_memory_hooks.project import resolve_project_id
from agent_memory_hooks.transcript import TranscriptCursor

from .conftest import FIXTURES, load_fixture

NOW = 1_768_471_500_000


def ctx(runtime: str, event_name: str | None = None, max_text: int = 32_000) -> HookContext:
    return HookContext(
        runtime=runtime,
        now_ms=NOW,
        project_of=lambda cwd: f"proj:{cwd}",
        max_text=max_text,
        event_name=event_name,
    )


def brief(events: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(e["role"], e["type"], e["text"]) for e in events]


def valid(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for event in events:
        EventIn.model_validate(event)  # what the gateway will check
    return events


# -- Claude Code ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "SessionStart",
            [("system", "session_start", "Claude Code session started (startup)")],
        ),
        (
            "UserPromptSubmit",
            [("user", "message", "Why does the orders migration fail on an empty table?")],
        ),
        (
            "PostToolUse",
            [
                (
                    "assistant",
                    "tool_call",
                    "$ pytest tests/test_orders.py -q  # Run the orders tests",
                ),
                (
                    "tool",
                    "tool_result",
                    "$ pytest tests/test_orders.py -q\nexit 0\nF.\n1 failed, 1 passed in 0.42s",
                ),
            ],
        ),
        (
            "PostToolUseFailure",
            [
                ("assistant", "tool_call", "$ ruff check src/  # Lint the sources"),
                (
                    "tool",
                    "tool_result",
                    "$ ruff check src/\nexit 1\nsrc/orders.py:12:5: B006 Do not use mutable data "
                    "structures for argument defaults\nFound 1 error.",
                ),
            ],
        ),
        ("Stop", []),
        (
            "PreCompact",
            [("system", "note", "Context compaction (manual): Keep the migration decisions")],
        ),
        (
            "SessionEnd",
            [("system", "session_end", "Claude Code session ended (prompt_input_exit)")],
        ),
    ],
)
def test_claude_code_fixtures(name: str, expected: list[tuple[str, str, str]]) -> None:
    payload = load_fixture("claude-code", name)
    events = valid(claude_code.normalize(payload, ctx("claude-code")))
    assert brief(events) == expected
    for e in events:
        assert e["session_id"] == payload["session_id"]
        assert e["agent_id"] == "claude-code"
        assert e["project_id"] == "proj:/home/dev/shop-api"
        assert e["metadata"]["hook_event"] == name
        assert e["metadata"]["cwd"] == "/home/dev/shop-api"
    if name == "PostToolUseFailure":  # the failure keeps its exit status
        assert events[1]["metadata"]["failed"] is True
        assert events[1]["metadata"]["exit_code"] == 1
    # same payload, same clock: same ids (what makes a spool replay harmless)
    assert [e["event_id"] for e in claude_code.normalize(payload, ctx("claude-code"))] == [
        e["event_id"] for e in events
    ]


def test_claude_code_ids_come_from_the_runtime_not_the_clock() -> None:
    prompt = load_fixture("claude-code", "UserPromptSubmit")
    tool = load_fixture("claude-code", "PostToolUse")
    later = HookContext(runtime="claude-code", now_ms=NOW + 5000, project_of=lambda c: "p")
    for payload in (prompt, tool):
        first = claude_code.normalize(payload, ctx("claude-code"))
        again = claude_code.normalize(payload, later)
        assert [e["event_id"] for e in first] == [e["event_id"] for e in again]
    call, result = claude_code.normalize(tool, ctx("claude-code"))
    assert call["event_id"] != result["event_id"]
    assert call["metadata"]["tool_use_id"] == result["metadata"]["tool_use_id"] == "toolu_01DUxyz"
    assert call["metadata"]["tool_input"]["command"] == "pytest tests/test_orders.py -q"


def test_claude_code_transcript_yields_every_entry_once_with_its_time(tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    lines = (FIXTURES / "claude-code" / "transcript.jsonl").read_text().splitlines(keepends=True)
    payload = {**load_fixture("claude-code", "Stop"), "transcript_path": str(transcript)}

    def read_once() -> list[dict[str, Any]]:
        cursor = TranscriptCursor(str(tmp_path / "state"), "claude-code", payload["session_id"])
        assert cursor.open(deadline=float("inf"))
        try:
            found = cursor.read(claude_code.transcript_path(payload))
            events = claude_code.transcript_events(found, payload, ctx("claude-code"), cursor.state)
            cursor.commit()
            return valid(events)
        finally:
            cursor.close()

    # the agent has written four lines and is in the middle of the fifth
    transcript.write_text("".join(lines[:4]) + lines[4][:40])
    first = read_once()
    assert brief(first) == [
        ("user", "message", "Why does the orders migration fail on an empty table?"),
        ("assistant", "message", "Let me run the orders tests first."),
        ("assistant", "tool_call", "$ pytest tests/test_orders.py -q  # Run the orders tests"),
    ]
    assert [e["ts"] for e in first] == [
        "2026-01-15T10:00:01Z",
        "2026-01-15T10:00:03Z",
        "2026-01-15T10:00:03.500000Z",
    ]
    assert first[1]["metadata"]["transcript_uuid"] == "6f1c1b52-0002-4c1a-9a53-3f7a1c6d2b10"
    assert read_once() == []  # nothing new: nothing posted again

    transcript.write_text("".join(lines))  # the rest arrives (tool result, reply)
    second = read_once()
    # the result knows its command although the call was read by an earlier hook
    assert brief(second)[0] == (
        "tool",
        "tool_result",
        "$ pytest tests/test_orders.py -q\nexit 0\nF.\n1 failed, 1 passed in 0.42s",
    )
    assert second[0]["ts"] == "2026-01-15T10:00:05Z"
    assert [e["text"][:30] for e in second[1:]] == ["The migration adds a NOT NULL "]
    assert read_once() == []

    # the hook's own PostToolUse event would have had the same ids: one copy at the gateway
    tool_ids = {e["event_id"] for e in first[2:] + second[:1]}
    hook_ids = {
        e["event_id"]
        for e in claude_code.normalize(
            load_fixture("claude-code", "PostToolUse"), ctx("claude-code")
        )
    }
    assert tool_ids == hook_ids

    # a transcript rewritten shorter (e.g. by /clear) is read again from the start; the ids
    # are the lines' uuids, so the repeats are the same events and the gateway keeps one copy
    transcript.write_text(lines[2])
    again = read_once()
    assert [e["event_id"] for e in again] == [first[1]["event_id"]]


def test_claude_code_hook_defers_to_the_transcript(tmp_path: Path) -> None:
    """With a transcript to read, prompt and tool hooks add nothing of their own (the lines
    have the time and ids); without one they record the payload."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    for name in ("UserPromptSubmit", "PostToolUse"):
        payload = {**load_fixture("claude-code", name), "transcript_path": str(transcript)}
        assert claude_code.normalize(payload, ctx("claude-code")) == []
        assert claude_code.normalize(load_fixture("claude-code", name), ctx("claude-code"))


def test_claude_code_session_events_take_no_id_from_the_clock() -> None:
    for name in ("SessionStart", "SessionEnd", "PreCompact"):
        payload = load_fixture("claude-code", name)
        later = ctx("claude-code")
        later.now_ms += 60_000
        assert [e["event_id"] for e in claude_code.normalize(payload, ctx("claude-code"))] == [
            e["event_id"] for e in claude_code.normalize(payload, later)
        ]
    # the end of a session takes the time of the transcript's latest entry when there is one
    end = ctx("claude-code")
    end.transcript_ts, end.transcript_pos = "2026-01-15T10:00:09.000Z", 4096
    (event,) = claude_code.normalize(load_fixture("claude-code", "SessionEnd"), end)
    assert event["ts"] == "2026-01-15T10:00:09Z"


PROJECTS = FIXTURES / "claude-code" / "projects" / "-home-dev-shop-api"
SESSION = "5d0c7a3e-9b1f-4e2a-8c6d-2f4e6a8b0c1d"


def read_transcript(path: Path) -> list[dict[str, Any]]:
    lines = [(json.loads(raw), n) for n, raw in enumerate(path.read_text().splitlines())]
    return valid(claude_code.transcript_events(lines, {}, ctx("claude-code"), {}))


def test_claude_code_failed_command_keeps_exit_status_and_head_and_tail() -> None:
    events = read_transcript(PROJECTS / f"{SESSION}.jsonl")
    (failed,) = [
        e for e in events if e["type"] == "tool_result" and e["metadata"].get("exit_code") == 1
    ]
    text = failed["text"]
    assert text.startswith("$ pytest tests/test_orders.py -v\nexit 1\n=====")
    assert failed["metadata"]["failed"] is True
    assert "[... 137 lines omitted ...]" in text
    assert failed["metadata"]["omitted_lines"] == 137
    assert "E       AssertionError: assert 19.99 == 1999" in text  # the tail is kept
    assert "test_case_0 PASSED" in text and "test_case_150 PASSED" not in text
    assert len(text) <= 8_200


def test_claude_code_edit_is_a_diff_never_the_original_file() -> None:
    events = read_transcript(PROJECTS / f"{SESSION}.jsonl")
    edits = [e for e in events if e["metadata"].get("tool_name") == "Edit"]
    assert [(e["type"], e["metadata"].get("failed")) for e in edits] == [
        ("tool_call", None),
        ("tool_result", True),
        ("tool_call", None),
        ("tool_result", None),
    ]
    call = edits[2]["text"]
    assert call.splitlines()[0] == "Edit /home/dev/shop-api/src/orders.py"
    assert "-    return sum(line.amount for line in order.lines)" in call
    assert "+    return sum(line.amount_cents for line in order.lines)" in call
    assert edits[3]["text"] == "Edit /home/dev/shop-api/src/orders.py: applied"
    assert edits[1]["text"].startswith("Edit /home/dev/shop-api/src/orders.py failed: String to")
    for event in edits:  # the original file (hundreds of helper functions) is nowhere
        assert "helper_57" not in event["text"]
        assert "helper_57" not in json.dumps(event["metadata"])
    total = sum(len(e["text"]) for e in events)
    assert total < 12_000, total  # the transcript itself is 73 KB


def test_claude_code_subagent_transcript() -> None:
    events = read_transcript(PROJECTS / SESSION / "subagents" / "agent-a1b2c3d.jsonl")
    assert {e["session_id"] for e in events} == {SESSION}  # the parent session
    assert {e["metadata"]["subagent_id"] for e in events} == {"a1b2c3d"}
    assert brief(events)[-1] == (
        "assistant",
        "message",
        "One more: src/invoices.py:41 sums line.amount.",
    )


def test_claude_code_image_result_is_not_stored_as_base64() -> None:
    call = {
        "type": "assistant",
        "uuid": "u1",
        "sessionId": "s",
        "timestamp": "2026-01-15T10:00:00Z",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.png"}}
            ],
        },
    }
    image = {"type": "image", "source": {"type": "base64", "data": "iVBORw0" * 5000}}
    result = {
        "type": "user",
        "uuid": "u2",
        "sessionId": "s",
        "timestamp": "2026-01-15T10:00:01Z",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [image]}],
        },
    }
    events = claude_code.transcript_events([(call, 0), (result, 1)], {}, ctx("claude-code"), {})
    assert brief(events) == [
        ("assistant", "tool_call", "Read a.png"),
        ("tool", "tool_result", "Read a.png\n[image]"),
    ]


def test_shape_rules() -> None:
    text, omitted = shape.head_tail("\n".join(f"line {n}" for n in range(100)), 3, 2)
    assert text.splitlines() == [
        "line 0",
        "line 1",
        "line 2",
        "[... 95 lines omitted ...]",
        "line 98",
        "line 99",
    ]
    assert omitted == 95
    long, _ = shape.head_tail("x" * 20_000)
    assert len(long) < 8_100 and "[... 12000 characters omitted ...]" in long
    hunk, added, removed = shape.diff("a\nb\nc\nd\ne\nf", "a\nb\nc\nD\ne\nf")
    assert hunk.splitlines() == ["@@ -2,5 +2,5 @@", " b", " c", "-d", "+D", " e", " f"]
    assert (added, removed) == (1, 1)
    assert shape.exit_code_in("Exit code 2\nboom") == 2
    assert shape.exit_code_in("Command: x\nStdout: y\nExit Code: 3") == 3
    assert shape.exit_code_in("all good") is None
    assert shape.command_of({"command": ["bash", "-lc", "make test"]}) == "make test"


# -- Gemini CLI -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("SessionStart", [("system", "session_start", "Gemini CLI session started (startup)")]),
        (
            "BeforeAgent",
            [
                (
                    "user",
                    "message",
                    "Add an index on orders.customer_id and tell me how long the migration takes.",
                )
            ],
        ),
        (
            "AfterTool",
            [
                ("assistant", "tool_call", "$ alembic upgrade head  # Apply the migration"),
                (
                    "tool",
                    "tool_result",
                    "$ alembic upgrade head\n"
                    "INFO  [alembic.runtime.migration] Running upgrade 3f2a -> 4b1c, "
                    "add orders.customer_id index\nDone in 1.8s",
                ),
            ],
        ),
        (
            "AfterAgent",
            [
                (
                    "assistant",
                    "message",
                    "I added the index in migration 4b1c; it applied in 1.8 s on the dev database.",
                )
            ],
        ),
        ("PreCompress", [("system", "note", "Context compression (auto)")]),
        ("SessionEnd", [("system", "session_end", "Gemini CLI session ended (exit)")]),
    ],
)
def test_gemini_cli_fixtures(name: str, expected: list[tuple[str, str, str]]) -> None:
    payload = load_fixture("gemini-cli", name)
    events = valid(gemini_cli.normalize(payload, ctx("gemini-cli")))
    assert brief(events) == expected
    for e in events:
        assert e["ts"] == payload["timestamp"].replace(".000Z", "Z").replace(".250Z", ".250000Z")
        assert e["session_id"] == payload["session_id"]
        assert e["agent_id"] == "gemini-cli"
    assert gemini_cli.STDOUT == "{}"  # Gemini parses stdout as JSON


# -- Copilot CLI ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("sessionStart", [("system", "session_start", "Copilot CLI session started (new)")]),
        ("userPromptSubmitted", [("user", "message", "Fix the flaky payment test")]),
        (
            "postToolUse",
            [
                (
                    "assistant",
                    "tool_call",
                    "$ pytest tests/test_payments.py -q  # Run payment tests",
                ),
                ("tool", "tool_result", "$ pytest tests/test_payments.py -q\n3 passed in 0.31s"),
            ],
        ),
        (
            "postToolUseFailure",
            [
                (
                    "assistant",
                    "tool_call",
                    "edit src/payments.py\n@@ -1,1 +1,1 @@\n-sleep(1)\n+wait_for(ready)",
                ),
                (
                    "tool",
                    "tool_result",
                    "edit src/payments.py failed: old_str not found in src/payments.py",
                ),
            ],
        ),
        ("agentStop", []),
        ("preCompact", [("system", "note", "Context compaction (auto)")]),
        ("errorOccurred", [("system", "note", "Copilot CLI error (model_call): rate limited")]),
        ("sessionEnd", [("system", "session_end", "Copilot CLI session ended (user_exit)")]),
    ],
)
def test_copilot_cli_fixtures(name: str, expected: list[tuple[str, str, str]]) -> None:
    payload = load_fixture("copilot-cli", name)
    assert "hook_event_name" not in payload  # camelCase payloads do not name their event
    events = valid(copilot_cli.normalize(payload, ctx("copilot-cli", event_name=name)))
    assert brief(events) == expected
    for e in events:
        assert e["ts"] == payload["timestamp"]
        assert e["session_id"] == payload["sessionId"]
    if name == "postToolUseFailure":
        assert events[1]["metadata"]["failed"] is True
    # without --event the payload alone cannot be told apart: nothing is invented
    assert copilot_cli.normalize(payload, ctx("copilot-cli")) == []


def test_copilot_cli_vscode_form() -> None:
    payload = load_fixture("copilot-cli", "PostToolUse-vscode")
    events = valid(copilot_cli.normalize(payload, ctx("copilot-cli")))
    assert brief(events) == [
        ("assistant", "tool_call", "view src/payments.py"),
        ("tool", "tool_result", "view src/payments.py\ndef charge(order): ..."),
    ]
    assert events[0]["ts"] == "2026-01-15T10:00:07Z"


def test_copilot_cli_transcript_reply(tmp_path: Path) -> None:
    transcript = tmp_path / "events.jsonl"
    shutil.copy(FIXTURES / "copilot-cli" / "events.jsonl", transcript)
    payload = {**load_fixture("copilot-cli", "agentStop"), "transcriptPath": str(transcript)}
    cursor = TranscriptCursor(str(tmp_path / "state"), "copilot-cli", payload["sessionId"])
    assert cursor.open(deadline=float("inf"))
    try:
        lines = cursor.read(copilot_cli.transcript_path(payload))
        events = valid(copilot_cli.transcript_events(lines, payload, ctx("copilot-cli")))
    finally:
        cursor.close()
    # the tool-request-only message has no text and is left out; tool runs come from hooks
    assert brief(events) == [
        (
            "assistant",
            "message",
            "The test was flaky because it slept for a fixed second; "
            "it now waits for the payment to be ready.",
        )
    ]
    assert events[0]["metadata"]["transcript_id"] == "e0000001-0000-4000-8000-000000000006"


# -- OpenCode -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "session.created",
            [("system", "session_start", "OpenCode session started: Rename Order.total")],
        ),
        (
            "chat.message",
            [("user", "message", "Rename the Order.total field to amount_cents everywhere.")],
        ),
        (
            "tool.execute.after",
            [
                ("assistant", "tool_call", "$ rg -l 'total' src/  # Find uses of total"),
                (
                    "tool",
                    "tool_result",
                    "$ rg -l 'total' src/\nexit 0\nsrc/orders.py\nsrc/invoices.py",
                ),
            ],
        ),
        (
            "assistant.message",
            [
                (
                    "assistant",
                    "message",
                    "Renamed Order.total to amount_cents in src/orders.py and src/invoices.py; "
                    "the tests pass.",
                )
            ],
        ),
        ("session.compacted", [("system", "note", "Context compaction")]),
        (
            "session.deleted",
            [("system", "session_end", "OpenCode session deleted: Rename Order.total")],
        ),
    ],
)
def test_opencode_fixtures(name: str, expected: list[tuple[str, str, str]]) -> None:
    payload = load_fixture("opencode", name)
    events = valid(opencode.normalize(payload, ctx("opencode")))
    assert brief(events) == expected
    for e in events:
        assert e["session_id"] == payload["session_id"]
        assert e["project_id"] == "proj:/home/dev/shop-api"
    if name == "assistant.message":
        assert events[0]["ts"] == 1_768_471_202_000  # when the reply began, not when it was sent
        assert events[0]["metadata"]["model"] == "claude-sonnet-4-5"


# -- Codex ----------------------------------------------------------------------------------------


def test_codex_notify_fixture() -> None:
    payload = load_fixture("codex", "agent-turn-complete")
    events = valid(codex.normalize(payload, ctx("codex")))
    assert brief(events) == [
        ("user", "message", "Rename `foo` to `bar` and update the callsites."),
        ("assistant", "message", "Rename complete and verified `cargo build` succeeds."),
    ]
    assert {e["session_id"] for e in events} == {"b5f6c1c2-1111-2222-3333-444455556666"}
    assert events[0]["ts"] < events[1]["ts"]  # the question sorts before its answer
    assert codex.normalize({"type": "approval-requested"}, ctx("codex")) == []
    assert codex.PAYLOAD_FROM_ARGV


# -- shared rules ---------------------------------------------------------------------------------


def test_long_text_is_clipped_and_says_so() -> None:
    payload = {**load_fixture("claude-code", "UserPromptSubmit"), "prompt": "x" * 5000}
    (event,) = valid(claude_code.normalize(payload, ctx("claude-code", max_text=1000)))
    assert event["text"].startswith("x" * 1000)
    assert event["metadata"]["clipped_chars"] == 4000
    assert "4000 more characters" in event["text"]
    assert clip("short", 10) == ("short", 0)


def test_big_tool_input_stays_out_of_metadata() -> None:
    payload = load_fixture("claude-code", "PostToolUse")
    payload["tool_input"] = {"file_path": "a.py", "content": "y" * 100_000}
    call, _ = valid(claude_code.normalize(payload, ctx("claude-code")))
    assert call["metadata"]["tool_input"]["file_path"] == "a.py"  # every argument, clipped
    assert len(call["metadata"]["tool_input"]["content"]) < 300
    assert len(json.dumps(call["metadata"])) < 5_000
    assert len(call["text"]) < 2_200


def test_payload_without_session_gives_nothing() -> None:
    for module, runtime in (
        (claude_code, "claude-code"),
        (gemini_cli, "gemini-cli"),
        (copilot_cli, "copilot-cli"),
        (opencode, "opencode"),
    ):
        assert module.normalize({"hook_event_name": "SessionStart"}, ctx(runtime)) == []


def test_project_id_rule(tmp_path: Path) -> None:
    repo = tmp_path / "shop-api"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    assert resolve_project_id(str(repo / "src" / "deep"), {}) == "shop-api"
    assert resolve_project_id(str(repo), {"AGENT_MEMORY_PROJECT_ID": "billing"}) == "billing"
    loose = tmp_path / "scratch"
    loose.mkdir()
    found = resolve_project_id(str(loose), {})
    assert found.startswith("dir-") and len(found) == 16
    assert resolve_project_id(str(loose), {}) == found  # stable for the folder


def test_project_id_agrees_with_the_client_library(tmp_path: Path) -> None:
    """Capture and recall must name the project alike, or recall finds nothing."""
    from agent_memory_client.project import resolve_project_id as client_rule

    repo = tmp_path / "shop-api"
    (repo / ".git").mkdir(parents=True)
    loose = tmp_path / "scratch"
    loose.mkdir()
    for folder in (repo, loose):
        for env in ({}, {"AGENT_MEMORY_PROJECT_ID": "billing"}):
            assert resolve_project_id(str(folder), env) == client_rule(folder, env)


def test_claude_code_notices_and_wrappers_in_the_users_turn_are_nobodys_words() -> None:
    """What Claude Code writes into the user's turn is not a prompt: an interrupted request's
    notice, a background task's notification, a local command's output and a slash command are
    stored as ``runtime`` events (nothing dropped, issue 52 point 3), the command's name and
    arguments in ``metadata.command``; the backspaces a terminal let through are deleted; nor
    is a reply it writes itself (model ``<synthetic>``) the model's (``make bench-real``)."""

    def user(uuid: str, content: Any) -> dict[str, Any]:
        return {
            "type": "user",
            "uuid": uuid,
            "sessionId": "s-1",
            "timestamp": "2026-01-15T10:00:00.000Z",
            "message": {"role": "user", "content": content},
        }

    lines = [
        (user("u1", "[Request interrupted by user for tool use]"), 0),
        (user("u2", [{"type": "text", "text": "[Request interrupted by user]"}]), 1),
        (user("u3", "<local-command-stdout>Set model to opus</local-command-stdout>"), 2),
        (
            user(
                "u4",
                "<command-message>export</command-message>\n<command-name>/export</command-name>\n<command-args>--all</command-args>",
            ),
            3,
        ),
        (user("u5", "\x7f\x7f\x7fi would prefer a script I run by hand.\n\tThanks"), 4),
        (user("u6", "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>"), 5),
        (
            {
                "type": "assistant",
                "uuid": "a1",
                "sessionId": "s-1",
                "timestamp": "2026-01-15T10:00:01.000Z",
                "message": {
                    "role": "assistant",
                    "model": "<synthetic>",
                    "content": [{"type": "text", "text": "You've hit your limit"}],
                },
            },
            6,
        ),
    ]
    events = valid(claude_code.transcript_events(lines, {}, ctx("claude-code"), {}))
    said = [e for e in events if e["type"] != "runtime"]
    assert [(e["metadata"]["transcript_uuid"], e["text"]) for e in said] == [
        ("u5", "i would prefer a script I run by hand.\n\tThanks"),
    ]
    runtime = {
        e["metadata"]["transcript_uuid"]: e["metadata"]["runtime_kind"]
        for e in events
        if e["type"] == "runtime"
    }
    assert runtime == {
        "u1": "interrupt",
        "u2": "interrupt",
        "u3": "command_output",
        "u4": "command",
        "u6": "task_notification",
        "a1": "synthetic_reply",
    }
    assert len(runtime) == len(events) - 1 and all(
        e["role"] == "system" for e in events if e["type"] == "runtime"
    )
    (command,) = [e for e in events if e["metadata"]["transcript_uuid"] == "u4"]
    assert command["metadata"]["command"] == "/export --all"
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s-1", "prompt": "\x08ok"}
    (prompt,) = valid(claude_code.normalize(payload, ctx("claude-code")))
    assert prompt["text"] == "ok"


def test_opencode_recalled_parts_are_not_stored_again() -> None:
    """The memories the plugin recalled into a message are copies of stored ones: reading the
    message back (the plugin's later hooks, ``agent-memory import opencode``) keeps OpenCode's
    own synthetic text and drops ours."""
    parts = [
        {"type": "text", "text": "what did we decide about retries?"},
        {"type": "text", "text": "Called the Read tool", "synthetic": True},
        {
            "type": "text",
            "text": "Recalled from agent-memory: - [e-1] retries back off",
            "synthetic": True,
            "metadata": {"agent-memory": "recall"},
        },
    ]
    assert opencode.synthetic_text(parts) == "Called the Read tool"
