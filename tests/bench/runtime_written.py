"""What a coding agent's runtime wrote into a session, read from the raw transcripts, and how
much of the table of contents was made of it (issue 52, point 3).

The product types such text as ``runtime`` events (``agent_memory_hooks``); this module does not
ask it. It reads each transcript's own structure, so that the count cannot agree with the
product by construction (the rule of ``tests/leak_lint.py``: a metric never shares the
product's word lists):

- Claude Code: a line's own flags (``isMeta``, ``isCompactSummary``), the compaction subagent
  (a sidechain whose ``agentId`` starts with ``acompact``), the synthetic model, and a user turn
  whose text is a runtime wrapper (``is_wrapper``);
- Codex: a user message whose text is a wrapper (the environment, the instructions);
- Gemini CLI: a message whose ``type`` is neither the user's nor the model's;
- OpenCode: a text part marked ``synthetic``.

A wrapper is told by its shape, not its name: text made mostly of ``<name>...</name>``
elements (80% of its characters or more, a heading before them allowed), or one bracketed
line (``[... by user]``).

An event (a prompt, a reply, a note: never a tool's call or output) is the runtime's when it
is a Claude Code line's (``metadata.transcript_uuid``) or its text holds the start of such a
text (the other runtimes, whose readers keep the text as it was).
A TOC bullet is counted when one of its grips cites such an event; a title when one of its
halves ("goal — outcome") is found in the runtime's text and in nothing a person or the model
said in that project.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

LEVELS = ("year", "month", "week", "day", "segment")
_ELEMENT = re.compile(r"<([A-Za-z][\w-]*)>.*?</\1>", re.S)
WRAPPED_SHARE = 0.8
SNIPPET = 80  # characters of a runtime text that identify it inside an event's text
MIN_HALF = 12  # a title half shorter than this is a word or two: found everywhere


@dataclass(frozen=True)
class Written:
    """One piece of runtime text: its Claude Code line (else None), why, and its text."""

    uuid: str | None
    why: str
    text: str


def is_wrapper(text: str) -> bool:
    """Text whose characters are mostly inside tag-delimited elements, or one bracketed line."""
    body = text.strip()
    if not body:
        return False
    if body.startswith("[") and body.endswith("]") and "\n" not in body:
        return True
    if not _ELEMENT.search(body):
        return False
    rest = _ELEMENT.sub("", body)
    return len(rest.strip()) <= (1 - WRAPPED_SHARE) * len(body)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(
            str(b.get("text") or "")
            for b in content
            if isinstance(b, dict) and b.get("type") in ("text", "input_text", "output_text")
        )
    return ""


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict):
                yield item


def claude_code(path: Path) -> list[Written]:
    found = []
    for item in _lines(path):
        kind, message = item.get("type"), item.get("message")
        if kind not in ("user", "assistant") or not isinstance(message, dict):
            continue
        text = _text(message.get("content"))
        why = None
        if item.get("isSidechain") and str(item.get("agentId") or "").startswith("acompact"):
            why = "compaction subagent"
        elif item.get("isCompactSummary"):
            why = "isCompactSummary"
        elif item.get("isMeta"):
            why = "isMeta"
        elif message.get("model") == "<synthetic>":
            why = "synthetic model"
        elif kind == "user" and is_wrapper(text):
            why = "wrapper"
        if why and text.strip():
            found.append(Written(str(item.get("uuid") or ""), why, text))
    return found


def codex(path: Path) -> list[Written]:
    found = []
    for item in _lines(path):
        entry = item.get("payload") if item.get("type") == "response_item" else item
        if not isinstance(entry, dict) or entry.get("type") != "message":
            continue
        text = _text(entry.get("content"))
        if entry.get("role") == "user" and is_wrapper(text):
            found.append(Written(None, "wrapper", text))
    return found


def gemini_cli(path: Path) -> list[Written]:
    record = json.loads(path.read_text(encoding="utf-8"))
    messages = record.get("messages") if isinstance(record, dict) else None
    return [
        Written(None, f"type {m.get('type')}", _text(m.get("content")))
        for m in messages or []
        if isinstance(m, dict)
        and m.get("type") not in ("user", "gemini")
        and _text(m.get("content")).strip()
    ]


def opencode(path: Path) -> list[Written]:
    storage = path.parents[2]  # storage/session/<project>/<session>.json
    found = []
    for part_file in sorted((storage / "part").glob("*/*.json")):
        part = json.loads(part_file.read_text(encoding="utf-8"))
        if isinstance(part, dict) and part.get("synthetic") and _text([part]).strip():
            found.append(Written(None, "synthetic part", _text([part])))
    return found


READERS = {"claude-code": claude_code, "codex": codex, "gemini-cli": gemini_cli}
READERS["opencode"] = opencode


def written(sources: Iterable[tuple[str, str, Path]]) -> dict[str, list[Written]]:
    """(runtime, project, transcript) -> the runtime's texts, by project."""
    out: dict[str, list[Written]] = defaultdict(list)
    for runtime, project, path in sources:
        read = READERS.get(runtime)
        if read is not None:
            out[project].extend(read(path))
    return out


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


