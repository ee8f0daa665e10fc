"""Session summaries against LoCoMo's: ROUGE-1/2/L F1 of ours beside lead-3 and TextRank.

Run by ``make bench-summary``. Data: ``shared/bench-data/locomo/locomo10.json`` (CC BY-NC 4.0,
Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024;
non-commercial evaluation only; see that folder's README). Its ``session_summary`` holds one
paragraph per session, written by an LLM: the reference.

1. The stack and the ingestion of ``bench_locomo`` (its helpers, the same protocol: one event per
   turn, ``<sample_id>:<dia_id>`` ids, one session per LoCoMo session, the image caption
   appended), then the wait until every segment is closed and summarized.
   The indexes are not needed: the wait ends once the recorder, segmenter and summarizer have
   caught up (the embedder may still be working; it is stopped with the stack).
2. **Ours**: per session, the TOC segment nodes of that session in time order, the latest
   version of each, read from Postgres: each node's title, then its bullets, joined with spaces.
   The product runs without an LLM, so this is the extractive summarizer.
3. **Baselines**, over the same turns (the event texts as posted, no speaker names: ours never
   sees them in the text either), split into sentences by the summarizer's own splitter:
   ``lead-3`` (the first three sentences), ``textrank-3`` (the three most central sentences by
   TextRank, in their order) and ``textrank-k`` (as many sentences as our summary has bullets,
   so that length does not decide the comparison).

ROUGE F1 per session, averaged over sessions (rouge-score, stemmed). The mean length in words of
each system is printed beside its scores: ROUGE F1 rewards a length near the reference's.

A measurement, not a test: the exit code is 0 whatever the scores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from agent_memory_summarizer.text import split_sentences, tokens
from tests.bench.bench_locomo import DEFAULT_DATA, load_locomo
from tests.bench.metrics import ROUGE_TYPES, lead, rouge, textrank
from tests.bench.report import stop_on_sigterm, table
from tests.bench.stack import SUMMARIZED, Product, ingest, stop_and_clean, wait_until_indexed

SEGMENT_NODES = """
SELECT v.session_id, v.start_ts, v.title, v.bullets
FROM toc_nodes n
JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE n.level = 'segment' AND NOT n.is_empty
ORDER BY v.session_id, v.start_ts, v.node_id
"""


@dataclass(frozen=True)
class Session:
    session_id: str  # as posted: <sample_id>:session_<n>
    reference: str
    turns: tuple[str, ...]


def load_sessions(path: Path, events: Sequence[dict[str, Any]]) -> list[Session]:
    """Every posted session that has a reference summary, with its turns' texts in order."""
    data = json.loads(path.read_text())
    turns: dict[str, list[str]] = defaultdict(list)
    for event in events:
        turns[event["session_id"]].append(event["text"])
    out: list[Session] = []
    for sample in data:
        summaries = sample.get("session_summary") or {}
        for key, summary in summaries.items():
            n = key.removeprefix("session_").removesuffix("_summary")
            sid = f"{sample['sample_id']}:session_{n}"
            if sid in turns and isinstance(summary, str) and summary.strip():
                out.append(Session(sid, summary, tuple(turns[sid])))
    return out


def our_summaries(pg_dsn: str) -> dict[str, tuple[str, int]]:
    """Per session: the text of its segment nodes (titles and bullets) and the bullet count."""
    parts: dict[str, list[str]] = defaultdict(list)
    bullets: dict[str, int] = defaultdict(int)
    with psycopg.connect(pg_dsn) as conn:
        for session_id, _start, title, node_bullets in conn.execute(SEGMENT_NODES):
            parts[session_id].append(title.rstrip(".") + ".")
            for bullet in node_bullets:
                parts[session_id].append(bullet["text"])
                bullets[session_id] += 1
    return {sid: (" ".join(texts), bullets[sid]) for sid, texts in parts.items()}


def sentences_of(turns: Sequence[str]) -> list[str]:
    return [s.text.strip() for t in turns for s in split_sentences(t) if s.text.strip()]


def candidates(session: Session, ours: str, bullet_count: int) -> dict[str, str]:
    sents = sentences_of(session.turns)
    words = [tokens(s) for s in sents]
    return {
        "ours (TOC segments)": ours,
        "lead-3": " ".join(lead(sents, 3)),
        "textrank-3": " ".join(textrank(sents, 3, words)),
        "textrank-k (k = our bullets)": " ".join(textrank(sents, max(bullet_count, 1), words)),
    }


def score(sessions: Sequence[Session], ours: dict[str, tuple[str, int]]) -> list[list[str]]:
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    lengths: dict[str, list[int]] = defaultdict(list)
    for session in sessions:
        text, bullet_count = ours.get(session.session_id, ("", 0))
        for name, candidate in candidates(session, text, bullet_count).items():
            for metric, value in rouge(session.reference, candidate).items():
                sums[name][metric].append(value)
            lengths[name].append(len(candidate.split()))
    ref_words = statistics.fmean(len(s.reference.split()) for s in sessions)
    rows = [["system", "ROUGE-1 F1", "ROUGE-2 F1", "ROUGE-L F1", "words"]]
    for name, metrics in sums.items():
        rows.append(
            [
                name,
                *(f"{statistics.fmean(metrics[m]):.3f}" for m in ROUGE_TYPES),
                f"{statistics.fmean(lengths[name]):.0f}",
            ]
        )
    rows.append(["(reference: LoCoMo session_summary)", "", "", "", f"{ref_words:.0f}"])
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo10.json")
    parser.add_argument("--samples", help="comma-separated sample ids (default: all 10)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    stop_on_sigterm()
    if not args.data.exists():
        print(f"bench-summary: no data at {args.data} (see shared/bench-data/README.md)")
        return 2
    samples = set(args.samples.split(",")) if args.samples else None
    events, _questions = load_locomo(args.data, samples)
    sessions = load_sessions(args.data, events)
    print(
        f"LoCoMo (CC BY-NC 4.0, Maharana et al. 2024): {len(events):,} turns,"
        f" {len(sessions)} sessions with a reference summary"
    )
    workdir = Path(tempfile.mkdtemp(prefix="agent-memory-bench-summary-"))
    product = Product(workdir, {})
    failed = True
    ours: dict[str, tuple[str, int]] = {}
    try:
        t0 = time.monotonic()
        product.start()
        print(f"  stack up in {time.monotonic() - t0:.0f} s ({workdir})")
        post_s = ingest(product, events)
        print(f"  posted {len(events):,} events in {post_s:.1f} s")
        indexed_s = wait_until_indexed(product, len(events), consumers=SUMMARIZED)
        print(f"  drained, segments closed and summarized {indexed_s:.0f} s after the last post")
        ours = our_summaries(product.pg_dsn)
        failed = False
    except KeyboardInterrupt:
        print("interrupted")
    finally:
        stop_and_clean(product, workdir, args.keep or failed)
    if failed:
        return 1
    missing = sum(1 for s in sessions if s.session_id not in ours)
    print(f"\n=== Session summaries vs LoCoMo session_summary ({len(sessions)} sessions) ===")
    if missing:
        print(f"  {missing} sessions without a segment node (scored as empty)")
    print(table(score(sessions, ours), [False, True, True, True, True]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
