"""The TOC usefulness proxy of ``bench_coding`` without a stack: seconds instead of minutes.

Run by ``python -m tests.bench.toc_offline``. Each session of the coding corpus is summarized as
one segment by the product's own functions (``summarize_segment``), and the day, week, month
and year nodes are rolled up from them with ``summarize_rollup`` and the calendar of
``agent_memory_summarizer.calendar``, as ``toc.py`` does in the service. The figures are the
ones ``bench_coding`` reads from Postgres (the share of segment and day bullets whose grips
point only at natural-language turns; titles that ``title_noise`` calls noise), so a change to
the summarizer can be judged before the full benchmark runs. The segmenter is not run: in the
full benchmark every session is one segment as well (44 segments, 44 sessions), but a long
pause could split one there and not here.

``--show N`` prints the titles and bullets of N segment and day nodes, ``--node ID`` one node.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from agent_memory_summarizer.calendar import CALENDAR_LEVELS, Bucket, chain, title_prefix
from agent_memory_summarizer.extractive import summarize_rollup, summarize_segment
from agent_memory_summarizer.model import Bullet, ChildDigest, SourceEvent, Summary
from agent_memory_summarizer.toc import grip_id
from tests.bench.coding.generate import load_corpus
from tests.bench.metrics import title_noise

LEVELS = ("year", "month", "week", "day", "segment")


def _ts(value: Any) -> datetime:
    if isinstance(value, int):
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def source_events(session: dict[str, Any]) -> list[SourceEvent]:
    events = [
        SourceEvent(e["event_id"], _ts(e["ts"]), e["role"], e["type"], e.get("text") or "")
        for e in session["events"]
    ]
    return sorted(events, key=lambda e: (e.ts, e.event_id))


class OfflineToc:
    """Every node of the corpus's tree, built in memory."""

    def __init__(self, sessions: Sequence[dict[str, Any]]) -> None:
        self.nodes: dict[str, tuple[str, Summary]] = {}  # node id -> (level, summary)
        self.grips: dict[str, tuple[str, ...]] = {}  # grip id -> event ids
        self.prose: dict[str, bool] = {}
        children: dict[str, list[str]] = defaultdict(list)
        buckets: dict[str, Bucket] = {}
        for session in sessions:
            events = source_events(session)
            for e in events:
                self.prose[e.event_id] = e.role in ("user", "assistant") and e.type == "message"
            node_id = f"segment:{session['session_id']}"
            summary = summarize_segment(events, f"Session {session['session_id']} #0")
            bullets = []
            for bullet in summary.bullets:
                ids = []
                for grip in bullet.grips:
                    gid = grip_id(node_id, grip.event_ids, grip.excerpt)
                    self.grips[gid] = grip.event_ids
                    ids.append(gid)
                bullets.append(
                    Bullet(bullet.text, bullet.kind, bullet.salience, grip_ids=tuple(ids))
                )
            self.nodes[node_id] = (
                "segment",
                Summary(summary.title, bullets, summary.keywords, summary.method),
            )
            child = node_id
            for bucket in chain(events[0].ts):
                parent = bucket.node_id(session["project_id"])
                buckets[parent] = bucket
                if child not in children[parent]:
                    children[parent].append(child)
                child = parent
        self.children = children
        for level in CALENDAR_LEVELS:
            for node_id in sorted(n for n in buckets if n.startswith(level + ":")):
                digests = []
                for child_id in children[node_id]:
                    _, s = self.nodes[child_id]
                    digests.append(ChildDigest(child_id, 1, s.title, s.keywords, s.bullets))
                digests.sort(key=lambda d: self._start(d.node_id))
                self.nodes[node_id] = (
                    level,
                    summarize_rollup(title_prefix(buckets[node_id]), digests),
                )
        self.starts: dict[str, datetime] = {}

    def _start(self, node_id: str) -> str:
        return node_id  # calendar ids sort by time; segments keep the corpus order

    def report(self) -> tuple[dict[str, list[int]], dict[str, list[int]], list[str]]:
        bullets: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        titles: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        noisy: list[str] = []
        for _node_id, (level, summary) in self.nodes.items():
            titles[level][1] += 1
            reason = title_noise(summary.title)
            if reason:
                titles[level][0] += 1
                noisy.append(f"{level:<8} [{reason}] {summary.title}")
            if level not in ("segment", "day"):
                continue
            for bullet in summary.bullets:
                events = [e for g in bullet.grip_ids for e in self.grips.get(g, ())]
                bullets[level][1] += 1
                bullets[level][0] += bool(events) and all(self.prose.get(e, False) for e in events)
        return bullets, titles, noisy

    def show(self, node_id: str) -> str:
        level, summary = self.nodes[node_id]
        lines = [f"[{level}] {node_id}", f"  title: {summary.title}"]
        for b in summary.bullets:
            events = [e for g in b.grip_ids for e in self.grips.get(g, ())]
            prose = bool(events) and all(self.prose.get(e, False) for e in events)
            lines.append(
                f"  - ({b.kind}{'' if prose or level != 'segment' else ', tool'}) {b.text}"
            )
        lines.append(f"  key phrases: {', '.join(summary.keywords)}")
        return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--show", type=int, default=0, help="print N segment and day nodes")
    parser.add_argument("--node", action="append", default=[], help="print this node")
    args = parser.parse_args(argv)
    sessions, _ = load_corpus()
    toc = OfflineToc(sessions)
    bullets, titles, noisy = toc.report()
    for level in LEVELS:
        n_noisy, n = titles.get(level, [0, 0])
        prose, count = bullets.get(level, [0, 0])
        share = f"{prose}/{count} ({prose / count:.1%})" if count else "-"
        print(f"{level:<8} nodes {n:>3}  noisy titles {n_noisy:>2}  bullets from prose {share}")
    prose = sum(bullets[lv][0] for lv in ("segment", "day"))
    count = sum(bullets[lv][1] for lv in ("segment", "day"))
    print(
        f"segment and day bullets from prose: {prose / max(count, 1):.1%}; noisy titles: "
        f"{len(noisy)} of {sum(t[1] for t in titles.values())}"
    )
    for line in noisy:
        print("  noisy", line)
    shown = [n for n in toc.nodes if n.startswith(("segment:", "day:"))][: args.show]
    for node_id in [*shown, *args.node]:
        print(toc.show(node_id))
    return 0


if __name__ == "__main__":
    sys.exit(main())
