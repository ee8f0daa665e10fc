"""The real-session benchmark's data: the transcript reads as the import reads it, every
question points at moments that exist, and the converter writes what the reader takes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agent_memory_cli.readers.claude_code import events as claude_events
from agent_memory_summarizer.text import tokens
from tests.bench.bench_coding import (
    REAL_HELDOUT,
    REAL_HELDOUT2,
    REAL_HELDOUT3,
    REAL_HELDOUT4,
    REAL_HELDOUT5,
    load_real_kinds,
)
from tests.bench.bench_real import (
    HELDOUT_SOURCES,
    SOURCES,
    load_corpus,
    load_events,
    questions_of,
)
from tests.bench.coding.generate import is_prose
from tests.bench.coding.kinds import GOLD_KINDS
from tests.bench.real import console
from tests.bench.real.convert import transcript_lines
from tests.bench.real.corpus import Part, check_split_by_project, parts
from tests.bench.real.questions import QUESTIONS

EXPORT = """<?xml version="1.0" ?>
<claude-session xmlns="https://claude.ai/session-export/v1" export-version="1.0">
  <metadata><session-id>s-1</session-id></metadata>
  <messages>
    <message uuid="" timestamp=""><event-type>summary</event-type></message>
    <message uuid="u1" timestamp="2025-07-02T20:00:00.000Z">
      <event-type>user</event-type><working-directory>/w/tool</working-directory>
      <role>user</role><content>Keep it a script I run by hand.</content>
    </message>
    <message uuid="a1" parent-uuid="u1" timestamp="2025-07-02T20:00:05.000Z">
      <event-type>assistant</event-type><working-directory>/w/tool</working-directory>
      <role>assistant</role><model>m</model>
      <content>
        <thinking signature="x">hidden</thinking>
        <text>Let me look.</text>
        <tool-use id="toolu_1" name="Bash">
          <input>{"command": "ls", "description": "List"}</input>
        </tool-use>
      </content>
    </message>
    <message uuid="u2" parent-uuid="a1" timestamp="2025-07-02T20:00:06.000Z">
      <event-type>user</event-type><working-directory>/w/tool</working-directory>
      <role>user</role>
      <content><tool-result tool-use-id="toolu_1">README.md</tool-result></content>
    </message>
  </messages>
</claude-session>
"""


def test_an_export_becomes_the_transcript_the_import_reads(tmp_path: Path) -> None:
    export = tmp_path / "export.xml"
    export.write_text(EXPORT)
    lines = transcript_lines(export)
    assert [line["uuid"] for line in lines] == ["u1", "a1", "u2"]  # the summary line dropped
    assert lines[1]["parentUuid"] == "u1" and lines[1]["sessionId"] == "s-1"
    assert lines[1]["message"]["content"][2] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Bash",
        "input": {"command": "ls", "description": "List"},
    }
    out = tmp_path / "s-1.jsonl"
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    events, skipped = claude_events(out, {}, lambda *_where: "tool")
    assert skipped == 0
    shapes = [(e["role"], e["type"], e["text"][:12]) for e in events]
    assert shapes == [
        ("user", "message", "Keep it a sc"),
        ("assistant", "message", "Let me look."),  # the thinking block is not said
        ("assistant", "tool_call", "$ ls  # List"),
        ("tool", "tool_result", "$ ls\nexit 0\n"),
    ]
    assert events[3]["text"].endswith("README.md")


def test_the_committed_session_reads_whole() -> None:
    assert all(path.exists() for _, path in SOURCES)
    events = load_events()
    counts = Counter((e["project_id"], e["role"], e["type"]) for e in events)
    # 19 user lines with text; Claude Code wrote five of them (two "[Request interrupted by
    # user ...]", three /export commands): stored as ``runtime`` (issue 52, point 3)
    assert counts[("cctrace", "user", "message")] == 14
    assert counts[("cctrace", "system", "runtime")] == 5
    assert counts[("cctrace", "assistant", "message")] == 57
    assert counts[("cctrace", "assistant", "tool_call")] == 133
    assert counts[("cctrace", "tool", "tool_result")] == 132
    assert (
        counts[("sungather", "assistant", "tool_call")] == 262
    )  # two sessions, a repeated line once
    assert counts[("sungather", "tool", "tool_result")] == 261
    # 33 prompts, six of them slash commands ("/hi", "/compact"...: ``runtime``, the command
    # line in ``metadata.command``)
    assert counts[("bookminder", "user", "message")] == 27
    assert counts[("bookminder", "system", "runtime")] == 6
    assert counts[("bookminder", "assistant", "message")] == 105
    assert counts[("bookminder", "assistant", "tool_call")] == 157
    assert counts[("bookminder", "tool", "tool_result")] == 157
    assert len({e["event_id"] for e in events}) == len(events)  # a repeated line: once


WIDE = "word " * 33 + "wrapped"  # 169 characters: the terminal broke the line after it
CONSOLE = f"""claude-trace
╭──────────────╮
│ ✻ Welcome!   │
╰──────────────╯

