"""What each runtime wrote into a session, not a person, is captured as a ``runtime`` event
(issue 52, point 3): stored, nothing dropped, typed so that bullets, titles, topics and the
default search leave it out. Synthetic transcript lines written for these tests."""

from __future__ import annotations

from typing import Any

from agent_memory_hooks import claude_code, codex, opencode
from agent_memory_hooks.events import HookContext

NOW = 1_768_471_200_000


def ctx(runtime: str) -> HookContext:
    return HookContext(runtime=runtime, now_ms=NOW, project_of=lambda _: "proj")


def user(uuid: str, text: str, **flags: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": "s-1",
        "timestamp": "2026-01-15T10:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        **flags,
    }


def assistant(uuid: str, text: str, **flags: Any) -> dict[str, Any]:
    line = user(uuid, text, **flags)
    line["type"] = "assistant"
    line["message"] = {
        "role": "assistant",
        "model": "claude-x",
        "content": [{"type": "text", "text": text}],
    }
    return line


def events_of(*lines: dict[str, Any]) -> list[dict[str, Any]]:
    found = claude_code.transcript_events(
        [(item, i) for i, item in enumerate(lines)], {}, ctx("claude-code"), {}
    )
    return [dict(e) for e in found]


def kinds(events: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return [(e["role"], e["type"], e["metadata"].get("runtime_kind")) for e in events]


def test_claude_code_compaction_subagent_and_compact_summary_are_the_runtimes() -> None:
    """The compaction subagent's prompt and reply, then the summary Claude Code puts at the head
    of the continued session: runtime events, the summary marked as one."""
    agent = {"isSidechain": True, "agentId": "acompact-91ab"}
    events = events_of(
        user("c1", "Summarise everything we did to the kiln scheduler so far.", **agent),
        assistant("c2", "Summary: the kiln scheduler now batches firings by glaze.", **agent),
        user("u1", "Session continued. Summary: kiln firings are batched.", isCompactSummary=True),
    )
    assert kinds(events) == [
        ("system", "runtime", "compaction_prompt"),
        ("system", "runtime", "compaction_summary"),
        ("system", "runtime", "compact_summary"),
    ]
    assert events[0]["metadata"]["subagent_id"] == "acompact-91ab"
    assert events[2]["metadata"]["compact_summary"] is True
    assert events[2]["text"] == "Session continued. Summary: kiln firings are batched."


def test_claude_code_an_ordinary_subagent_is_not_the_runtime() -> None:
    events = events_of(
        user("t1", "Find every caller of parse_glaze.", isSidechain=True, agentId="a3f")
    )
    assert kinds(events) == [("user", "message", None)]


def test_claude_code_slash_command_and_its_expansion() -> None:
    """A slash command's invocation keeps the command line in its metadata; the prompt it expands
    to (``isMeta``, as a skill's body) is the runtime's, not the user's."""
    events = events_of(
        user(
            "u1",
            "<command-message>tidy</command-message>\n<command-name>/tidy</command-name>\n"
            "<command-args>src/kiln</command-args>",
        ),
        user("u2", "Tidy the given folder: sort imports, drop dead code.", isMeta=True),
        user(
            "u3",
            "<local-command-caveat>Caveat: local command output below.</local-command-caveat>",
            isMeta=True,
        ),
        user("u4", "<bash-input>make kiln</bash-input>"),
        user("u5", "<bash-stdout>kiln built</bash-stdout><bash-stderr></bash-stderr>"),
    )
    assert kinds(events) == [
        ("system", "runtime", "command"),
        ("system", "runtime", "expansion"),
        ("system", "runtime", "caveat"),
        ("system", "runtime", "command"),
        ("system", "runtime", "command_output"),
    ]
    assert events[0]["metadata"]["command"] == "/tidy src/kiln"
    assert events[3]["metadata"]["command"] == "!make kiln"
    assert "<command-name>" in events[0]["text"]  # stored as written


def test_claude_code_system_reminder_alone_and_inside_a_prompt() -> None:
    """A reminder alone is the runtime's; inside a prompt it is stored beside it, as its own
    event, and the prompt keeps only what the person typed."""
    events = events_of(
        user("u1", "<system-reminder>\nThe todo list is empty.\n</system-reminder>"),
        user(
            "u2",
            "Rename the kiln queue to firing queue.\n"
            "<system-reminder>A file was changed on disk.</system-reminder>",
        ),
        user("u3", "<user-prompt-submit-hook>branch: main</user-prompt-submit-hook>"),
    )
    assert kinds(events) == [
        ("system", "runtime", "reminder"),
        ("user", "message", None),
        ("system", "runtime", "reminder"),
        ("system", "runtime", "hook_output"),
    ]
    assert events[1]["text"] == "Rename the kiln queue to firing queue."
    assert events[2]["text"] == "<system-reminder>A file was changed on disk.</system-reminder>"
    assert events[1]["event_id"] != events[2]["event_id"]
    assert events[2]["metadata"]["transcript_uuid"] == "u2"


def test_claude_code_ids_are_stable_across_reads() -> None:
    line = user("u1", "Fix the kiln.\n<system-reminder>Note.</system-reminder>")
    assert [e["event_id"] for e in events_of(line)] == [e["event_id"] for e in events_of(line)]


def test_codex_environment_and_instructions_are_the_runtimes() -> None:
    payload = {
        "type": "agent-turn-complete",
        "thread-id": "t-1",
        "turn-id": "1",
        "cwd": "/src/kiln",
        "input-messages": [
            "<environment_context>\n  <cwd>/src/kiln</cwd>\n</environment_context>",
            "# AGENTS.md instructions for /src/kiln\n\n<INSTRUCTIONS>Use tabs.</INSTRUCTIONS>",
            "Make the kiln queue persistent.",
        ],
        "last-assistant-message": "The kiln queue is stored in SQLite now.",
    }
    events = [dict(e) for e in codex.normalize(payload, ctx("codex"))]
    assert kinds(events) == [
        ("system", "runtime", "environment_context"),
        ("system", "runtime", "user_instructions"),
        ("user", "message", None),
        ("assistant", "message", None),
    ]
    assert codex.runtime_kind("  <user_instructions>x</user_instructions>") == "user_instructions"
    assert codex.runtime_kind("why is <environment_context> in my prompt?") is None


def test_opencode_synthetic_parts_are_the_runtimes() -> None:
    """OpenCode's ``synthetic`` text parts (a file it read for an ``@`` mention) become their
    own runtime event; the person's text stays the prompt."""
    payload = {
        "event": "chat.message",
        "session_id": "ses_1",
        "message_id": "msg_1",
        "parts": [
            {"type": "text", "text": "Explain @kiln.py"},
            {"type": "text", "text": "Called the Read tool: def fire(): ...", "synthetic": True},
        ],
    }
    events = [dict(e) for e in opencode.normalize(payload, ctx("opencode"))]
    assert kinds(events) == [("system", "runtime", "synthetic"), ("user", "message", None)]
    assert events[1]["text"] == "Explain @kiln.py"
    only = {**payload, "parts": payload["parts"][1:]}
    assert kinds([dict(e) for e in opencode.normalize(only, ctx("opencode"))]) == [
        ("system", "runtime", "synthetic")
    ]
