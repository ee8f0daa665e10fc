"""Summaries of real sessions against the runtime's own compaction summaries (issue 52, point 6).

Run by ``make bench-summary-real``. ``bench-summary`` scores our summaries against LoCoMo's,
chat between two people; this one scores them on the real coding sessions of
``tests/bench/real/`` (their licenses in ``SOURCES.md``) against references nobody here wrote:
when a Claude Code session runs out of context, the runtime has the model write a summary of
the conversation so far and stores it as a user line marked ``isCompactSummary`` (the product's
reader types it a ``runtime`` event with ``metadata.runtime_kind == "compact_summary"``). That
summary is the reference for the **span** it summarizes.

1. The split's transcripts (``--split dev``, the default; ``test`` is scored once, when the
   issue is judged), read by their runtime's reader (``bench_real.load_corpus``). Each
   compaction summary event is a reference; its span:

   - Claude Code (``rule chain``): the conversation the runtime compacted, read from the raw
     transcript's own tree: from the summary's ``compact_boundary`` line back through
     ``logicalParentUuid`` / ``parentUuid`` to the previous compaction on that branch (a
     ``compact_boundary`` or an ``isCompactSummary`` line, not included) or to the session's
     first line. A transcript resumed from a point before an earlier compaction makes a
     branch: its next summary covers the conversation up to that point again, not what was
     said after the earlier compaction on the other branch.
   - otherwise (``rule time``): the session's events after its previous compaction summary
     (or its start) and before this one, in time order.

   The span's events are every event of those lines (prompts, replies, tool calls and
   results, the runtime's own lines). The references are **not posted**: every compaction
   summary event (``compact_summary``, and the compaction subagent's reply
   ``compaction_summary`` that holds the same text) is removed from what the stack receives.
2. The rest is posted to the stack of ``bench-summary`` (``tests/bench/stack.py``), drained
   until every segment is closed and summarized. **Ours** for a span: the TOC segment nodes
   (latest version, not empty) of the span's session of which at least half the own events
   (``event_ids`` after the ``overlap_count`` carried over from the previous segment) are
   events of the span, in time order: each node's title, then its bullets. A node overlaps a
   span by its events rather than by its time range, since a branch's span is not one range.
3. **Baselines** over the span's user and assistant messages (``type == "message"``: no tool
   call or output, no runtime event, no compaction prompt or boundary, no subagent line), split
   into sentences by the summarizer's own splitter, as in ``bench-summary``: ``lead-3``,
   ``textrank-3`` and ``textrank-k`` (k = our bullets in that span, at least 1).
   ROUGE-1/2/L F1 (rouge-score, stemmed) of each against the reference, which is the summary
   event's text as the runtime wrote it (its opening and closing lines included), averaged
   over spans; the mean length in words beside them.
4. **Runtime boilerplate** in our bullets, over every segment node of the split (not only the
   spans): a bullet whose grips (``toc_grips.event_ids``) cite a ``runtime`` event, and,
   independently of the product's typing, a bullet whose text holds the telltale opening of a
   compaction prompt or summary: the first ``TELLTALE`` characters of every such event of the
   split (``runtime_kind`` ``compact_summary``, ``compaction_prompt``, ``compaction_summary``),
   taken from the data at run time, compared case- and whitespace-insensitively. Target 0.

``--split both`` stores both splits in one stack and prints dev beside test. ``--json FILE``
writes the numbers; ``--keep`` keeps the work folder, ``--reuse WORKDIR`` scores a kept one
(the same split) without posting again.

A measurement, not a test: the exit code is 0 whatever the scores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from agent_memory_summarizer.text import split_sentences, tokens
from tests.bench.bench_coding import event_time
from tests.bench.bench_real import load_corpus
from tests.bench.metrics import ROUGE_TYPES, lead, rouge, textrank
from tests.bench.real.corpus import SPLITS, Part, parts
from tests.bench.report import stop_on_sigterm, table
from tests.bench.stack import (
    SUMMARIZED,
    ingest,
    question_stack,
    stop_and_clean,
    wait_until_indexed,
)

SUMMARY = "compact_summary"  # the reference: Claude Code's isCompactSummary line
# The compaction subagent's request and reply (``agent-acompact-*``): the reply is the summary
HIDDEN = frozenset({SUMMARY, "compaction_summary"})
COMPACTION = HIDDEN | {"compaction_prompt"}
TELLTALE = 60  # characters of a compaction prompt's or summary's opening that identify it
MIN_OWN_SHARE = 0.5  # share of a segment's own events inside a span that puts it in the span
OURS = "ours (TOC segments)"

NODES = """
SELECT n.project_id, v.session_id, n.node_id, v.start_ts, v.title, v.bullets,
       coalesce(v.event_ids, '{}'), coalesce(v.overlap_count, 0)