> /hi is running…\x20
  ⎿  Read TODO.md (31 lines)

⏺ {WIDE}
   here. Then a list:
  - one

⏺ Bash(git status)
  ⎿  On branch main\x20\x20\x20
     nothing to commit

✻ Thinking…

  hidden

⏺ Update(TODO.md)
  ⎿  Updated TODO.md with 1 addition and 1 removal
        1    # TODO
        2 -  - old
        2 +  - new
       3    - kept
  ⎿  Interrupted by user

⏺ Write(x.md)
  ⎿  Error: File has not been read yet. Read it first before writing to it.
"""


def test_a_console_log_becomes_the_transcript_the_import_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "day-000.md"
    log.write_text(CONSOLE)
    anchors = (("claude-trace", "2025-07-04T18:00:00Z"), ("Write(x.md)", "2025-07-04T18:00:28Z"))
    monkeypatch.setitem(console.ANCHORS, "day-000.md", anchors)
    lines = console.transcript_lines(log)
    # one line per block, named by the log line it starts on; a second per log line here
    assert [(line["uuid"], line["timestamp"][17:19]) for line in lines] == [
        ("day-000:L6", "05"),  # the box is left out, and the file the command attached
        ("day-000:L9", "08"),
        ("day-000:L13", "12"),
        ("day-000:L13:result", "13"),
        ("day-000:L17", "16"),  # thinking: kept, never said
        ("day-000:L21", "20"),
        ("day-000:L21:result", "21"),
        ("day-000:L29", "28"),
        ("day-000:L29:result", "29"),
    ]
    assert lines[1]["message"]["content"][0]["text"] == f"{WIDE} here. Then a list:\n- one"
    edit = lines[5]["message"]["content"][0]
    assert edit["name"] == "Edit" and edit["id"] == "toolu_day000_L21"
    assert edit["input"] == {
        "file_path": f"{console.CWD}/TODO.md",
        "old_string": "# TODO\n- old\n- kept",
        "new_string": "# TODO\n- new\n- kept",
    }
    out = tmp_path / "day-000.jsonl"
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    events, skipped = claude_events(out, {}, lambda *_where: "tool")
    assert skipped == 0
    shapes = [(e["role"], e["type"], e["text"].split("\n")[0][:18]) for e in events]
    assert shapes == [
        ("system", "runtime", "<command-name>/hi<"),  # the slash command: Claude Code's
        ("assistant", "message", "word word word wor"),
        ("assistant", "tool_call", "$ git status"),
        ("tool", "tool_result", "$ git status"),
        ("assistant", "tool_call", "Edit /Users/palimo"),
        ("tool", "tool_result", "Edit /Users/palimo"),
        ("assistant", "tool_call", "Write /Users/palim"),
        ("tool", "tool_result", "Write /Users/palim"),
    ]
    assert events[3]["text"].endswith("exit 0\nOn branch main\nnothing to commit")
    assert events[5]["text"].endswith(": applied")
    assert "failed: File has not been read yet" in events[7]["text"]


def test_the_bookminder_transcript_is_its_console_log_written_back() -> None:
    (path,) = [p for project, p in SOURCES if project == "bookminder"]
    lines = console.transcript_lines(path.with_suffix(".md"))
    assert path.read_text() == "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)


def every_split() -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Per questions module of the corpus: the events of its transcripts and its questions."""
    out = []
    for part in parts():
        events = load_corpus([part])
        out.append((events, questions_of(events, part.questions)))  # raises on a bad ref
    return out


