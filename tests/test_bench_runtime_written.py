"""The boilerplate metric of ``bench-real`` (``tests/bench/runtime_written.py``) tells what the
runtime wrote from a transcript's own structure, on synthetic transcripts written here."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench.runtime_written import claude_code, codex, is_wrapper


def test_wrapper_by_shape() -> None:
    assert is_wrapper("<glaze-note>kiln at 900 C</glaze-note>")
    rules = "use tabs in the kiln code; name every firing by its glaze; test each queue. " * 3
    assert is_wrapper(f"# Heading for /src\n\n<RULES>{rules}</RULES>")
    assert is_wrapper("[Stopped by the person]")
    assert not is_wrapper("Please explain what <glaze-note>x</glaze-note> means in this long text")
    assert not is_wrapper("Fix the kiln timer")


def test_claude_code_lines_by_their_flags(tmp_path: Path) -> None:
    lines = [
        {"type": "user", "uuid": "u1", "message": {"content": "Fix the kiln timer"}},
        {"type": "user", "uuid": "u2", "isMeta": True, "message": {"content": "Expanded text"}},
        {"type": "user", "uuid": "u3", "isCompactSummary": True, "message": {"content": "Sum"}},
        {
            "type": "user",
            "uuid": "u4",
            "isSidechain": True,
            "agentId": "acompact-1",
            "message": {"content": "Summarise"},
        },
        {"type": "assistant", "uuid": "a1", "message": {"model": "<synthetic>", "content": "No"}},
        {"type": "user", "uuid": "u5", "message": {"content": "<glaze>out</glaze>"}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    found = {w.uuid: w.why for w in claude_code(path)}
    assert found == {
        "u2": "isMeta",
        "u3": "isCompactSummary",
        "u4": "compaction subagent",
        "a1": "synthetic model",
        "u5": "wrapper",
    }


def test_codex_user_wrappers(tmp_path: Path) -> None:
    texts = ["<env_info><cwd>/k</cwd></env_info>", "Make the kiln queue persistent"]
    rows = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]}
        for t in texts
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps({"type": "response_item", "payload": r}) for r in rows))
    assert [w.text for w in codex(path)] == [texts[0]]
