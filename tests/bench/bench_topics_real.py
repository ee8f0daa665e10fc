"""``make bench-topics-real``: the topics of real sessions imported long after they happened.

``bench_topics`` scores the clusterer on a generated corpus whose themes are known; this one
looks at what a user importing real Claude Code sessions months later is shown (issue 53,
point 5): per project of the real-session corpus's **dev** split only (the test projects are
scored blind, never read while the clusterer is tuned), the number of topics, the largest
topic's share of the project's segments, each topic's label and size, and the importance
``GET /v1/topics`` gives them when nobody names a time (the events are months old by the wall
clock: the store is as aged as a late import makes it).

1. The dev transcripts, read by their runtime's reader (``bench_real.load_corpus``), posted
   to a stack of ``bench-coding``'s kind, drained, segments closed and summarized.
2. ``python -m agent_memory_topics rebuild``: every project re-clustered by the service's
   code, whatever its size (the service re-clusters a project of fewer than 20 segments only
   once a day).
3. The report; with ``--dump FILE``, the projects' topic material (segment text, vector,
   session, times, salience) as JSON, so that ``--offline FILE`` can re-cluster it with the
   code of the working tree in seconds, without a stack (importance then computed the way
   the query service does, as of each project's latest activity).

A measurement, not a test: the exit code is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg.rows import dict_row

from tests.bench.bench_real import load_corpus
from tests.bench.real.corpus import parts
from tests.bench.stack import (
    Product,
    get_json,
    start_filled,
    stop_and_clean,
)

HALF_LIFE_DAYS = 30.0


def dev_projects() -> list[str]:
    return sorted({p for part in parts() if part.split == "dev" for p, _ in part.sources})


def material(pg_dsn: str, projects: Sequence[str]) -> list[dict[str, Any]]:
    """The topic material of ``projects``: what the clusterer reads, plus times and salience."""
    with psycopg.connect(pg_dsn) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            """SELECT tenant, project_id, node_id, session_id, title, text, embedding,
                      salience, start_ts, end_ts
               FROM topic_segments WHERE project_id = ANY(%(p)s) ORDER BY node_id""",
            {"p": list(projects)},
        )
        rows = cur.fetchall()
    for r in rows:
        r["embedding"] = [float(v) for v in r["embedding"]]
        r["start_ts"] = r["start_ts"].isoformat()
        r["end_ts"] = r["end_ts"].isoformat()
    return rows


def stored_topics(pg_dsn: str, query_url: str, projects: Sequence[str]) -> dict[str, Any]:
    """Per project: its segments, and its topics as ``GET /v1/topics`` lists them."""
    out: dict[str, Any] = {}
    with psycopg.connect(pg_dsn) as conn:
        sizes: dict[str, int] = dict(
            conn.execute(
                "SELECT project_id, count(*) FROM topic_segments WHERE project_id = ANY(%s)"
                " GROUP BY project_id",
                [list(projects)],
            ).fetchall()
        )
    with httpx.Client(base_url=query_url, timeout=60) as client:
        for p in projects:
            listed = get_json(client, "/v1/topics", project_id=p, limit=500)["topics"]
            out[p] = {
                "segments": int(sizes.get(p, 0)),
                "topics": [
                    {"label": t["label"], "size": t["size"], "importance": t["importance"]}
                    for t in listed
                ],
            }
    return out


def offline(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Re-cluster dumped material with this tree's ``plan``; importance as the query service
    computes it, as of the project's latest activity."""
    from agent_memory_topics.recluster import plan
    from agent_memory_topics.settings import TopicsOptions

    out: dict[str, Any] = {}
    for p in sorted({r["project_id"] for r in rows}):
        mine = [r for r in rows if r["project_id"] == p]
        result = plan(mine[0]["tenant"], p, mine, {}, TopicsOptions())
        by_node = {r["node_id"]: r for r in mine}
        latest = max(datetime.fromisoformat(r["end_ts"]) for r in mine)
        members: dict[str, list[dict[str, Any]]] = {}
        for m in result.members:
            members.setdefault(m["topic_id"], []).append(by_node[m["node_id"]])
        topics = []
        for t in result.topics:
            got = members.get(t["topic_id"], [])
            importance = sum(
                r["salience"]
                * 0.5
                ** (
                    max((latest - datetime.fromisoformat(r["end_ts"])).total_seconds(), 0)
                    / (HALF_LIFE_DAYS * 86400)
                )
                for r in got
            )
            topics.append(
                {"label": t["label"], "size": len(got), "importance": round(importance, 4)}
            )
        topics.sort(key=lambda t: -t["importance"])
        out[p] = {"segments": len(mine), "topics": topics}
    return out


def report(found: dict[str, Any]) -> None:
    print("\n## Topics per dev project\n")
    print("  project          segments  topics  unassigned  largest share  importance range")
    for p, d in found.items():
        sizes = [t["size"] for t in d["topics"]]
        imp = [t["importance"] for t in d["topics"]]
        largest = max(sizes, default=0) / max(d["segments"], 1)
        spread = f"{min(imp):.2f} - {max(imp):.2f}" if imp else "-"
        print(
            f"  {p:<16} {d['segments']:>8}  {len(sizes):>6}  {d['segments'] - sum(sizes):>10}"
            f"  {largest:>13.0%}  {spread}"
        )
    for p, d in found.items():
        print(f"\n  {p}:")
        for t in sorted(d["topics"], key=lambda t: -t["size"]):
            print(f"    {t['size']:>4}  {t['importance']:>6.2f}  {t['label']}")
    every = [t["size"] for d in found.values() for t in d["topics"]]
    total = sum(d["segments"] for d in found.values())
    largest = max(
        (max((t["size"] for t in d["topics"]), default=0) / max(d["segments"], 1))
        for d in found.values()
    )
    print(
        f"\n  largest topic of any project: {largest:.0%}; {len(every)} topics over {total}"
        " segments"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--dump", type=Path, help="write the dev projects' topic material here")
    parser.add_argument("--offline", type=Path, help="re-cluster material --dump wrote; no stack")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    if args.offline is not None:
        report(offline(json.loads(args.offline.read_text())))
        return 0
    projects = dev_projects()
    events = load_corpus([p for p in parts() if p.split == "dev"])
    print(f"dev: {len(events)} events of {len(projects)} projects ({', '.join(projects)})")
    workdir = Path(tempfile.mkdtemp(prefix="agent-memory-bench-topics-real-"))
    product = Product(workdir, {})
    failed = True
    try:
        start_filled(product, events, False)
        product.run_module("agent_memory_topics", "rebuild", what="rebuild-topics")
        if args.dump is not None:
            rows = material(product.pg_dsn, projects)
            args.dump.write_text(json.dumps(rows))
            print(f"  {len(rows)} segments of material written to {args.dump}")
        report(stored_topics(product.pg_dsn, product.query_url, projects))
        failed = False
    finally:
        stop_and_clean(product, workdir, args.keep or failed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