def test_every_question_points_at_moments_of_its_project() -> None:
    assert len(questions_of(load_events())) == len(QUESTIONS) >= 20
    for events, questions in every_split():
        by_id = {e["event_id"]: e for e in events}
        for q in questions:
            for event_id in q["event_ids"]:
                assert by_id[event_id]["project_id"] == q["project_id"]
            if q["kind"] == "artifact":
                assert any(by_id[i]["type"] == "tool_call" for i in q["event_ids"]), q["question"]
            if q["kind"] in ("temporal", "resume"):
                assert all(is_prose(by_id[i]) for i in q["event_ids"])


def test_the_corpus_is_split_by_project_with_a_test_side_of_its_own() -> None:
    """Issue 52: at least 100 test questions, on projects no dev question is asked in, and
    questions on every transcript of the corpus."""
    found = parts()
    sides: dict[str, set[str]] = {"dev": set(), "test": set()}
    for part in found:
        sides[part.split] |= {p for p, _ in part.sources}
    assert not sides["dev"] & sides["test"]
    assert sum(len(p.questions) for p in found if p.split == "test") >= 100
    for part in found:  # (project, question): asked in its project, or in none at all
        assert {p for p, _ in part.unanswerable} <= {p for p, _ in part.sources}, part.name
    assert len(sides["test"]) >= 4
    planted = [*found, Part("x", "test", "claude-code", found[0].sources[:1], (), ())]
    with pytest.raises(ValueError, match="in both splits"):
        check_split_by_project(planted)


def test_paraphrases_avoid_the_words_of_what_they_ask_about() -> None:
    asked_somewhere = 0
    for events, questions in every_split():
        by_id = {e["event_id"]: e for e in events}
        asked = [q for q in questions if q["kind"] == "paraphrase"]
        asked_somewhere += len(asked)
        for q in asked:
            said = {
                w for i in q["event_ids"] if is_prose(by_id[i]) for w in tokens(by_id[i]["text"])
            }
            shared = [w for w in tokens(q["question"]) if w in said]
            assert len(shared) <= 1, (q["question"], shared)
    assert asked_somewhere >= 10


def test_the_labelled_kinds_are_sentences_the_real_sessions_hold() -> None:
    """``kinds_real.jsonl`` measures the classifier on what people and agents really said:
    every sentence is in a prompt or reply of the transcripts, with a kind the product knows;
    the same for the held-out sets (``kinds_heldout_real.jsonl``, ``kinds_heldout2_real.jsonl``,
    ``kinds_heldout3_real.jsonl``, ``kinds_heldout4_real.jsonl``, ``kinds_heldout5_real.jsonl``)
    and their own sessions."""
    rows = load_real_kinds()
    said = "\n".join(e["text"] for e in load_events() if is_prose(e))
    assert len(rows) >= 300
    assert {r["kind"] for r in rows} <= set(GOLD_KINDS)
    assert {r["source"] for r in rows} == {"cctrace", "sungather", "bookminder"}
    missing = [r["text"][:60] for r in rows if r["text"] not in said]
    assert not missing, missing
    assert sum(r["kind"] != "observation" for r in rows) >= 30  # enough memories to mean something
    # the held-out sets: each one's sentences are in its own sessions (by project), and every
    # held-out session is read by one of them
    read: set[str] = set()
    sets = (
        (REAL_HELDOUT, 100),
        (REAL_HELDOUT2, 120),
        (REAL_HELDOUT3, 140),
        (REAL_HELDOUT4, 250),
        (REAL_HELDOUT5, 280),
    )
    for path, least in sets:
        heldout = load_real_kinds(path)
        projects = {r["source"] for r in heldout}
        sources = [(p, t) for p, t in HELDOUT_SOURCES if p in projects]
        said = "\n".join(e["text"] for e in load_events(sources) if is_prose(e))
        assert len(heldout) >= least, path.name
        assert {r["kind"] for r in heldout} <= set(GOLD_KINDS), path.name
        assert projects <= {p for p, _ in HELDOUT_SOURCES}, path.name
        assert [r["text"][:60] for r in heldout if r["text"] not in said] == [], path.name
        assert not projects & read, path.name  # no session in both sets
        read |= projects
    assert read == {p for p, _ in HELDOUT_SOURCES}
