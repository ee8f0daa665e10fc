"""``make bench-topics``: how good and how fast the topic clusterer is.

1. Quality on a labelled coding corpus (``topics_corpus``: 8 themes x 6 sessions x 3
   segments, with the noise of real sessions) and, as a sanity check, on LoCoMo (one document
   per session from its ``event_summary``; the "theme" is the conversation): adjusted Rand index
   and NMI of each session's topic (the majority topic of its segments) against its theme, and
   label quality (share of topics whose label has a word of their majority theme's name).
   Embedded with the service's model (all-MiniLM-L6-v2), clustered by the service's code
   (``agent_memory_topics.recluster.plan``, default settings).
2. A full re-cluster of 1,000, 10,000 and 100,000 segments (synthetic unit vectors around
   n/40 centres, 384 dimensions, short texts): wall time and the child process's peak RSS.
3. Incremental assignment of a new segment: embed its text + nearest centroid of 2,500
   topics, p50/p95 over 100 segments.

Targets (issue 14): ARI >= 0.6 on the coding corpus, 100k re-cluster < 60 s, assignment < 50 ms.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import resource
import sys
import time
from collections import Counter
from typing import Any

import numpy as np
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from agent_memory_retrieval.adapters.factory import load_embedder
from agent_memory_retrieval.settings import RetrievalSettings
from agent_memory_topics.clustering import nearest, unit
from agent_memory_topics.recluster import plan
from agent_memory_topics.settings import TopicsOptions
from tests.bench.report import percentile, table
from tests.bench.stack import shared_data
from tests.bench.topics_corpus import corpus

LOCOMO = shared_data("locomo/locomo10.json")


def quality(
    docs: list[dict[str, Any]], theme_of_session: dict[str, str], names: dict[str, str] | None
) -> dict[str, Any]:
    """Cluster ``docs`` (node_id, session_id, text, embedding) as the service does; score."""
    result = plan("bench", "p", docs, {}, TopicsOptions())
    topic_of_node = {m["node_id"]: m["topic_id"] for m in result.members}
    by_session: dict[str, Counter[str]] = {}
    for d in docs:
        by_session.setdefault(d["session_id"], Counter())[
            topic_of_node.get(d["node_id"], f"none:{d['node_id']}")
        ] += 1
    sessions = sorted(by_session)
    predicted = [by_session[s].most_common(1)[0][0] for s in sessions]
    truth = [theme_of_session[s] for s in sessions]
    out: dict[str, Any] = {
        "segments": len(docs),
        "sessions": len(sessions),
        "themes": len(set(truth)),
        "topics": len(result.topics),
        "unassigned": len(docs) - len(result.members),
        "ari": round(adjusted_rand_score(truth, predicted), 3),
        "nmi": round(normalized_mutual_info_score(truth, predicted), 3),
    }
    if names is not None:
        members: dict[str, list[str]] = {}
        for d in docs:
            if d["node_id"] in topic_of_node:
                members.setdefault(topic_of_node[d["node_id"]], []).append(names[d["session_id"]])
        good = 0
        labels = []
        for t in result.topics:
            theme = Counter(members[t["topic_id"]]).most_common(1)[0][0]
            words = set(theme.split())
            hit = any(w in t["label"].lower() for w in words)
            good += hit
            labels.append(f"{t['label']}  <- {theme}")
        out["label_quality"] = round(good / max(len(result.topics), 1), 3)
        out["labels"] = labels
    return out


def coding(embedder: Any) -> dict[str, Any]:
    segs = corpus()
    vectors = embedder.embed([s.text for s in segs])
    docs = [
        {"node_id": s.node_id, "session_id": s.session_id, "text": s.text, "embedding": v}
        for s, v in zip(segs, vectors, strict=True)
    ]
    themes = {s.session_id: s.theme for s in segs}
    return quality(docs, themes, themes)


def locomo(embedder: Any) -> dict[str, Any] | None:
    path = LOCOMO
    if not path.exists():
        return None
    docs, themes = [], {}
    for sample in json.loads(path.read_text()):
        for key, value in sorted(sample.get("event_summary", {}).items()):
            events = [e for speaker, es in value.items() if speaker != "date" for e in es]
            if not events:
                continue
            session = f"{sample['sample_id']}/{key}"
            themes[session] = sample["sample_id"]
            docs.append({"node_id": session, "session_id": session, "text": "\n".join(events)})
    vectors = embedder.embed([d["text"] for d in docs])
    for d, v in zip(docs, vectors, strict=True):
        d["embedding"] = v
    return quality(docs, themes, None)


def _scale_child(n: int, queue: Any) -> None:
    rng = np.random.default_rng(n)
    k = max(n // 40, 2)
    centres = rng.normal(size=(k, 384)).astype(np.float32)
    truth = rng.integers(0, k, n)
    x = unit(centres[truth] + rng.normal(scale=0.9, size=(n, 384)).astype(np.float32))
    words = [f"alpha{c % 97} beta{c % 89} gamma{c % 83} service" for c in range(k)]
    docs = [
        {"node_id": f"n{i:07d}", "session_id": f"s{i // 3}", "text": words[truth[i]],
         "embedding": x[i]}
        for i in range(n)
    ]  # fmt: skip
    del x
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, cpu = time.perf_counter(), time.process_time()
    result = plan("bench", "p", docs, {}, TopicsOptions())
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    queue.put(
        {
            "segments": n,
            "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2),
            "peak_rss_mb": round(peak / 1024, 1),
            "growth_mb": round((peak - before) / 1024, 1),
            "topics": len(result.topics),
            "assigned": len(result.members),
        }
    )


def scale(n: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_scale_child, args=(n, queue))
    proc.start()
    out: dict[str, Any] = queue.get(timeout=1800)
    proc.join()
    return out


def assignment(embedder: Any) -> dict[str, float]:
    rng = np.random.default_rng(1)
    cents = unit(rng.normal(size=(2500, 384)).astype(np.float32))
    segs = corpus(sessions_per_theme=5, segments_per_session=3, seed=99)[:100]
    embed_ms, assign_ms, total, cpu_ms = [], [], [], []
    for s in segs:
        c0 = time.process_time()
        t0 = time.perf_counter()
        v = embedder.embed([s.text])[0]
        t1 = time.perf_counter()
        nearest(unit(np.asarray([v], dtype=np.float32)), cents)
        t2 = time.perf_counter()
        embed_ms.append((t1 - t0) * 1000)
        assign_ms.append((t2 - t1) * 1000)
        total.append((t2 - t0) * 1000)
        cpu_ms.append((time.process_time() - c0) * 1000)
    return {
        "embed_p50": round(percentile(embed_ms, 50), 2),
        "nearest_p50": round(percentile(assign_ms, 50), 3),
        "total_p50": round(percentile(total, 50), 2),
        "total_p95": round(percentile(total, 95), 2),
        "cpu_p50": round(percentile(cpu_ms, 50), 2),
    }


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10_000, 100_000]
    embedder = load_embedder(RetrievalSettings())
    embedder.embed(["warm up"])
    code = coding(embedder)
    loco = locomo(embedder)
    rows = [["corpus", "segments", "sessions", "themes", "topics", "unassigned", "ARI", "NMI",
             "label quality"]]  # fmt: skip
    for name, q in (("coding (8 themes)", code), ("LoCoMo event_summary", loco)):
        if q is None:
            continue
        rows.append(
            [name, str(q["segments"]), str(q["sessions"]), str(q["themes"]), str(q["topics"]),
             str(q["unassigned"]), f"{q['ari']:.3f}", f"{q['nmi']:.3f}",
             f"{q['label_quality']:.2f}" if "label_quality" in q else "-"]
        )  # fmt: skip
    print("\n## Clustering quality\n")
    print(table(rows, [False] + [True] * 8))
    print("\nlabels of the coding corpus (label <- majority theme):")
    for line in code["labels"]:
        print("  " + line)
    print("\n## Full re-cluster (synthetic vectors, one process each)\n")
    rows = [["segments", "wall s", "CPU s", "peak RSS MB", "growth MB", "topics", "assigned"]]
    for n in sizes:
        r = scale(n)
        rows.append([f"{n:,}", f"{r['seconds']:.2f}", f"{r['cpu_seconds']:.2f}",
                     f"{r['peak_rss_mb']:.0f}",
                     f"{r['growth_mb']:.0f}", str(r["topics"]), str(r["assigned"])])  # fmt: skip
        print(f"  ... {n:,} done in {r['seconds']:.1f}s", file=sys.stderr)
    print(table(rows, [True] * 7))
    a = assignment(embedder)
    print("\n## Incremental assignment of a new segment (2,500 topics)\n")
    print(
        table(
            [["embed p50 ms", "nearest p50 ms", "total p50 ms", "total p95 ms", "CPU p50 ms"],
             [f"{a['embed_p50']:.2f}", f"{a['nearest_p50']:.3f}", f"{a['total_p50']:.2f}",
              f"{a['total_p95']:.2f}", f"{a['cpu_p50']:.2f}"]],
            [True] * 5,
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
