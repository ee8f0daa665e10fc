"""LoCoMo retrieval benchmark through the real pipeline: recall@1/5/10 by turn and by session.

Run by ``make bench-locomo``. Data: ``../shared/bench-data/locomo/locomo10.json`` (CC BY-NC 4.0,
Maharana et al., ACL 2024; see that folder's README). Protocol (issue 4):

1. ``agent-memory up`` in a temporary home on free ports: every service of the product, the
   real gateway, recorder, segmenter, summarizer, indexers and query service, no LLM.
2. One event per turn through ``POST /v1/events``: ``event_id`` = ``<sample_id>:<dia_id>``,
   ``project_id`` = the sample id, ``session_id`` = ``<sample_id>:session_<n>``, ``ts`` = the
   session's date and time plus the turn's index in seconds, ``role`` user, the speaker in
   ``metadata``; an image turn's BLIP caption is appended to its text.
3. Wait for ``/v1/status`` drained. A LoCoMo session is a finished conversation, so the
   segmenter's idle flush is shortened (``AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S``) and the wait
   also covers the last segments of every session being closed, summarized and indexed
   (no open segment left, then drained again).
4. Every question of categories 1-4 with usable evidence (1,536), with its ``project_id``,
   for the full system and for ``tiers=["bm25"]`` and ``tiers=["vector"]``, ``limit`` 30:
   the first ten results are those of ``limit`` 10 (turn recall@10 0.737 asked with 10,
   0.738 with 30: a long answer only asks the vector tier deeper), and the rest, spread
   across sessions (docs/search.md), lets session recall@10 count ten distinct sessions.

Metric: each answer's ``event_ids`` flattened in rank order, repeats dropped. Turn recall@k =
share of the question's evidence turns among the first k ids. Session recall@k = share of the
evidence's sessions among the first k distinct sessions of that list. Evidence ids are
normalised as ``bench/locomo_baselines.py`` did for the derived files (split on ``;`` and
spaces, ``D:`` -> ``D``, leading zeros dropped, repeats and ids absent from the conversation
removed); the baselines in ``derived/locomo10_baseline_top10.jsonl`` (raw turns, no service)
are printed beside ours with the same turn metric.

The full system runs first: returned items are counted for the usage penalty, so a later
configuration sees the counts left by the earlier ones (as a live system would).

A measurement, not a test: a missed target prints MISS and the exit code stays 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from tests.bench.aged import add_aged_options, age, describe
from tests.bench.report import interpolated as pct
from tests.bench.report import stop_on_sigterm
from tests.bench.stack import (
    add_question_options,
    question_stack,
    shared_data,
    start_filled,
    stop_and_clean,
)

DEFAULT_DATA = shared_data("locomo/locomo10.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TARGET_SESSION_R10 = 0.95
TARGET_TURN_R10 = 0.70
KS = (1, 5, 10)
CONFIGS: dict[str, list[str] | None] = {"full": None, "bm25": ["bm25"], "vector": ["vector"]}

# --------------------------------------------------------------------------------------------
# The data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    sample_id: str
    index: int
    category: int
    question: str
    evidence: tuple[str, ...]  # dia ids, normalised


def normalise_evidence(raw: Sequence[str], known: set[str]) -> tuple[str, ...]:
    out: list[str] = []
    for item in raw:
        for part in re.split(r"[;\s]+", item):
            part = part.strip().replace("D:", "D")
            m = re.fullmatch(r"D(\d+):(\d+)", part)
            if not m:
                continue
            dia = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia in known and dia not in out:
                out.append(dia)
    return tuple(out)


def session_of(dia_id: str) -> str:
    return dia_id.split(":")[0]


def load_locomo(
    path: Path, samples: set[str] | None
) -> tuple[list[dict[str, Any]], list[Question]]:
    data = json.loads(path.read_text())
    events: list[dict[str, Any]] = []
    questions: list[Question] = []
    for sample in data:
        sid = sample["sample_id"]
        if samples and sid not in samples:
            continue
        conv = sample["conversation"]
        known: set[str] = set()
        n = 1
        while f"session_{n}" in conv:
            start = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
            for i, turn in enumerate(conv[f"session_{n}"]):
                text = turn["text"]
                if turn.get("blip_caption"):
                    text = f"{text} [image: {turn['blip_caption']}]"
                known.add(turn["dia_id"])
                events.append(
                    {
                        "event_id": f"{sid}:{turn['dia_id']}",
                        "ts": (start + timedelta(seconds=i)).isoformat() + "Z",
                        "project_id": sid,
                        "agent_id": "locomo",
                        "session_id": f"{sid}:session_{n}",
                        "role": "user",
                        "type": "message",
                        "text": text,
                        "metadata": {"speaker": turn["speaker"]},
                    }
                )
            n += 1
        for index, qa in enumerate(sample["qa"]):
            if qa["category"] not in CATEGORIES:
                continue
            evidence = normalise_evidence(qa.get("evidence") or [], known)
            if evidence:
                questions.append(Question(sid, index, qa["category"], qa["question"], evidence))
    return events, questions


def reference_baselines(path: Path, questions: Sequence[Question]) -> dict[str, float]:
    """Turn R@10 of the raw-turn baselines in the derived file, on the same questions."""
    derived = path.parent / "derived" / "locomo10_baseline_top10.jsonl"
    if not derived.exists():
        return {}
    wanted = {(q.sample_id, q.index): q for q in questions}
    sums: dict[str, float] = defaultdict(float)
    count = 0
    for line in derived.read_text().splitlines():
        row = json.loads(line)
        q = wanted.get((row["conv_id"], row["qa_index"]))
        if q is None:
            continue
        count += 1
        for name, top in row["top10"].items():
            sums[name] += len(set(q.evidence) & set(top[:10])) / len(q.evidence)
    return {name: total / count for name, total in sums.items()} if count else {}


# --------------------------------------------------------------------------------------------
# Asking and scoring
# --------------------------------------------------------------------------------------------


@dataclass
class Scores:
    turn: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    session: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_category: dict[int, Scores] = field(default_factory=dict)
    latency_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    empty: int = 0

    def add(self, q: Question, ranked: Sequence[str]) -> None:
        sessions = list(dict.fromkeys(session_of(d) for d in ranked))
        ev_sessions = {session_of(d) for d in q.evidence}
        for k in KS:
            self.turn[k].append(len(set(q.evidence) & set(ranked[:k])) / len(q.evidence))
            self.session[k].append(len(ev_sessions & set(sessions[:k])) / len(ev_sessions))


def flatten(answer: dict[str, Any], sample_id: str) -> list[str]:
    """Every result's event ids in rank order, repeats dropped, as this sample's dia ids."""
    prefix = f"{sample_id}:"
    out: dict[str, None] = {}
    for result in answer["results"]:
        for event_id in result["event_ids"]:
            if event_id.startswith(prefix):
                out.setdefault(event_id[len(prefix) :], None)
    return list(out)


async def ask_all(
    url: str, questions: Sequence[Question], tiers: list[str] | None, limit: int
) -> Scores:
    scores = Scores()
    async with httpx.AsyncClient(timeout=60) as client:
        for q in questions:
            body: dict[str, Any] = {"query": q.question, "project_id": q.sample_id, "limit": limit}
            if tiers:
                body["tiers"] = tiers
            t0 = time.perf_counter()
            r = await client.post(f"{url}/v1/search", json=body)
            wall = (time.perf_counter() - t0) * 1000
            if r.status_code != 200:
                raise RuntimeError(f"search failed for {q.question!r}: {r.status_code} {r.text}")
            answer = r.json()
            ranked = flatten(answer, q.sample_id)
            scores.empty += not ranked
            scores.latency_ms.append(wall)
            scores.server_ms.append(float(answer["explain"]["timings_ms"].get("total", 0.0)))
            scores.add(q, ranked)
            scores.by_category.setdefault(q.category, Scores()).add(q, ranked)
    return scores


def _row(label: str, s: Scores, n: int) -> str:
    turn = "  ".join(f"{statistics.fmean(s.turn[k]):.3f}" for k in KS)
    sess = "  ".join(f"{statistics.fmean(s.session[k]):.3f}" for k in KS)
    return f"  {label:<22} {n:>5}   {turn}    {sess}"


def report(name: str, s: Scores, questions: Sequence[Question]) -> list[str]:
    lines = [
        f"{name}: latency p50 {pct(s.latency_ms, 50):.1f} ms, p95 {pct(s.latency_ms, 95):.1f} ms"
        f" (server p50 {pct(s.server_ms, 50):.1f} ms); {s.empty} answers without evidence ids",
        f"  {'':<22} {'n':>5}   turn R@1  R@5  R@10  session R@1  R@5  R@10",
        _row("overall", s, len(questions)),
    ]
    counts: defaultdict[int, int] = defaultdict(int)
    for q in questions:
        counts[q.category] += 1
    for cat in sorted(s.by_category):
        lines.append(_row(f"{cat} {CATEGORIES[cat]}", s.by_category[cat], counts[cat]))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo10.json")
    parser.add_argument("--samples", help="comma-separated sample ids (default: all 10)")
    parser.add_argument("--configs", default="full,bm25,vector", help="full, bm25, vector")
    add_question_options(parser, limit=30)
    add_aged_options(parser)
    args = parser.parse_args(argv)
    stop_on_sigterm()
    if not args.data.exists():
        print(f"bench-locomo: no data at {args.data} (see ../shared/bench-data/README.md)")
        return 2
    samples = set(args.samples.split(",")) if args.samples else None
    events, questions = load_locomo(args.data, samples)
    print(
        f"LoCoMo: {len({e['project_id'] for e in events})} conversations, {len(events):,} turns,"
        f" {len(questions):,} questions (categories 1-4 with evidence)"
    )
    product, workdir, reuse = question_stack(args, "agent-memory-bench-locomo-")
    failed = True
    lines: list[str] = []
    results: dict[str, Scores] = {}
    aged_line = ""
    try:
        start_filled(product, events, reuse)
        names = [] if args.aged_only else args.configs.split(",")
        names += [] if args.no_aged else ["aged"]
        for name in names:
            t0 = time.monotonic()
            if name == "aged":  # the same store a year on, the default matrix (issue 53, 7)
                aged_line = describe(age(product, args.aged_days))
                print(f"  {aged_line}", flush=True)
            tiers = CONFIGS["full" if name == "aged" else name]
            scores = asyncio.run(ask_all(product.query_url, questions, tiers, args.limit))
            results[name] = scores
            block = report(name, scores, questions)
            print("\n".join(block) + f"\n  ({time.monotonic() - t0:.0f} s)", flush=True)
            lines.extend(block)
        failed = False
    except KeyboardInterrupt:
        print("interrupted")
    finally:
        stop_and_clean(product, workdir, args.keep or failed or reuse)
    if failed:
        return 1
    print("\n=== LoCoMo retrieval (no LLM) ===")
    print("\n".join(lines))
    full = results.get("full")
    if full is not None:
        s10 = statistics.fmean(full.session[10])
        t10 = statistics.fmean(full.turn[10])
        ok = s10 >= TARGET_SESSION_R10 and t10 >= TARGET_TURN_R10
        print(
            f"\ntarget (full system): session R@10 >= {TARGET_SESSION_R10} and turn R@10 >= "
            f"{TARGET_TURN_R10}: {'PASS' if ok else 'MISS'} (session {s10:.3f}, turn {t10:.3f})"
        )
    if "aged" in results:
        print(f"\n  {aged_line}")
        print("\n=== Fully indexed and aged (issue 53, point 7) ===")
        print("  run              turn R@10  session R@10  p50 ms  p95 ms")
        for name, label in (("full", "fully indexed"), ("aged", "aged")):
            if name in results:
                sc = results[name]
                print(
                    f"  {label:<14}   {statistics.fmean(sc.turn[10]):>9.3f}"
                    f"  {statistics.fmean(sc.session[10]):>12.3f}"
                    f"  {pct(sc.latency_ms, 50):>6.0f}  {pct(sc.latency_ms, 95):>6.0f}"
                )
    refs = reference_baselines(args.data, questions)
    if refs:
        print("reference, raw turns without the service (derived file), turn R@10:")
        for ref_name, value in refs.items():
            print(f"  {ref_name:<45} {value:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
