"""Real-session benchmark: what the memory gives back from coding sessions people really had.

Run by ``make bench-real``. ``make bench-coding`` measures our own generated sessions, written
to hold every kind of moment; this one measures public Claude Code sessions as they were
(``tests/bench/real/``, their licenses and attribution in ``SOURCES.md``): cctrace (a user and
Claude building a session exporter over two days: typos, interrupted tool calls, a plan mode,
web searches, replies that restate command output), two sessions of sungather-k8s-operator
(a mock inverter for integration tests, then a rock built and pushed in CI through four
failures) and one of BookMinder (a CLI over the Apple Books database: a design review, a TDD
rename of ``--flag`` to ``--filter``, a fixture committed by ``git add -A`` and taken back,
conventions written into CLAUDE.md). They are few and their questions were written by one
engineer reading them, so the figures move in steps of 1/60; read them with the generated
benchmark, not instead of it.

1. The transcripts (cctrace's written back from its published export by
   ``tests.bench.real.convert``, BookMinder's from its published console log by
   ``tests.bench.real.console``) are read by ``agent-memory import claude-code``'s own reader
   (``agent_memory_cli.readers.claude_code.events``): the events a user importing them would store.
2. The stack of ``bench-coding`` (``tests/bench/stack.py``), every event posted, drained,
   segments closed, summarized and indexed.
3. ``tests/bench/real/questions.py``: each question through ``POST /v1/search`` (``limit``
   10, its project, its ``now``); found@1/5/10 by kind as in ``bench-coding``, people's words
   among the events returned, ``no_match`` on questions the sessions cannot answer (each asked
   in the project it was written for).
4. What the coding agent's runtime wrote (compaction prompts, command wrappers, reminders),
   told from the raw transcripts' own structure (``tests/bench/runtime_written.py``): how many
   bullets and titles of every TOC level come from it (issue 52, point 3: none should).
5. The table of contents, printed whole (titles and bullets, each bullet marked by what its
   grips point at: ``said`` for prompts and replies only, ``tool`` otherwise), with the noisy
   title and prose-bullet shares of ``bench-coding`` and the segment titles that only list key
   phrases: on a real session a title or a bullet is read, not only counted.

A measurement, not a test: the exit code is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from agent_memory_hooks.events import event_id
from tests.bench.aged import (
    AGED,
    AGED_OFF,
    add_aged_options,
    age,
    describe,
    p95,
    run_labels,
    without_descent,
)
from tests.bench.bench_coding import (
    Answers,
    TocReport,
    ask,
    ask_negatives,
    event_time,
    found_table,
    measure_toc,
    quantiles,
    read_toc,
    share,
    toc_table,
)
from tests.bench.coding.generate import is_prose
from tests.bench.metrics import title_noise
from tests.bench.real.corpus import FIRST_SOURCES, SPLITS, Part, parts, read_part
from tests.bench.real.questions import QUESTIONS, RealQ
from tests.bench.report import stop_on_sigterm
from tests.bench.runtime_written import BoilerplateReport, measure, written
from tests.bench.stack import (
    add_question_options,
    question_stack,
    start_filled,
    stop_and_clean,
)

HERE = Path(__file__).resolve().parent / "real"
# (project id, transcript): the project is the one the questions are asked in.
SOURCES = FIRST_SOURCES
HELDOUT_SOURCES = (
    ("sungather", HERE / "transcripts" / "heldout" / "sungather-51bf92be.jsonl"),
    (
        "mcp-server-operator",
        HERE / "transcripts" / "heldout" / "mcp-server-operator-21893a05.jsonl",
    ),
    (
        "charming-with-claude",
        HERE / "transcripts" / "heldout" / "charming-with-claude-0a0eb7b7.jsonl",
    ),
    (
        "charming-with-claude",
        HERE / "transcripts" / "heldout" / "charming-with-claude-58b4f056.jsonl",
    ),
    ("concierge-py", HERE / "transcripts" / "heldout" / "concierge-py-daadb6cf.jsonl"),
    ("concierge-py", HERE / "transcripts" / "heldout" / "concierge-py-5956086a.jsonl"),
    ("concierge-py", HERE / "transcripts" / "heldout" / "concierge-py-1bad730b.jsonl"),
    ("entire-cli", HERE / "transcripts" / "heldout" / "entire-cli-6113e919.jsonl"),
    ("entire-cli", HERE / "transcripts" / "heldout" / "entire-cli-79e9becd.jsonl"),
    ("oh-my-posh", HERE / "transcripts" / "heldout" / "oh-my-posh-94fab1a1.jsonl"),
    ("oh-my-posh", HERE / "transcripts" / "heldout" / "oh-my-posh-d1ffb512.jsonl"),
    ("oh-my-posh", HERE / "transcripts" / "heldout" / "oh-my-posh-634355e9.jsonl"),
)
KINDS: tuple[str, ...] = ("fact", "decision", "preference", "constraint", "how", "fix")
KINDS += ("paraphrase", "artifact", "temporal", "resume")


def load_events(sources: Sequence[tuple[str, Path]] = SOURCES) -> list[dict[str, Any]]:
    """Every source's events, as ``agent-memory import claude-code`` reads them, each once."""
    return unique_in_time_order(
        read_part(Part("sources", "dev", "claude-code", tuple(sources), (), ()))
    )


