"""``make bench-move``: a deployment moved with ``export --vectors`` / ``import``, timed.

Issue 57, point 1: moving or restoring a deployment re-embedded every event (the embedder's
model is most of a new event's CPU). This benchmark fills a stack A (``agent-memory up``, as a
user starts it) with bench-scale's generated coding and conversation events, exports it with
``--vectors``, and imports the dump into a fresh stack B, timing the import end to end: from the
command's start until B's recorder, BM25 indexer and embedder have caught up (found by BM25 and
by vector search) and until every consumer has (the TOC built too). The same dump without its
vectors is imported into a fresh stack C, for the ratio. One run, one machine: ratios, not
absolute speeds, carry over.

    python -m tests.bench.bench_move [--events 5000] [--out FILE] [--keep]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from tests import plain_http
from tests.bench.bench_scale import event_stream, load_pools, metrics_url, model_counters
from tests.bench.stack import Product, caught_up, ingest, status, stop_and_clean

SEARCHABLE = ("recorder", "bm25-indexer", "embedder")  # what BM25 and vector search read


def wait(product: Product, expected: int, t0: float) -> dict[str, float]:
    """Seconds from ``t0`` until ``expected`` events are stored and the consumers that BM25
    and vector search read have nothing pending (``searchable``), until every consumer has
    (``all``), and when each consumer was last seen with a backlog (polled every 0.25 s)."""
    deadline = time.monotonic() + 7200
    found: dict[str, float] = {}
    busy: dict[str, float] = {}
    while time.monotonic() < deadline:
        st = status(product)
        now = time.monotonic() - t0
        for c in st.get("consumers", []):
            if c.get("pending", 0) + c.get("ack_pending", 0) or c.get("name") not in busy:
                busy[str(c.get("name"))] = now
        stored = st.get("events_stored") == expected
        if stored and "searchable" not in found and caught_up(st, SEARCHABLE):
            found["searchable"] = now
        if stored and caught_up(st, None):
            found["all"] = now
            return {**found, **{f"busy_until_{k}": v for k, v in busy.items()}}
        time.sleep(0.25)
    raise RuntimeError(f"{product.workdir}: not caught up in two hours")


def embedder_counters(product: Product) -> tuple[float, float]:
    """(texts through the embedder's model, the embedder's CPU seconds) so far."""
    url = metrics_url(product.workdir / "home", "embedder")
    if url is None:
        raise RuntimeError(f"{product.workdir}: the embedder's metrics port is not logged")
    counters = model_counters(plain_http.get(url, timeout=10).text)
    return counters.texts, counters.cpu


def import_into(product: Product, dump: Path, events: int) -> dict[str, float]:
    product.workdir.mkdir(parents=True)
    product.start()
    product.wait_until_quiet()  # the model loaded, the caches warm: not the import's cost
    texts0, cpu0 = embedder_counters(product)
    t0 = time.monotonic()
    out = product.run_module(
        "agent_memory_cli", "import", str(dump), "--quiet", "--wait-pins", "0", what="import"
    )
    posted = time.monotonic() - t0
    times = wait(product, events, t0)
    print(f"    {out.strip()}")
    print("    " + ", ".join(f"{k} {v:.1f}" for k, v in times.items() if k.startswith("busy")))
    return {
        "posted_s": posted,
        "searchable_s": times["searchable"],
        "all_consumers_s": times["all"],
        "events_per_s_searchable": events / times["searchable"],
        "events_per_s_all": events / times["all"],
        **times,
        "model_texts": embedder_counters(product)[0] - texts0,
        "embedder_cpu_s": embedder_counters(product)[1] - cpu0,
    }


def fill_and_export(workdir: Path, count: int, dump: Path, keep: bool) -> dict[str, float]:
    """Stack A: ``count`` of bench-scale's events through the whole pipeline, then exported
    with their vectors into ``dump``; the seconds each took."""
    events = list(itertools.islice(event_stream(7, load_pools()), count))
    source = Product(workdir, {})
    try:
        print(f"A: {count} events through the whole pipeline")
        workdir.mkdir(parents=True)
        source.start()
        t0 = time.monotonic()
        ingest(source, events)
        filled = wait(source, count, t0)["all"]
        t0 = time.monotonic()
        source.run_module(
            "agent_memory_cli", "export", "--vectors", "--quiet", "-o", str(dump), what="export"
        )
        return {"fill_a_s": filled, "export_s": time.monotonic() - t0}
    finally:
        stop_and_clean(source, workdir, keep)


def lines(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def without_vectors(dump: Path, target: Path) -> None:
    """The same dump as version 2 wrote it: no vector lines, no vector space."""
    with gzip.open(dump, "rt") as src, gzip.open(target, "wt") as dst:
        for line in src:
            record = json.loads(line)
            if record["kind"] == "vector":
                continue
            if record["kind"] == "header":
                record.pop("vectors", None)
            if record["kind"] == "end":
                record["counts"]["vector"] = 0
            dst.write(json.dumps(record) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=5000, help="events in the store (5000)")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the stacks' folders")
    parser.add_argument(
        "--dump", type=Path, help="import this dump (an earlier run's, kept) instead of filling A"
    )
    parser.add_argument(
        "--no-compare", action="store_true", help="skip the import without vectors (the slow one)"
    )
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="bench-move-"))
    dump = workdir / "dump.jsonl.gz"
    rows: dict[str, Any] = {}
    if args.dump:
        dump.write_bytes(args.dump.read_bytes())
        args.events = sum(1 for r in lines(dump) if r["kind"] == "event")
    else:
        rows.update(fill_and_export(workdir / "a", args.events, dump, args.keep))
    rows["events"] = args.events
    rows["dump_bytes"] = dump.stat().st_size
    plain = workdir / "plain.jsonl.gz"
    without_vectors(dump, plain)
    rows["dump_bytes_without_vectors"] = plain.stat().st_size

    runs = [("with_vectors", dump)] + ([] if args.no_compare else [("without_vectors", plain)])
    for name, path in runs:
        target = Product(workdir / name, {})
        try:
            print(f"import {name.replace('_', ' ')} into a fresh stack")
            rows[name] = import_into(target, path, args.events)
        finally:
            stop_and_clean(target, workdir / name, args.keep)

    w = rows["with_vectors"]
    p = rows.get("without_vectors") or {key: float("nan") for key in w}
    print()
    print(f"| {args.events} events | with vectors | without | ratio |")
    print("|---|---|---|---|")
    for key, label in (
        ("searchable_s", "import -> found by BM25 and vectors (s)"),
        ("all_consumers_s", "import -> every consumer caught up (s)"),
        ("events_per_s_searchable", "events/s, searchable"),
        ("model_texts", "texts through the embedder's model (events and TOC)"),
        ("embedder_cpu_s", "embedder CPU (s)"),
    ):
        ratio = f"{p[key] / w[key]:.2f}" if w[key] else "-"
        print(f"| {label} | {w[key]:.1f} | {p[key]:.1f} | {ratio} |")
    print(
        f"dump: {rows['dump_bytes'] / args.events:.0f} bytes/event with vectors, "
        f"{rows['dump_bytes_without_vectors'] / args.events:.0f} without"
        + (
            f"; export {rows['export_s']:.1f} s; filling A took {rows['fill_a_s']:.1f} s"
            if "fill_a_s" in rows
            else ""
        )
    )
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")
    if not args.keep:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
