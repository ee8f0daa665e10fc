"""Turn a Claude Code console log back into a transcript the import reads.

BookMinder's sessions were published as what the terminal showed
(``claude-dev-log-diary/day-NNN.md``, copied from the console by hand), not as the
``~/.claude/projects/<cwd>/<session>.jsonl`` the import reads. The console shows every prompt,
reply, thinking block and tool call (its name and main argument) in order, and the head of each
result, but no ids and no times. The transcript written back has:

- one line per prompt, reply, thinking block, tool call and tool result, in the log's order;
- ids made from the log's line numbers, so a question's gold can be read in the log:
  ``uuid`` ``day-017:L123`` (the line the block starts on; its result ``day-017:L123:result``)
  and ``tool_use_id`` ``toolu_day017_L123``; the session id is the log's name;
- times interpolated by line number between moments the log can be dated by (``ANCHORS``: the
  start of the capture and the commits the session made, whose times git keeps), so they are
  right at the anchors and estimates between them;
- the tool names a transcript has: Update is Edit, its ``old_string`` and ``new_string`` read
  back from the diff the console shows, Search is Grep, List is LS, Fetch is WebFetch, Update
  Todos is TodoWrite, a plan shown as approved or rejected an ExitPlanMode call; relative paths
  made absolute against the session's ``cwd``, as the tools receive them;
- a result is what the console shows under the call (``Read 137 lines``), with ``is_error``
  when it shows ``Error: ...``, ``User rejected ...`` or ``(No changes)``; a slash command is
  written as Claude Code writes one (``<command-name>/hi</command-name>``); a line the terminal
  wrapped at its width is joined in prompts, replies and thinking.

Left out: the welcome box, the files attached to a prompt (``⎿ Read TODO.md``), the output of
local commands, "Interrupted by user" and the UI's tips. What the console cut stays cut, its
"… +9 lines (ctrl+r to expand)" kept in the result (not in an edit's strings or a Write's
content).

``python -m tests.bench.real.console LOG.md OUT.jsonl``
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.bench.real import convert

# The moments a log can be dated by: (text first found on a line, its UTC time).
ANCHORS: dict[str, tuple[tuple[str, str], ...]] = {
    # claude-trace names its capture by its start (log-2025-07-04-17-55-42, UTC: the session's
    # `git log` shows a commit of 17:46:19Z); the rest are the session's own commits.
    "day-017.md": (
        ("claude-trace", "2025-07-04T17:55:42Z"),
        ("[main 46f553f]", "2025-07-04T20:01:19Z"),
        ("[main 6ee2e94]", "2025-07-04T20:02:23Z"),
        ("[main 4d91b43]", "2025-07-04T20:31:59Z"),
        ("[main d1df227]", "2025-07-04T20:43:37Z"),
        ("[main 3db7e5a]", "2025-07-04T21:09:22Z"),
        ("[main 98bdda6]", "2025-07-04T21:13:14Z"),
    ),
}
CWD = "/Users/palimondo/Developer/BookMinder"
# a prose line the terminal broke: its text, a space and the next line's first word would not
# have fitted (in day-017 lines broken by hand reach 157 characters so, wrapped ones 171)
WRAP = 165
TOOLS = {
    "Bash": "Bash",
    "Read": "Read",
    "Update": "Edit",
    "Write": "Write",
    "Search": "Grep",
    "List": "LS",
    "Fetch": "WebFetch",
    "Task": "Task",
}
_CALL = re.compile(r"^(" + "|".join(TOOLS) + r")\((.*)\)$")
_ARG = re.compile(r'(\w+): "((?:[^"\\]|\\.)*)"')
_DIFF = re.compile(r"^ *(\d+) ([ +-])  ?(.*)$")
_DIFF_WRAP = re.compile(r"^ +([+-]) (.*)$")
_COMMAND = re.compile(r"^/([\w-]+)(?: is running…)?\s*$")
_TIP = "Tip: "  # the console's advice under a result ("Tip: Use # to memorize shortcut ...")
_CUT = "… +"  # where the console cut a result: "… +36 lines (ctrl+r to expand)"


@dataclass
class Block:
    """A run of console lines: a prompt (``>``), a reply or tool call (``⏺``), thinking (``✻``)."""

    line: int  # 1-based line number of its first line
    head: str
    body: list[tuple[int, str]] = field(default_factory=list)


def _blocks(lines: Sequence[str]) -> list[Block]:
    blocks: list[Block] = []
    for number, raw in enumerate(lines, 1):
        if raw[:1].strip():
            blocks.append(Block(number, raw))
        elif blocks:
            blocks[-1].body.append((number, raw))
    return blocks


def _prose(first: str, body: Sequence[tuple[int, str]]) -> str:
    """A prompt, reply or thinking block's text: indentation off, the terminal's wraps joined."""
    out: list[str] = []
    prev = ""
    for raw in (first, *(r for _, r in body)):
        text = raw[2:] if raw.startswith("  ") else raw.strip()
        words = text.split()
        if out and words and len(prev.rstrip()) + 1 + len(words[0]) > WRAP:
            out[-1] = out[-1].rstrip() + " " + text.strip()
        else:
            out.append(text.rstrip())
        prev = raw
    return "\n".join(out).strip("\n")


def _split(body: Sequence[tuple[int, str]]) -> tuple[list[tuple[int, str]], list[list[str]]]:
    """The lines before the first ``⎿``, and each ``⎿`` run (its lines, indentation off)."""
    before: list[tuple[int, str]] = []
    shown: list[list[str]] = []
    for number, raw in body:
        if raw.startswith("  ⎿"):
            shown.append([raw[3:].lstrip(" \xa0").rstrip()])
        elif shown:
            shown[-1].append((raw[5:] if raw.startswith("     ") else raw.strip()).rstrip())
        else:
            before.append((number, raw))
    runs = [[r for r in run if not r.startswith(_TIP)] for run in shown]
    runs = [run[: max((i for i, r in enumerate(run) if r.strip()), default=-1) + 1] for run in runs]
    return before, [run for run in runs if run and run != ["Interrupted by user"]]


def _edit(shown: Sequence[str]) -> tuple[str, str]:
    """``old_string`` and ``new_string`` of an edit, from the diff the console shows."""
    rows: list[list[str]] = []  # [marker, text]
    for row in shown:
        if row.startswith(_CUT):
            continue
        number = _DIFF.match(row)
        wrapped = _DIFF_WRAP.match(row)
        if number:
            rows.append([number.group(2), number.group(3)])
        elif row.strip() == "...":
            rows.append([" ", "..."])
        elif rows and wrapped and wrapped.group(1) == rows[-1][0]:
            rows[-1][1] = rows[-1][1].rstrip() + " " + wrapped.group(2).strip()
        elif rows and row.strip():
            rows[-1][1] = rows[-1][1].rstrip() + " " + row.strip()
    old = "\n".join(text for marker, text in rows if marker != "+")
    new = "\n".join(text for marker, text in rows if marker != "-")
    return old, new


def _absolute(path: str) -> str:
    return path if path.startswith(("/", "~")) else f"{CWD}/{path}"


def _tool(name: str, arg: str, shown: Sequence[str]) -> tuple[str, dict[str, Any], str, bool]:
    """The transcript's tool name, its input, the result's text and whether it failed."""
    text = "\n".join(shown)
    failed = text.startswith(("Error:", "User rejected", "(No changes)"))
    result = text.removeprefix("Error: ") if text.startswith("Error:") else text
    if result == "(No content)":
        result = ""
    tool = TOOLS[name]
    tool_input: dict[str, Any]
    if tool == "Bash":
        tool_input = {"command": arg}
    elif tool in ("Read", "Edit", "Write"):
        tool_input = {"file_path": _absolute(arg)}
        if tool == "Edit" and shown and not text.startswith(("Error:", "(No changes)")):
            old, new = _edit(shown[1:])
            tool_input |= {"old_string": old, "new_string": new}
            result = shown[0]
        if tool == "Write" and not failed:
            tool_input["content"] = "\n".join(r for r in shown[1:] if not r.startswith(_CUT))
            result = shown[0]
    elif tool == "Grep":
        tool_input = dict(_ARG.findall(arg))
    elif tool == "LS":
        tool_input = {"path": _absolute(arg)}
    elif tool == "WebFetch":
        tool_input = {"url": arg}
    else:
        tool_input = {"description": arg}
    return tool, tool_input, result, failed


def _todos(shown: Sequence[str]) -> list[dict[str, str]]:
    return [
        {"content": row[1:].strip(), "status": "completed" if row[0] == "☒" else "pending"}
        for row in (r.strip() for r in shown)
        if row[:1] in ("☐", "☒")
    ]


def _plan(shown: Sequence[str]) -> str:
    rows = [r.strip() for r in shown[1:]]
    rows = [r.strip("│").rstrip() for r in rows if not r.startswith(("╭", "╰"))]
    return "\n".join(r[1:] if r.startswith(" ") else r for r in rows).strip("\n")


def _times(lines: Sequence[str], name: str) -> list[tuple[int, datetime]]:
    anchors: list[tuple[int, datetime]] = []
    for marker, when in ANCHORS.get(name, ()):
        number = next(i for i, raw in enumerate(lines, 1) if marker in raw)
        anchors.append((number, datetime.fromisoformat(when)))
    return anchors


def _time_of(number: int, anchors: Sequence[tuple[int, datetime]]) -> str:
    """The time of a log line: linear between the anchors around it, at the last pace after."""
    if len(anchors) < 2:
        raise ValueError("a console log needs two anchors to be dated")
    when = anchors[0][1]
    for (a, ta), (b, tb) in itertools.pairwise(anchors):
        if number <= b or (a, ta) == anchors[-2]:
            ms = (tb - ta) / timedelta(milliseconds=1) * (number - a) / (b - a)
            when = ta + timedelta(milliseconds=round(ms))
            break
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def transcript_lines(log: Path) -> list[dict[str, Any]]:
    """The transcript lines of a Claude Code console log, in its order."""
    lines = log.read_text(encoding="utf-8").split("\n")
    anchors = _times(lines, log.name)
    stem = log.stem
    out: list[dict[str, Any]] = []

    def add(kind: str, uuid: str, number: int, content: Any) -> None:
        out.append(
            {
                "parentUuid": out[-1]["uuid"] if out else None,
                "sessionId": stem,
                "cwd": CWD,
                "type": kind,
                "uuid": uuid,
                "timestamp": _time_of(number, anchors),
                "message": {"role": kind, "content": content},
            }
        )

    def call(number: int, tool: str, tool_input: dict[str, Any], result: str, failed: bool) -> None:
        use_id = f"toolu_{stem.replace('-', '')}_L{number}"
        block = {"type": "tool_use", "id": use_id, "name": tool, "input": tool_input}
        add("assistant", f"{stem}:L{number}", number, [block])
        outcome: dict[str, Any] = {"type": "tool_result", "tool_use_id": use_id, "content": result}
        if failed:
            outcome["is_error"] = True
        add("user", f"{stem}:L{number}:result", number + 1, [outcome])

    for block in _blocks(lines):
        head = block.head
        if head.startswith(">"):
            before, _attached = _split(block.body)
            text = _prose("  " + head[2:], before)
            command = _COMMAND.match(text)
            if command:
                name = command.group(1)
                text = (
                    f"<command-name>/{name}</command-name>\n"
                    f"<command-message>{name}</command-message>\n<command-args></command-args>"
                )
            if text.strip():
                add("user", f"{stem}:L{block.line}", block.line, text)
        elif head.startswith("✻"):
            thinking = _prose("", block.body)
            if thinking:
                add(
                    "assistant",
                    f"{stem}:L{block.line}",
                    block.line,
                    [{"type": "thinking", "thinking": thinking}],
                )
        elif head.startswith("⏺ "):
            said = head[2:]
            before, shown = _split(block.body)
            first = shown[0] if shown else []
            tool = _CALL.match(said)
            shown_at = next((n for n, raw in block.body if raw.startswith("  ⎿")), block.line)
            if tool:
                call(block.line, *_tool(tool.group(1), tool.group(2), first))
            elif said in ("Update Todos", "Read Todos"):
                todos = {"todos": _todos(first)} if said == "Update Todos" else {}
                name = "TodoWrite" if said == "Update Todos" else "TodoRead"
                call(block.line, name, todos, "\n".join(first), False)
            elif said == "User approved Claude's plan:":
                plan = "\n".join(first).strip()
                call(
                    block.line, "ExitPlanMode", {"plan": plan}, "User approved Claude's plan", False
                )
            else:
                text = _prose("  " + said, before)
                add(
                    "assistant",
                    f"{stem}:L{block.line}",
                    block.line,
                    [{"type": "text", "text": text}],
                )
                if first and first[0].startswith("User rejected Claude's plan"):
                    call(shown_at, "ExitPlanMode", {"plan": _plan(first)}, first[0], True)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    return convert.run(argv, __doc__, "a Claude Code console log (.md)", transcript_lines)


if __name__ == "__main__":
    sys.exit(main())