@dataclass
class BoilerplateReport:
    """Per level: (bullets citing the runtime's events, bullets), (titles from its text,
    titles); the runtime's events stored; examples."""

    bullets: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    titles: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    events: int = 0
    texts: int = 0
    compaction_nodes: int = 0
    examples: list[str] = field(default_factory=list)

    def table(self) -> str:
        rows = ["  level     bullets citing runtime events   titles from runtime text"]
        for level in LEVELS:
            b, t = self.bullets.get(level, [0, 0]), self.titles.get(level, [0, 0])
            rows.append(f"  {level:<9} {b[0]:>6} of {b[1]:<22} {t[0]:>6} of {t[1]}")
        rows.append(
            f"  runtime-written texts in the transcripts: {self.texts}; their events stored:"
            f" {self.events}; TOC nodes citing a compaction subagent's line:"
            f" {self.compaction_nodes}"
        )
        rows += [f"    e.g. {e}" for e in self.examples]
        return "\n".join(rows)


_NODES = """
SELECT n.level, n.project_id, v.title, v.bullets
FROM toc_nodes n
JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE NOT n.is_empty
"""


def _halves(title: str) -> list[str]:
    return [
        h
        for h in (_squash(p).rstrip(".…").strip() for p in title.split(" — "))
        if len(h) >= MIN_HALF
    ]


def measure(
    pg_dsn: str, found: dict[str, list[Written]], shown: Collection[str] = ()
) -> BoilerplateReport:
    """How many TOC bullets and titles, per level, come from what the runtime wrote; examples
    from the projects in ``shown`` only (the dev side: the test side is counted, never read)."""
    report = BoilerplateReport()
    report.texts = sum(len(v) for v in found.values())
    uuids = {w.uuid: w.why for ws in found.values() for w in ws if w.uuid}
    snippets = {p: {_squash(w.text)[:SNIPPET] for w in ws if not w.uuid} for p, ws in found.items()}
    runtime_texts = {p: "\x00".join(_squash(w.text) for w in ws) for p, ws in found.items()}
    runtime_ids: dict[str, str] = {}
    said_texts: dict[str, list[str]] = defaultdict(list)
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute(
            "SELECT event_id, project_id, text, metadata->>'transcript_uuid', type FROM events"
        ).fetchall()
        grips: dict[str, list[str]] = dict(
            conn.execute("SELECT grip_id, event_ids FROM toc_grips").fetchall()
        )
        nodes: Sequence[tuple[Any, ...]] = conn.execute(_NODES).fetchall()
    for event_id, project, text, uuid, etype in rows:
        squashed = _squash(str(text or ""))
        # a line's tool results share its uuid, and a tool's output may hold what the runtime
        # copied of it (OpenCode's synthetic part of a file read): only text events count
        tool = etype in ("tool_call", "tool_result")
        why = uuids.get(uuid) if uuid and not tool else None
        if why is None and not tool and any(s and s in squashed for s in snippets.get(project, ())):
            why = "text"
        if why is not None:
            runtime_ids[str(event_id)] = why
        else:
            said_texts[str(project)].append(squashed)
    report.events = len(runtime_ids)
    said_blob = {p: "\x00".join(t) for p, t in said_texts.items()}
    for level, project, title, bullets in nodes:
        report.titles[level][1] += 1
        runtime_text = runtime_texts.get(project, "")
        if any(h in runtime_text and h not in said_blob.get(project, "") for h in _halves(title)):
            report.titles[level][0] += 1
            if len(report.examples) < 6 and project in shown:
                report.examples.append(f"[{level} title] {title[:100]}")
        compaction = False
        for bullet in bullets or []:
            cited = [e for g in bullet.get("grip_ids", []) for e in grips.get(g, [])]
            whys = [runtime_ids[e] for e in cited if e in runtime_ids]
            report.bullets[level][1] += 1
            if whys:
                report.bullets[level][0] += 1
                compaction = compaction or "compaction subagent" in whys
                if len(report.examples) < 6 and project in shown:
                    text = str(bullet.get("text", "")).replace("\n", " ")[:90]
                    report.examples.append(f"[{level} bullet, {whys[0]}] {text}")
        report.compaction_nodes += compaction
    return report
