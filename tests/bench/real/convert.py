"""Turn a public session export back into the Claude Code transcript it was exported from.

The real sessions of this benchmark were published as exports, not as the raw
``~/.claude/projects/<cwd>/<session>.jsonl``: cctrace's XML keeps every line's ``uuid``,
``parent-uuid``, ``timestamp``, ``cwd``, role and content blocks (text, thinking, tool use
with its input, tool result), which is all the transcript reader
(``agent_memory_hooks.claude_code.transcript_events``) looks at. Writing the transcript back
lets the benchmark import the session the way a user would: ``agent-memory import
claude-code PATH``.

``python -m tests.bench.real.convert EXPORT.xml OUT.jsonl``
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

NS = "{https://claude.ai/session-export/v1}"


def _blocks(content: ET.Element) -> str | list[dict[str, Any]]:
    """A message's content: its text when it is plain, else its blocks."""
    children = list(content)
    if not children:
        return content.text or ""
    blocks: list[dict[str, Any]] = []
    for child in children:
        tag = child.tag.removeprefix(NS)
        if tag == "text":
            blocks.append({"type": "text", "text": child.text or ""})
        elif tag == "thinking":
            blocks.append({"type": "thinking", "thinking": child.text or ""})
        elif tag == "tool-use":
            raw = child.findtext(f"{NS}input") or "{}"
            blocks.append(
                {
                    "type": "tool_use",
                    "id": child.get("id"),
                    "name": child.get("name"),
                    "input": json.loads(raw),
                }
            )
        elif tag == "tool-result":
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": child.get("tool-use-id"),
                    "content": child.text or "",
                }
            )
    return blocks


def transcript_lines(export: Path) -> list[dict[str, Any]]:
    """The transcript lines of a cctrace XML export, in its order."""
    root = ET.parse(export).getroot()
    session = root.findtext(f"{NS}metadata/{NS}session-id") or export.stem
    lines: list[dict[str, Any]] = []
    for message in root.iterfind(f"{NS}messages/{NS}message"):
        kind = message.findtext(f"{NS}event-type")
        content = message.find(f"{NS}content")
        if kind not in ("user", "assistant") or content is None:
            continue  # the export's summary line carries nothing to remember
        line: dict[str, Any] = {
            "parentUuid": message.get("parent-uuid"),
            "sessionId": session,
            "cwd": message.findtext(f"{NS}working-directory"),
            "type": kind,
            "uuid": message.get("uuid"),
            "timestamp": message.get("timestamp"),
            "message": {"role": message.findtext(f"{NS}role") or kind},
        }
        model = message.findtext(f"{NS}model")
        if model:
            line["message"]["model"] = model
        line["message"]["content"] = _blocks(content)
        lines.append(line)
    return lines


def run(
    argv: Sequence[str] | None,
    doc: str | None,
    source_help: str,
    read: Callable[[Path], list[dict[str, Any]]],
) -> int:
    """A converter's command line: read the source, write the transcript, one JSON per line
    (shared by this module and ``console``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0] if doc else None)
    parser.add_argument("source", type=Path, help=source_help)
    parser.add_argument("out", type=Path, help="the transcript to write (.jsonl)")
    args = parser.parse_args(argv)
    lines = read(args.source)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    print(f"{args.out}: {len(lines)} lines")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(argv, __doc__, "a cctrace XML export", transcript_lines)


if __name__ == "__main__":
    sys.exit(main())