def load_corpus(chosen: Sequence[Part]) -> list[dict[str, Any]]:
    """The events of every part's transcripts, each read by its runtime's reader, each once."""
    return unique_in_time_order([e for part in chosen for e in read_part(part)])


def unique_in_time_order(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events in time order, each id once."""
    # a line a transcript holds twice is one event (same id): the gateway would store it once,
    # and the wait until indexed counts what is stored
    unique = {e["event_id"]: e for e in reversed(events)}
    return sorted(unique.values(), key=event_time)


def ref_names(event: dict[str, Any]) -> set[str]:
    """The refs a question may point at ``event`` with, whatever runtime wrote it: a prompt's or
    a reply's own id (Claude Code's line ``uuid``, Gemini CLI's and OpenCode's message id,
    Codex's ``<session id>:line:N``: a rollout line alone is not unique across sessions), a
    tool call's and its result's call id (Claude Code's ``toolu_``, OpenCode's ``callID``;
    Codex's and Gemini CLI's, which their readers keep only in the event id, see
    ``_tool_ref_ids``)."""
    meta = event["metadata"]
    if is_prose(event):
        names = {str(meta[k]) for k in ("transcript_uuid", "message_id") if meta.get(k)}
        if "line" in meta:
            names.add(f"{event['session_id']}:line:{meta['line']}")
        return names
    return {str(meta[k]) for k in ("tool_use_id", "call_id") if meta.get(k)}


def _tool_ref_ids(event: dict[str, Any], ref: str) -> set[str]:
    """The ids a Codex or Gemini CLI tool call ``ref`` gives its call and result events (their
    readers key them ``("call", id)`` and ``("tool", id)``)."""
    runtime = str(event["metadata"].get("runtime", ""))
    key = {"codex": "call", "gemini-cli": "tool"}.get(runtime)
    if key is None:
        return set()
    return {event_id(runtime, event["session_id"], key, ref, part) for part in ("call", "result")}


def _iso(ts: str | int) -> str:
    """An event's time as RFC 3339 text (OpenCode's are epoch milliseconds)."""
    if isinstance(ts, int):
        return datetime.fromtimestamp(ts / 1000, tz=UTC).isoformat().replace("+00:00", "Z")
    return str(ts)


def gold_of(q: RealQ, events: Sequence[dict[str, Any]]) -> list[str]:
    """The event ids a question's ``refs``, ``day`` or ``since`` point at (module
    ``questions``; a ref is one of ``ref_names``); a ref that points at nothing is an error,
    not a silent miss."""
    ids: list[str] = []
    for ref in q.refs:
        found = [
            e["event_id"]
            for e in events
            if ref in ref_names(e) or (not is_prose(e) and e["event_id"] in _tool_ref_ids(e, ref))
        ]
        if not found:
            raise ValueError(f"{q.question!r}: {ref} is no event of the corpus")
        ids.extend(found)
    for e in events:
        if not is_prose(e) or e["project_id"] != q.project:
            continue
        when = _iso(e["ts"])
        if (q.day and when.startswith(q.day)) or (q.since and when >= q.since):
            ids.append(e["event_id"])
    if not ids:
        raise ValueError(f"{q.question!r} has no gold event")
    return ids


def questions_of(
    events: Sequence[dict[str, Any]], asked: Sequence[RealQ] = QUESTIONS, prefix: str = "r"
) -> list[dict[str, Any]]:
    """The questions in the shape ``bench_coding.ask`` takes."""
    return [
        {
            "id": f"{prefix}{i:02d}",
            "kind": q.kind,
            "question": q.question,
            "project_id": q.project,
            "now": q.now,
            "event_ids": gold_of(q, events),
            "stale_event_ids": [],
        }
        for i, q in enumerate(asked, 1)
    ]


def print_toc(pg_dsn: str, projects: Collection[str]) -> None:
    """Every day and segment node of ``projects``: its title, then each bullet with what its
    grips are. The dev projects' only: the test projects' TOC is read when an issue is
    resolved, not while rules are written."""
    nodes, grips, said = read_toc(pg_dsn)
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute("SELECT node_id, project_id FROM toc_nodes").fetchall()
    project_of: dict[str, str] = {str(n): str(p) for n, p in rows}
    for level, node_id, title, bullets in nodes:
        if level not in ("day", "segment") or project_of.get(node_id, "") not in projects:
            continue
        noise = title_noise(title)
        print(f"  [{level}] {title}" + (f"   <- noisy: {noise}" if noise else ""))
        for bullet in bullets:
            events = [e for g in bullet.get("grip_ids", []) for e in grips.get(g, [])]
            mark = "said" if events and all(said.get(e, False) for e in events) else "tool"
            text = str(bullet.get("text", "")).replace("\n", " ")
            print(f"      {mark} {bullet.get('kind', '-'):<11} {text[:150]}")


def report(answers: Answers, negatives_caught: int, negatives_asked: int) -> None:
    print("\n=== Retrieval: found@k (any gold event among the first k event ids) ===")
    print(found_table(answers, KINDS))
    print(f"  search p50 {statistics.median(answers.latency_ms):.0f} ms")
    print(f"  {answers.spoken.line()}")
    print(
        f"  no_match: {answers.no_match} of {answers.overall.n} answerable questions (false"
        f" alarms), {negatives_caught} of {negatives_asked} unanswerable ones"
    )
    print(f"  best cosine, answerable: {quantiles(answers.match_scores)}")
    if answers.detail:
        print("  missed questions, first results (GOLD: holds a gold event; ranks; factors):")
        print("\n".join(answers.detail))


@dataclass
class Split:
    """One side of the corpus: its questions (``bench_coding.ask``'s shape) and the questions
    its sessions cannot answer, with the project each is asked in."""

    name: str
    questions: list[dict[str, Any]]
    unanswerable: list[tuple[str, str]]


def splits_of(chosen: Sequence[Part], events: Sequence[dict[str, Any]]) -> list[Split]:
    out = []
    for name in SPLITS:
        mine = [p for p in chosen if p.split == name]
        if mine:
            asked = [q for p in mine for q in p.questions]
            out.append(
                Split(
                    name,
                    questions_of(events, asked, prefix=name[0]),
                    [u for p in mine for u in p.unanswerable],
                )
            )
    return out


def side_by_side(runs: Sequence[tuple[str, str, Answers, int, int]]) -> str:
    """One row per run and split: found@1/5/10, latency, unanswerable questions caught."""
    out = [
        "  run               split   n  found@1  found@5  found@10  p50 ms  p95 ms  no_match"
        " (false / caught)"
    ]
    for label, split, answers, caught, asked in runs:
        lat = answers.latency_ms
        out.append(
            f"  {label:<17} {split:<5} {answers.overall.n:>3}"
            + "".join(f"  {answers.overall.rate(k):>7.3f}" for k in (1, 5))
            + f"  {answers.overall.rate(10):>8.3f}"
            + f"  {statistics.median(lat) if lat else float('nan'):>6.0f}  {p95(lat):>6.0f}"
            + f"  {answers.no_match} / {caught} of {asked}"
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    add_question_options(parser, limit=10)
    add_aged_options(parser)
    parser.add_argument(
        "--split",
        choices=(*SPLITS, "both"),
        default="both",
        help="which side of the corpus to store and ask (default both, printed side by side)",
    )
    args = parser.parse_args(argv)
    stop_on_sigterm()
    chosen = [p for p in parts() if args.split in ("both", p.split)]
    events = load_corpus(chosen)
    splits = splits_of(chosen, events)
    for split in splits:
        projects = sorted({q["project_id"] for q in split.questions})
        transcripts = sum(len(p.sources) for p in chosen if p.split == split.name)
        print(
            f"{split.name}: {transcripts} transcript(s) of {len(projects)} project(s)"
            f" ({', '.join(projects)}), {len(split.questions)} questions,"
            f" {len(split.unanswerable)} unanswerable"
        )
    print(
        f"real sessions: {len(events)} events ({sum(is_prose(e) for e in events)} prompts and"
        " replies), every split in one store"
    )
    dev_projects = {p for part in chosen if part.split == "dev" for p, _ in part.sources}
    product, workdir, reuse = question_stack(args, "agent-memory-bench-real-")
    failed = True
    runs: list[tuple[str, str, Answers, int, int]] = []  # (run, split, answers, caught, asked)
    aged_line = ""
    toc: TocReport | None = None
    boilerplate: BoilerplateReport | None = None
    try:
        start_filled(product, events, reuse)
        said = {e["event_id"]: is_prose(e) for e in events}
        labels = run_labels(args)
        for label in labels:
            if label == AGED:
                aged_line = describe(age(product, args.aged_days))
                print(f"  {aged_line}", flush=True)
            with contextlib.ExitStack() as on:
                url = product.query_url
                if label == AGED_OFF:
                    url = on.enter_context(without_descent(product))
                for split in splits:
                    answers = ask(url, split.questions, args.limit, said)
                    negatives = [
                        ask_negatives(
                            url, [q for p, q in split.unanswerable if p == project], [project]
                        )
                        for project in sorted({p for p, _ in split.unanswerable})
                    ]
                    caught = sum(n.no_match for n in negatives)
                    runs.append((label, split.name, answers, caught, len(split.unanswerable)))
            if label == labels[0]:
                toc = measure_toc(product.pg_dsn)
                boilerplate = measure(
                    product.pg_dsn,
                    written((p.runtime, proj, path) for p in chosen for proj, path in p.sources),
                    dev_projects,
                )
                print("\n=== Table of contents (day and segment nodes of the dev projects) ===")
                print_toc(product.pg_dsn, dev_projects)
        failed = False
    except KeyboardInterrupt:
        print("interrupted")
    finally:
        stop_and_clean(product, workdir, args.keep or failed or reuse)
    if failed or toc is None:
        return 1
    print(toc_table(toc))
    prose, bullets = share(toc.bullets, ("segment", "day"))
    noisy, nodes = share(toc.titles, ("year", "month", "week", "day", "segment"))
    print(
        f"  segment and day bullets from prose turns only: {prose} of {bullets}"
        f" ({prose / max(bullets, 1):.1%}); noisy titles: {noisy} of {nodes}; segment titles"
        f" that list key phrases: {toc.listed[0]} of {toc.listed[1]}"
    )
    if boilerplate is not None:
        print(
            "\n=== Runtime boilerplate in the TOC (issue 52 point 3; read from the transcripts'"
            " own structure, tests/bench/runtime_written.py) ==="
        )
        print(boilerplate.table())
    for label, split_name, answers, caught, asked in runs:
        print(f"\n##### {label}, {split_name} #####")
        report(answers, caught, asked)
    if aged_line:
        print(f"\n  {aged_line}")
        for label, split_name, answers, _, _ in runs:
            print(f"  {label}, {split_name}: {answers.descent_line()}")
    print("\n=== dev and test, fully indexed and aged (issue 52 point 1, issue 53 point 7) ===")
    print(side_by_side(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