FROM toc_nodes n
JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE n.level = 'segment' AND NOT n.is_empty
ORDER BY v.session_id, v.start_ts, n.node_id
"""


def runtime_kind(event: Mapping[str, Any]) -> str:
    return str(event.get("metadata", {}).get("runtime_kind") or "")


def is_reference(event: Mapping[str, Any]) -> bool:
    return runtime_kind(event) == SUMMARY


def posted(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the stack receives: every event but the compaction summaries."""
    return [e for e in events if runtime_kind(e) not in HIDDEN]


def said(event: Mapping[str, Any]) -> bool:
    """A user's or the model's message of the main conversation (the baselines' input)."""
    return (
        event["type"] == "message"
        and event["role"] in ("user", "assistant")
        and not event.get("metadata", {}).get("sidechain")
    )


def squash(text: str) -> str:
    return " ".join(text.split()).lower()


def telltales(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """The opening of every compaction prompt and summary of the data, each once."""
    found = {squash(str(e["text"]))[:TELLTALE] for e in events if runtime_kind(e) in COMPACTION}
    return sorted(t for t in found if t)


# --------------------------------------------------------------------------------------------
# Spans
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One Claude Code transcript line's place in the conversation tree."""

    parent: str | None
    boundary: bool  # a ``compact_boundary`` system line
    summary: bool  # an ``isCompactSummary`` line


def transcript_tree(paths: Iterable[Path]) -> dict[str, Line]:
    """uuid -> its line, over every Claude Code transcript given (a boundary's parent is its
    ``logicalParentUuid``: the line the compacted conversation ended with)."""
    tree: dict[str, Line] = {}
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            for raw in handle:
                try:
                    item = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(item, dict) or not isinstance(item.get("uuid"), str):
                    continue
                boundary = item.get("type") == "system" and item.get("subtype") == (
                    "compact_boundary"
                )
                parent = item.get("logicalParentUuid") if boundary else item.get("parentUuid")
                tree[item["uuid"]] = Line(
                    parent if isinstance(parent, str) else None,
                    boundary,
                    bool(item.get("isCompactSummary")),
                )
    return tree


def compacted_lines(tree: Mapping[str, Line], summary_uuid: str) -> set[str]:
    """The uuids of the conversation a summary line summarizes: its ancestors, from its own
    boundary back to the previous compaction (not included) or the first line. Empty when the
    tree does not know the summary or it has no parent (no boundary to follow)."""
    line = tree.get(summary_uuid)
    out: set[str] = set()
    if line is None:
        return out
    current = line.parent
    own_boundary = True
    while current is not None and current not in out:
        step = tree.get(current)
        if step is None:
            break
        if step.summary or (step.boundary and not own_boundary):
            break
        if not step.boundary:
            out.add(current)
        own_boundary = own_boundary and step.boundary
        current = step.parent
    return out


@dataclass(frozen=True)
class Span:
    split: str
    project: str
    session_id: str
    summary_id: str  # the compaction summary's event id
    rule: str  # "chain" (the transcript's tree) or "time"
    reference: str
    event_ids: frozenset[str]  # every event of the span (the summary excluded)
    texts: tuple[str, ...]  # its user and assistant messages, in time order
    start: str
    end: str


def find_spans(
    events: Sequence[dict[str, Any]],
    tree: Mapping[str, Line],
    split_of: Mapping[str, str],
) -> list[Span]:
    """Every compaction summary of ``events`` (in time order) with its span."""
    ordered = sorted(events, key=event_time)
    by_line: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in ordered:
        uuid = e.get("metadata", {}).get("transcript_uuid")
        if isinstance(uuid, str):
            by_line[uuid].append(e)
    spans = []
    for i, summary in enumerate(ordered):
        if not is_reference(summary):
            continue
        uuid = summary["metadata"].get("transcript_uuid")
        lines = compacted_lines(tree, uuid) if isinstance(uuid, str) else set()
        if lines:
            rule = "chain"
            mine = sorted(
                (e for u in lines for e in by_line.get(u, ()) if not is_reference(e)),
                key=event_time,
            )
        else:
            rule = "time"
            mine = []
            for e in reversed(ordered[:i]):
                if e["session_id"] != summary["session_id"]:
                    continue
                if is_reference(e):
                    break
                mine.append(e)
            mine.reverse()
        if not mine:
            continue
        project = str(summary["project_id"])
        spans.append(
            Span(
                split=split_of.get(project, "?"),
                project=project,
                session_id=str(summary["session_id"]),
                summary_id=str(summary["event_id"]),
                rule=rule,
                reference=str(summary["text"]),
                event_ids=frozenset(str(e["event_id"]) for e in mine),
                texts=tuple(str(e["text"]) for e in mine if said(e)),
                start=str(mine[0]["ts"]),
                end=str(mine[-1]["ts"]),
            )
        )
    return spans


# --------------------------------------------------------------------------------------------
# Ours, the baselines, the scores
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    project: str
    session_id: str
    node_id: str
    title: str
    bullets: tuple[dict[str, Any], ...]
    own: tuple[str, ...]  # its own event ids (the overlap carried over left out)


def read_nodes(pg_dsn: str) -> list[Node]:
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute(NODES).fetchall()
    return [
        Node(str(p), str(s), str(n), str(title), tuple(bullets or ()), tuple(ids[overlap:]))
        for p, s, n, _start, title, bullets, ids, overlap in rows
    ]


def nodes_in(span: Span, nodes: Iterable[Node]) -> list[Node]:
    """The segment nodes of the span's session with at least ``MIN_OWN_SHARE`` of their own
    events in the span (``nodes`` in time order: so is the answer)."""
    return [
        n
        for n in nodes
        if n.session_id == span.session_id
        and n.project == span.project
        and n.own
        and sum(e in span.event_ids for e in n.own) >= MIN_OWN_SHARE * len(n.own)
    ]


def our_text(nodes: Sequence[Node]) -> tuple[str, int]:
    """Each node's title, then its bullets, joined with spaces; and the bullet count."""
    parts_: list[str] = []
    count = 0
    for node in nodes:
        parts_.append(node.title.rstrip(".") + ".")
        for bullet in node.bullets:
            parts_.append(str(bullet.get("text", "")))
            count += 1
    return " ".join(parts_), count


def candidates(span: Span, ours: str, bullet_count: int) -> dict[str, str]:
    sents = [s.text.strip() for t in span.texts for s in split_sentences(t) if s.text.strip()]
    words = [tokens(s) for s in sents]
    return {
        OURS: ours,
        "lead-3": " ".join(lead(sents, 3)),
        "textrank-3": " ".join(textrank(sents, 3, words)),
        "textrank-k (k = our bullets)": " ".join(textrank(sents, max(bullet_count, 1), words)),
    }


@dataclass
class SpanScore:
    split: str
    session_id: str
    rule: str
    start: str
    end: str
    events: int
    messages: int
    reference_words: int
    nodes: int
    bullets: int
    scores: dict[str, dict[str, float]]  # system -> metric -> F1
    words: dict[str, int]  # system -> words


def score_span(span: Span, nodes: Sequence[Node]) -> SpanScore:
    mine = nodes_in(span, nodes)
    text, bullet_count = our_text(mine)
    scores: dict[str, dict[str, float]] = {}
    words: dict[str, int] = {}
    for name, candidate in candidates(span, text, bullet_count).items():
        scores[name] = rouge(span.reference, candidate)
        words[name] = len(candidate.split())
    return SpanScore(
        span.split,
        span.session_id,
        span.rule,
        span.start,
        span.end,
        len(span.event_ids),
        len(span.texts),
        len(span.reference.split()),
        len(mine),
        bullet_count,
        scores,
        words,
    )


def summary_rows(split: str, scored: Sequence[SpanScore]) -> list[list[str]]:
    """The split's rows: one per system (mean F1 over spans, mean words), then the reference."""
    n = str(len(scored))
    if not scored:
        return [[split, "0", "(no compaction summary)", "", "", "", ""]]
    rows = []
    for name in scored[0].scores:
        rows.append(
            [
                split,
                n,
                name,
                *(
                    f"{statistics.fmean(s.scores[name][m] for s in scored):.3f}"
                    for m in ROUGE_TYPES
                ),
                f"{statistics.fmean(s.words[name] for s in scored):.0f}",
            ]
        )
    ref = statistics.fmean(s.reference_words for s in scored)
    rows.append([split, n, "(reference: compaction summary)", "", "", "", f"{ref:.0f}"])
    return rows


def means(scored: Sequence[SpanScore]) -> dict[str, dict[str, float]]:
    if not scored:
        return {}
    return {
        name: {
            **{m: statistics.fmean(s.scores[name][m] for s in scored) for m in ROUGE_TYPES},
            "words": statistics.fmean(s.words[name] for s in scored),
        }
        for name in scored[0].scores
    }


# --------------------------------------------------------------------------------------------
# Runtime boilerplate in our bullets
# --------------------------------------------------------------------------------------------


@dataclass
class Boilerplate:
    bullets: int = 0
    runtime_grips: int = 0  # bullets citing a runtime event
    telltale: int = 0  # bullets holding a compaction prompt's or summary's opening
    either: int = 0
    examples: list[str] = field(default_factory=list)

    def line(self, split: str) -> str:
        share = self.either / self.bullets if self.bullets else 0.0
        return (
            f"  {split}: runtime boilerplate in our bullets: {self.either} of {self.bullets}"
            f" ({share:.1%}; target 0): citing a runtime event {self.runtime_grips},"
            f" holding a compaction prompt's or summary's opening {self.telltale}"
        )


def boilerplate(
    pg_dsn: str,
    nodes: Iterable[Node],
    projects: Collection[str],
    openings: Sequence[str],
    shown: bool,
) -> Boilerplate:
    """Over every segment node of ``projects``; bullet texts as examples only when ``shown``."""
    with psycopg.connect(pg_dsn) as conn:
        runtime = {
            str(r[0]) for r in conn.execute("SELECT event_id FROM events WHERE type = 'runtime'")
        }
        grips: dict[str, list[str]] = {
            str(g): list(ids) for g, ids in conn.execute("SELECT grip_id, event_ids FROM toc_grips")
        }
    out = Boilerplate()
    for node in nodes:
        if node.project not in projects:
            continue
        for bullet in node.bullets:
            out.bullets += 1
            cited = [e for g in bullet.get("grip_ids", []) for e in grips.get(str(g), [])]
            by_grip = any(e in runtime for e in cited)
            text = squash(str(bullet.get("text", "")))
            by_text = any(o in text for o in openings)
            out.runtime_grips += by_grip
            out.telltale += by_text
            out.either += by_grip or by_text
            if (by_grip or by_text) and shown and len(out.examples) < 8:
                out.examples.append(text[:120])
    return out


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------


def split_of_projects(chosen: Sequence[Part]) -> dict[str, str]:
    return {project: p.split for p in chosen for project, _ in p.sources}


def claude_code_paths(chosen: Sequence[Part]) -> list[Path]:
    return [path for p in chosen if p.runtime == "claude-code" for _, path in p.sources]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--split",
        choices=(*SPLITS, "both"),
        default="dev",
        help="which side of the corpus to store and score (default dev; test is scored once,"
        " when the issue is judged)",
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="VAR=VALUE", help="extra stack setting"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument(
        "--reuse", metavar="WORKDIR", help="score a work folder kept by --keep (no ingest)"
    )
    parser.add_argument("--json", type=Path, help="write the numbers to this file")
    args = parser.parse_args(argv)
    stop_on_sigterm()
    chosen = [p for p in parts() if args.split in ("both", p.split)]
    names = [s for s in SPLITS if any(p.split == s for p in chosen)]
    events = load_corpus(chosen)
    split_of = split_of_projects(chosen)
    spans = find_spans(events, transcript_tree(claude_code_paths(chosen)), split_of)
    openings = telltales(events)
    sent = posted(events)
    for name in names:
        mine = [s for s in spans if s.split == name]
        rules = ", ".join(f"{r} {sum(s.rule == r for s in mine)}" for r in ("chain", "time"))
        print(
            f"{name}: {sum(split_of.get(str(e['project_id'])) == name for e in events)} events,"
            f" {len(mine)} compaction summaries (span rule: {rules})"
        )
    print(
        f"  posting {len(sent)} events ({len(events) - len(sent)} compaction summaries held"
        f" back); {len(openings)} telltale opening(s) of compaction prompts and summaries"
    )
    product, workdir, reuse = question_stack(args, "agent-memory-bench-summary-real-")
    failed = True
    nodes: list[Node] = []
    plates: dict[str, Boilerplate] = {}
    try:
        t0 = time.monotonic()
        product.start()
        print(f"  stack up in {time.monotonic() - t0:.0f} s ({workdir})")
        if not reuse:
            post_s = ingest(product, sent)
            print(f"  posted {len(sent):,} events in {post_s:.1f} s")
            waited = wait_until_indexed(product, len(sent), consumers=SUMMARIZED)
            print(f"  drained, segments closed and summarized {waited:.0f} s after the last post")
        nodes = read_nodes(product.pg_dsn)
        for name in names:
            projects = {p for p, s in split_of.items() if s == name}
            plates[name] = boilerplate(
                product.pg_dsn, nodes, projects, openings, shown=name == "dev"
            )
        failed = False
    except KeyboardInterrupt:
        print("interrupted")
    finally:
        stop_and_clean(product, workdir, args.keep or failed or reuse)
    if failed:
        return 1
    scored = [score_span(s, nodes) for s in spans]
    print("\n=== Spans (each compaction summary and what ours holds of its span) ===")
    for s in scored:
        print(
            f"  {s.split} {s.session_id[:8]} {s.start[:16]} .. {s.end[:16]} ({s.rule}):"
            f" {s.events} events, {s.messages} messages; reference {s.reference_words} words;"
            f" ours {s.nodes} segment nodes, {s.bullets} bullets"
        )
    print(
        "\n=== Summaries vs the runtime's compaction summary of the same span"
        " (ROUGE F1, mean over spans) ==="
    )
    rows = [["split", "n spans", "system", "ROUGE-1", "ROUGE-2", "ROUGE-L", "words"]]
    for name in names:
        rows += summary_rows(name, [s for s in scored if s.split == name])
    print(table(rows, [False, True, False, True, True, True, True]))
    empty = [s for s in scored if not s.nodes]
    if empty:
        print(f"  {len(empty)} span(s) without a segment node of ours (scored as empty)")
    print("\n=== Runtime boilerplate in our bullets (every segment node of the split) ===")
    for name in names:
        print(plates[name].line(name))
        for example in plates[name].examples:
            print(f"      e.g. {example}")
    if args.json is not None:
        out = {
            name: {
                "spans": [asdict(s) for s in scored if s.split == name],
                "means": means([s for s in scored if s.split == name]),
                "boilerplate": {k: v for k, v in asdict(plates[name]).items() if k != "examples"},
            }
            for name in names
        }
        args.json.write_text(json.dumps(out, indent=2))
        print(f"  numbers written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
