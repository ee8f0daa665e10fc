"""The aged run of the quality benchmarks (issue 53, point 7): the same store, as a user would
find it a while after the sessions, under the default retention matrix.

A benchmark replays conversations with their own timestamps and keeps the pruner's first run
far away (``tests/bench/stack.py``), so its questions are asked of fully indexed stores. The
aged run then applies the pruner's own cleanup (``run_cleanup``, with the topic step as the
pruner and ``agent-memory admin cleanup`` run it) with its clock moved forward: ages are
measured at the latest stored event plus ``days`` (default 365), so events, segments and grips
leave both indexes (but for the kinds that never go stale), days leave them too, and weeks,
months and years stay. Events and summaries stay in Postgres, as they do for a user.

``age(product)`` runs it in a child process with the stack's own environment (the same index
engines, folders and Postgres), so the benchmark process needs no settings of its own; the
query service sees the Tantivy deletions at its next search and pgvector's at once. The usage
counts of the fully indexed run are cleared, so the aged questions start as the first did.

``python -m tests.bench.aged --days 365`` is that child (with ``AGENT_MEMORY_*`` set).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any

import httpx
import psycopg

from tests import plain_http
from tests.bench.stack import Product

DEFAULT_DAYS = 365


def add_aged_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--aged-days",
        type=int,
        default=DEFAULT_DAYS,
        help="the aged run's pruner clock: the latest event plus this many days (default 365)",
    )
    parser.add_argument(
        "--no-aged", action="store_true", help="only the fully indexed run (no aged row)"
    )
    parser.add_argument(
        "--aged-baseline",
        action="store_true",
        help="also ask the aged store through a second query service with the descent off"
        " (AGENT_MEMORY_QUERY__SEARCH__DESCENT_TOP=0): the row before issue 53 point 1",
    )
    parser.add_argument(
        "--aged-only",
        action="store_true",
        help="only the aged run (e.g. with --reuse on a folder an aged run left)",
    )


def age(product: Product, days: int = DEFAULT_DAYS) -> dict[str, Any]:
    """Prune the product's indexes as of the latest event + ``days``; the pruner's report
    (``entries``, ``now``, per index and level). Clears the usage counts."""
    out = product.run_module("tests.bench.aged", "--days", str(days), what="aging the store")
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    clear_usage(product)
    return report


NO_DESCENT = {"AGENT_MEMORY_QUERY__SEARCH__DESCENT_TOP": "0"}
FULL, AGED, AGED_OFF = "fully indexed", "aged", "aged, no descent"


def run_labels(args: argparse.Namespace) -> list[str]:
    """The runs ``add_aged_options``' options ask for, in the order they are made: fully
    indexed, aged (the store aged before it), aged with the descent off."""
    labels = [] if args.aged_only else [FULL]
    labels += [] if args.no_aged else [AGED]
    return labels + ([AGED_OFF] if args.aged_baseline and not args.no_aged else [])


@contextlib.contextmanager
def without_descent(product: Product) -> Iterator[str]:
    """The aged store through a second query service with the descent off (``--aged-baseline``,
    the row before issue 53 point 1), its model loaded, the first run's usage cleared: its URL."""
    clear_usage(product)
    with product.second_query_service(NO_DESCENT) as url:
        wait_for_vectors(url)
        yield url


def wait_for_vectors(url: str, timeout: float = 600) -> None:
    """Until the query service at ``url`` has loaded its model (it loads after /readyz): a
    second query service asked before would answer without its vector tier."""
    deadline = time.monotonic() + timeout
    body = {"query": "warm up", "tiers": ["vector"], "project_id": "no-such-project"}
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError, KeyError, ValueError):
            r = plain_http.post(f"{url}/v1/search", json=body, timeout=30)
            if r.json()["explain"]["tiers"]["vector"]["status"] == "used":
                return
        time.sleep(1)
    raise RuntimeError(f"{url} never loaded its embedding model")


def clear_usage(product: Product) -> None:
    """The usage counts of earlier questions, cleared (the query service flushes its counts
    within a second: the wait lets the last ones in first)."""
    time.sleep(2)
    with psycopg.connect(product.pg_dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM search_access")


def p95(values: Sequence[float]) -> float:
    xs = sorted(values)
    return xs[min(int(0.95 * len(xs)), len(xs) - 1)] if xs else float("nan")


def both_rows(rows: Sequence[tuple[str, Any]]) -> str:
    """found@1/5/10 and search latency of each run (``bench_coding.Answers``), one row each."""
    out = ["  run              n  found@1  found@5  found@10  p50 ms  p95 ms"]
    for label, answers in rows:
        lat = answers.latency_ms
        out.append(
            f"  {label:<14} {answers.overall.n:>3}"
            + "".join(f"  {answers.overall.rate(k):>7.3f}" for k in (1, 5))
            + f"  {answers.overall.rate(10):>8.3f}"
            + f"  {statistics.median(lat) if lat else float('nan'):>6.0f}  {p95(lat):>6.0f}"
        )
    return "\n".join(out)


def describe(report: dict[str, Any]) -> str:
    """One line: the clock and what went, per index and level."""
    parts = []
    for index in report.get("indexes", []):
        levels = ", ".join(
            f"{lv['level']} {lv['entries']}" for lv in index.get("levels", []) if lv["entries"]
        )
        parts.append(f"{index['index']}: {index['entries']}" + (f" ({levels})" if levels else ""))
    return (
        f"aged to {report.get('now', '?')[:10]}: {report.get('entries', 0)} index entries went; "
        + ("; ".join(parts))
    )


async def _run(days: int) -> dict[str, Any]:
    from agent_memory_cli.cleanup import CleanupSettings
    from agent_memory_retrieval.adapters.factory import open_text_index, open_vector_index
    from agent_memory_retrieval.lifecycle.cleanup import CleanupScope, run_cleanup
    from agent_memory_retrieval.lifecycle.topic_prune import topic_step

    settings = CleanupSettings()
    text = await open_text_index(settings, writer=True)
    vectors = await open_vector_index(settings)
    try:
        async with await psycopg.AsyncConnection.connect(settings.pg_dsn, autocommit=True) as conn:
            cur = await conn.execute("SELECT max(ts) FROM events")
            row = await cur.fetchone()
            if row is None or row[0] is None:
                raise RuntimeError("no events to age")
            report = await run_cleanup(
                conn,
                text=text,
                vectors=vectors,
                scope=CleanupScope(),
                dry_run=False,
                now=row[0] + timedelta(days=days),
                episodes=settings.pruner.episode_rule(),
                extra_steps=[topic_step(settings.topic_prune_rule())],
            )
    finally:
        await text.close()
        await vectors.close()
    summary: dict[str, Any] = report.model_dump(mode="json")
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="prune a stack's indexes with a later clock")
    parser.add_argument("--days", type=int, default=DEFAULT_DAYS)
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(_run(args.days))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
