"""Codex CLI, Gemini CLI and OpenCode sessions read as the hooks' events (fixtures: tests/fixtures,
whose README cites each format's source): own times, ids from session + entry, failed tool
calls, shaped payloads, the same ids on a second read."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from agent_memory_cli import readers
from agent_memory_cli.importer import NOT_SUPPORTED, RUNTIMES, run_import
from agent_memory_cli.readers import codex, gemini_cli, opencode

FIXTURES = Path(__file__).parent / "fixtures"
CODEX = FIXTURES / "codex"
GEMINI = FIXTURES / "gemini"
ENV = {"AGENT_MEMORY_PROJECT_ID": "payments"}


def project_of(cwd: str | None, remote: str | None = None, branch: str | None = None) -> str:
    return "payments"


def when(ts: str | int) -> datetime:
    assert isinstance(ts, str)
    return datetime.fromisoformat(ts)


def test_codex_rollout_as_events() -> None:
    (path,) = [p for p in codex.files(CODEX) if "019a2d7a" in p.name]
    events, skipped = codex.events(path, ENV, project_of)
    assert skipped == 0
    (context,) = [e for e in events if e["type"] == "runtime"]
    assert context["role"] == "system"  # the environment context is not the user's words,
    assert context["metadata"]["runtime_kind"] == "environment_context"  # stored as Codex's
    events = [e for e in events if e["type"] != "runtime"]
    kinds = [(e["role"], e["type"], e["metadata"].get("tool_name")) for e in events]
    assert kinds == [
        ("user", "message", None),
        ("assistant", "tool_call", "shell"),
        ("tool", "tool_result", "shell"),
        ("assistant", "tool_call", "apply_patch"),
        ("tool", "tool_result", "apply_patch"),
        ("assistant", "tool_call", "shell"),
        ("tool", "tool_result", "shell"),
        ("assistant", "message", None),
    ]
    assert {e["session_id"] for e in events} == {"019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"}
    assert {e["agent_id"] for e in events} == {"codex"}
    assert when(events[0]["ts"]) == datetime.fromisoformat("2025-10-29T00:59:38.318+00:00")
    call, failed = events[1], events[2]
    assert call["text"].startswith("$ pytest tests/test_reconcile.py -q")
    assert when(call["ts"]) < when(failed["ts"])  # each at its own time
    assert failed["metadata"]["failed"] is True and failed["metadata"]["exit_code"] == 1
    assert "took 9.02 s" in failed["text"]
    passed = events[6]
    assert "failed" not in passed["metadata"] and "2 passed" in passed["text"]
    again, _ = codex.events(path, ENV, project_of)
    again = [e for e in again if e["type"] != "runtime"]
    assert [e["event_id"] for e in again] == [e["event_id"] for e in events]
    assert len({e["event_id"] for e in events}) == len(events)


def test_codex_older_rollout_without_times() -> None:
    (path,) = [p for p in codex.files(CODEX) if "5973b6c0" in p.name]
    events, _ = codex.events(path, ENV, project_of)
    assert [(e["role"], e["text"][:22]) for e in events] == [
        ("user", "Add a CHANGELOG entry "),
        ("assistant", "Added under Unreleased"),
    ]
    assert events[0]["session_id"] == "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    start = datetime.fromisoformat("2025-05-02T09:12:00+00:00").timestamp() * 1000
    assert 0 < events[0]["ts"] - start < events[1]["ts"] - start  # ordered by line


def test_gemini_chat_as_events() -> None:
    (path,) = gemini_cli.files(GEMINI)
    events, skipped = gemini_cli.events(path, ENV, project_of)
    assert skipped == 0
    kinds = [(e["role"], e["type"], e["metadata"].get("tool_name")) for e in events]
    assert kinds == [
        ("user", "message", None),
        ("assistant", "message", None),
        ("assistant", "tool_call", "run_shell_command"),
        ("tool", "tool_result", "run_shell_command"),
        ("assistant", "tool_call", "read_file"),
        ("tool", "tool_result", "read_file"),
        ("system", "runtime", None),  # the 'info' line is the CLI's, not the session's
        ("assistant", "message", None),
    ]
    assert events[6]["metadata"]["runtime_kind"] == "info"
    assert {e["session_id"] for e in events} == {"8d3e2f1a-6b5c-4d7e-9f0a-1b2c3d4e5f60"}
    assert {e["project_id"] for e in events} == {"payments"}
    failed = events[3]
    assert failed["metadata"]["failed"] is True
    assert "statement timeout" in failed["text"]
    assert when(failed["ts"]) == datetime.fromisoformat("2025-09-14T08:31:02+00:00")
    assert "SELECT * FROM orders" in events[5]["text"]  # no display text: the model's response


def test_gemini_project_without_the_env_names_the_hash() -> None:
    (path,) = gemini_cli.files(GEMINI)
    events, _ = gemini_cli.events(path, {}, project_of)
    assert {e["project_id"] for e in events} == {"gemini-3f1a9c0e5b7d"}


async def test_dry_run_counts_every_runtime_file() -> None:
    report = await run_import(
        None,
        codex.files(CODEX),
        env=ENV,
        progress=False,
        reader=codex.events,
    )
    assert (report.files, len(report.sessions), report.events) == (2, 2, 11)


def test_opencode_session_as_the_plugins_events() -> None:
    (path,) = opencode.files(FIXTURES / "opencode" / "storage")
    events, skipped = opencode.events(path, ENV, project_of)
    assert skipped == 0
    (wrote,) = [e for e in events if e["type"] == "runtime"]  # OpenCode's synthetic part
    assert wrote["role"] == "system" and wrote["metadata"]["runtime_kind"] == "synthetic"
    events = [e for e in events if e["type"] != "runtime"]
    kinds = [(e["role"], e["type"], e["metadata"].get("tool_name")) for e in events]
    assert kinds == [
        ("user", "message", None),
        ("assistant", "message", None),
        ("assistant", "tool_call", "bash"),
        ("tool", "tool_result", "bash"),
        ("assistant", "tool_call", "read"),
        ("tool", "tool_result", "read"),
    ]
    assert events[0]["text"] == "test_refund is flaky on CI, find out why"  # synthetic apart
    bash, read = events[3], events[5]
    assert bash["metadata"]["exit_code"] == 1 and bash["metadata"]["failed"] is True
    assert read["metadata"]["failed"] is True and "File not found" in read["text"]
    assert bash["ts"] == 1_760_000_011_500 and events[2]["ts"] == 1_760_000_010_000
    # the plugin's ids (agent_memory_hooks.opencode): captured then imported is stored once
    from agent_memory_hooks.events import event_id

    session = "ses_6a1f0c2e3ffeQh7Kq2Lw9ZbN4x"
    assert events[0]["event_id"] == event_id("opencode", session, "prompt", "msg_95e0f3d1c001aXq3")
    assert events[2]["event_id"] == event_id("opencode", session, "tool", "toolu_01Bash", "call")


def test_every_runtime_has_one_reader_module() -> None:
    """import's runtimes, less the refused ones, are exactly the reader modules."""
    assert set(readers.MODULES) == set(RUNTIMES) - set(NOT_SUPPORTED)
    for runtime in readers.MODULES:
        source = readers.source(runtime)
        assert source.home({}).is_absolute()
        assert source.events.__module__ == f"agent_memory_cli.readers.{readers.MODULES[runtime]}"


def test_a_codex_session_of_another_machine_is_named_by_its_remote(tmp_path: Path) -> None:
    """Issue 52, point 4: where a rollout's folder does not exist here, the remote recorded in
    ``session_meta.git`` names the repository, and every event of the session is its."""
    from agent_memory_hooks.project import resolve_project_id

    (source,) = [p for p in codex.files(CODEX) if "019a2d7a" in p.name]
    lines = [json.loads(raw) for raw in source.read_text().splitlines() if raw.strip()]
    for line in lines:
        if line.get("type") == "session_meta":
            line["payload"]["cwd"] = "/nonexistent-am-codex/home/dev/checkout-3"
            line["payload"]["git"] = {
                "repository_url": "git@github.com:acme/payments-api.git",
                "branch": "main",
            }
        if line.get("type") == "turn_context":  # the agent moved to a subfolder meanwhile
            line["payload"]["cwd"] = "/nonexistent-am-codex/home/dev/checkout-3/src"
    path = tmp_path / source.name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))

    def rule(cwd: str | None, remote: str | None = None, branch: str | None = None) -> str:
        return resolve_project_id(cwd, {}, remote, branch)

    events, _ = codex.events(path, {}, rule)
    assert events and {e["project_id"] for e in events} == {"payments-api"}
