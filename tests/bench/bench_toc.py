"""TOC benchmark: segments summarized per second, and the latency of every TOC call and of a
full year -> segment descent, over 100,000 events.

Run by ``make bench-toc``. Self-contained: it starts its own nats-server and Postgres (product
settings, fsync on) in a temporary folder. For speed the input is **generated, not ingested**:
the events are written straight into the ``events`` table with COPY, and one message per
segment (``--per-segment`` consecutive events of a session, spread over 2026, one project) is
published on ``mem.segments.*`` exactly as the segmenter would publish it. Ingest and
segmentation have their own benchmarks; this one starts where the summarizer starts.

Then the summarizer runs as a real OS process (``--replicas`` of them) until every segment is
in the tree, and the query service (search embedder not loaded: the TOC needs none) answers
``--calls`` requests of each TOC call from one sequential client, against random targets.

A measurement, not a test: the exit code is 0 whatever the figures; only a failure to run is
non-zero. Everything shares the same cores, client included.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import nats
import orjson
import psycopg

from agent_memory_common.bus.streams import ensure_pipeline
from agent_memory_common.contracts.subjects import segment_subject
from agent_memory_common.core.logs import configure_logging
from agent_memory_common.core.settings import CommonSettings
from agent_memory_common.db.postgres import prepare_database
from agent_memory_embedded import ManagedProcess, NatsServer, PostgresServer, free_port
from tests.bench.report import http_ok, percentile, stop_on_sigterm, table
from tests.bench.stack import get_json

PROJECT = "bench"
TENANT = "default"
YEAR_START = datetime(2026, 1, 1, tzinfo=UTC)

# --------------------------------------------------------------------------------------------
# Workload: sentences from templates (thousands of distinct ones), some code, some rules
# --------------------------------------------------------------------------------------------

SUBJECTS = (
    "The recorder",
    "The gateway",
    "The segmenter",
    "The summarizer",
    "The query service",
    "The migration",
    "The consumer runner",
    "The test suite",
    "The nats reconnect loop",
    "The rollup lock",
    "The bm25 indexer",
    "The embedder",
    "The CLI",
    "The docker image",
    "The retry policy",
    "The advisory lock",
    "The event schema",
    "The search endpoint",
)
VERBS = (
    "now handles",
    "no longer drops",
    "must acknowledge",
    "retries",
    "serializes",
    "validates",
    "caches",
    "batches",
    "publishes",
    "indexes",
    "redacts",
    "rebuilds",
    "streams",
    "measures",
)
OBJECTS = (
    "late events",
    "duplicate deliveries",
    "the per-project rollups",
    "secrets in metadata",
    "the overlap tokens",
    "every node version",
    "the dead-letter subject",
    "idle sessions",
    "the ISO week buckets",
    "the grip excerpts",
    "bearer tokens",
    "schema versions",
    "connection pools",
    "the TOC search",
    "pinned memories",
    "the month boundary",
)
TAILS = (
    "after the commit",
    "under load",
    "when Postgres restarts",
    "in team mode",
    "for every tenant",
    "without an index",
    "since the last release",
    "on two cores",
    "as the user asked",
    "to avoid a thundering herd",
    "behind a feature flag",
    "",
)
RULES = (
    "We must never store secrets in event metadata.",
    "I prefer plain SQL files over an ORM.",
    "A grip means a link from a bullet to the exact events it came from.",
    "First run make install, then start the stack with agent-memory up.",
    "Avoid global state in the handlers.",
)
CODE = (
    "```python\nfor row in rows:\n    total += len(row.text)\n```",
    "`SELECT count(*) FROM toc_nodes WHERE level = 'segment'`",
)


def sentence(rng: random.Random) -> str:
    if rng.random() < 0.06:
        return rng.choice(RULES)
    if rng.random() < 0.04:
        return rng.choice(CODE)
    tail = rng.choice(TAILS)
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}" + (
        f" {tail}." if tail else "."
    )


def generate(dsn: str, events: int, per_segment: int, seed: int) -> list[dict[str, Any]]:
    """Events into Postgres (COPY), segment payloads back (not published yet)."""
    rng = random.Random(seed)
    segments = max(1, events // per_segment)
    spacing = timedelta(days=364) / segments
    payloads: list[dict[str, Any]] = []
    with (
        psycopg.connect(dsn) as conn,
        conn.cursor() as cur,
        cur.copy(
            "COPY events (tenant, event_id, ts, project_id, agent_id, session_id, role, type, "
            "text, metadata, received_at) FROM STDIN"
        ) as copy,
    ):
        n = 0
        for s in range(segments):
            start = YEAR_START + s * spacing
            session = f"s{s // 4}"
            count = per_segment if s < segments - 1 else events - n
            ids = []
            ts = start
            for i in range(count):
                event_id = f"b{n:07d}"
                ts = start + timedelta(seconds=30 * i)
                text = " ".join(sentence(rng) for _ in range(rng.randint(1, 4)))
                role = "user" if i % 2 == 0 else "assistant"
                copy.write_row(
                    (
                        TENANT,
                        event_id,
                        ts,
                        PROJECT,
                        "claude-code",
                        session,
                        role,
                        "message",
                        text,
                        "{}",
                        ts,
                    )
                )
                ids.append(event_id)
                n += 1
            payloads.append(
                {
                    "tenant": TENANT,
                    "segment_id": f"sg_bench_{s:05d}",
                    "version": 1,
                    "project_id": PROJECT,
                    "agent_id": "claude-code",
                    "session_id": session,
                    "ordinal": s % 4,
                    "start_ts": start.isoformat(),
                    "end_ts": ts.isoformat(),
                    "event_ids": ids,
                    "overlap_count": 0,
                    "token_count": 0,
                    "close_reason": "gap",
                }
            )
    return payloads


async def publish(nats_url: str, payloads: list[dict[str, Any]]) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream(timeout=30)
        await ensure_pipeline(js, CommonSettings())
        for start in range(0, len(payloads), 500):
            futures = [
                await js.publish_async(
                    segment_subject(p["tenant"], p["project_id"]),
                    orjson.dumps(p),
                    headers={"Nats-Msg-Id": f"{p['tenant']}/{p['segment_id']}/v1"},
                )
                for p in payloads[start : start + 500]
            ]
            await asyncio.gather(*futures)
    finally:
        await nc.close()


# --------------------------------------------------------------------------------------------
# Stack
# --------------------------------------------------------------------------------------------


class Stack:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.nats = NatsServer(workdir / "nats", free_port(), workdir / "nats-server.log")
        self.pg = PostgresServer(
            workdir / "pg" / "data", free_port(), workdir / "postgres.log", trust=True
        )
        self.processes: list[ManagedProcess] = []
        self.query_url = ""
        self.dsn = ""
        self.env: dict[str, str] = {}

    def start(self) -> None:
        self.nats.start(timeout=30)
        self.pg.start(timeout=60)
        self.dsn = self.pg.dsn("agent_memory_bench")
        prepare_database(self.dsn)
        port = free_port()
        self.query_url = f"http://127.0.0.1:{port}"
        self.env = {
            **os.environ,
            "AGENT_MEMORY_NATS_URL": self.nats.url,
            "AGENT_MEMORY_PG_DSN": self.dsn,
            "AGENT_MEMORY_HOME": str(self.workdir / "home"),
            "AGENT_MEMORY_QUERY__PORT": str(port),
            "AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER": "false",
            "AGENT_MEMORY_LOG_LEVEL": "WARNING",
            "AGENT_MEMORY_LOG_JSON": "true",
            "AGENT_MEMORY_TOKENS": "",
        }

    def run(self, name: str, module: str, ready: Callable[[], bool] | None = None) -> None:
        proc = ManagedProcess(
            name,
            [sys.executable, "-m", module],
            self.workdir / f"{name}.log",
            env=self.env,
            ready=ready,
        )
        proc.start(timeout=120)
        self.processes.append(proc)

    def check_alive(self) -> None:
        for proc in self.processes:
            if not proc.alive():
                raise RuntimeError(f"{proc.name} died; see {proc.log_path}")

    def stop(self) -> None:
        for proc in reversed(self.processes):
            proc.stop()
        self.nats.stop()
        self.pg.stop()


def _count(dsn: str, query: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0


# --------------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------------


def summarize_all(stack: Stack, total: int, replicas: int) -> dict[str, float]:
    query = "SELECT count(*) FROM toc_nodes WHERE level = 'segment'"
    started = time.perf_counter()
    for r in range(replicas):
        stack.run(f"summarizer-{r}", "agent_memory_summarizer")
    first_at: float | None = None
    done = 0
    last_change, last_done = time.perf_counter(), 0
    while done < total:
        time.sleep(0.25)
        stack.check_alive()
        done = _count(stack.dsn, query)
        now = time.perf_counter()
        if done and first_at is None:
            first_at = now
        if done != last_done:
            last_change, last_done = now, done
        elif now - last_change > 120:
            raise RuntimeError(f"summarizer stalled at {done}/{total} segments")
    ended = time.perf_counter()
    assert first_at is not None
    return {
        "wall_s": ended - started,
        "working_s": ended - first_at,
        "rate": total / max(ended - first_at, 1e-9),
        "versions": _count(stack.dsn, "SELECT count(*) FROM toc_node_versions"),
        "grips": _count(stack.dsn, "SELECT count(*) FROM toc_grips"),
        "nodes": _count(stack.dsn, "SELECT count(*) FROM toc_nodes"),
    }


def targets(dsn: str) -> dict[str, list[str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT level, node_id FROM toc_nodes ORDER BY node_id").fetchall()
        grips = [r[0] for r in conn.execute("SELECT grip_id FROM toc_grips ORDER BY grip_id")]
    out: dict[str, list[str]] = {"grip": grips}
    for level, node_id in rows:
        out.setdefault(level, []).append(node_id)
    return out


def measure(client: httpx.Client, n: int, call: Callable[[], httpx.Response]) -> list[float]:
    for _ in range(min(5, n)):  # warm-up: connections, plans, caches
        call()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        r = call()
        times.append((time.perf_counter() - t) * 1000)
        if r.status_code != 200:
            raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text}")
    return times


def descend(client: httpx.Client, rng: random.Random) -> int:
    """Years -> a month -> a week -> a day -> a segment -> its events: every call an agent
    makes to walk down the tree. Returns the number of calls."""

    def get(path: str, **params: Any) -> dict[str, Any]:
        return get_json(client, path, **params)

    years = get("/v1/toc", project_id=PROJECT)["years"]
    node_id = rng.choice(years)["node_id"]
    calls = 1
    for _level in ("month", "week", "day", "segment"):
        children = get(f"/v1/toc/nodes/{node_id}/children")["children"]
        node_id = rng.choice(children)["node_id"]
        calls += 1
    get(f"/v1/toc/nodes/{node_id}")
    get(f"/v1/toc/nodes/{node_id}/children")
    return calls + 2


def bench_queries(stack: Stack, calls: int, seed: int) -> list[tuple[str, list[float]]]:
    rng = random.Random(seed)
    t = targets(stack.dsn)
    words = [w.lower() for w in " ".join(SUBJECTS + OBJECTS).split() if len(w) > 3]
    results: list[tuple[str, list[float]]] = []
    with httpx.Client(base_url=stack.query_url, timeout=60) as c:

        def node(level: str) -> Callable[[], httpx.Response]:
            return lambda: c.get(f"/v1/toc/nodes/{rng.choice(t[level])}")

        def children(level: str) -> Callable[[], httpx.Response]:
            return lambda: c.get(f"/v1/toc/nodes/{rng.choice(t[level])}/children")

        def at() -> httpx.Response:
            instant = YEAR_START + timedelta(seconds=rng.uniform(0, 364 * 86_400))
            return c.get("/v1/toc/at", params={"ts": instant.isoformat(), "project_id": PROJECT})

        def search(scope: str) -> Callable[[], httpx.Response]:
            def go() -> httpx.Response:
                body: dict[str, Any] = {"query": " ".join(rng.sample(words, 2))}
                if scope == "project":
                    body["project_id"] = PROJECT
                else:
                    body["node_id"] = rng.choice(t[scope])
                return c.post("/v1/toc/search", json=body)

            return go

        def pin() -> httpx.Response:
            grip = rng.choice(t["grip"])
            c.post(f"/v1/memories/{grip}/pin")
            return c.post(f"/v1/memories/{grip}/unpin")

        def years() -> httpx.Response:
            return c.get("/v1/toc", params={"project_id": PROJECT})

        plan: list[tuple[str, Callable[[], httpx.Response]]] = [
            (
                "GET /v1/toc?project_id= (years)",
                lambda: c.get("/v1/toc", params={"project_id": PROJECT}),
            ),
            ("GET /v1/toc/nodes/{year}", node("year")),
            ("GET /v1/toc/nodes/{month}", node("month")),
            ("GET /v1/toc/nodes/{day}", node("day")),
            ("GET /v1/toc/nodes/{segment}", node("segment")),
            ("GET .../{year}/children", children("year")),
            ("GET .../{week}/children", children("week")),
            ("GET .../{segment}/children (events)", children("segment")),
            ("GET /v1/toc/at?ts=", at),
            (
                "GET /v1/grips/{id}?context=2",
                lambda: c.get(f"/v1/grips/{rng.choice(t['grip'])}", params={"context": 2}),
            ),
            ("POST /v1/toc/search (project)", search("project")),
            ("POST /v1/toc/search (month subtree)", search("month")),
            ("POST /v1/memories/{grip}/pin+unpin", pin),
        ]
        for name, call in plan:
            results.append((name, measure(c, calls, call)))
        descent = []
        for _ in range(min(3, calls)):
            descend(c, rng)
        steps = 0
        for _ in range(calls):
            started = time.perf_counter()
            steps = descend(c, rng)
            descent.append((time.perf_counter() - started) * 1000)
        results.append((f"descent year -> segment events ({steps} calls)", descent))
    return results


def machine_info() -> str:
    cpus = os.cpu_count() or 0
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (
        f"machine: {platform.machine()} {cpus} CPU(s), Python {platform.python_version()}, "
        f"load {load}"
    )


def bench(args: argparse.Namespace, stack: Stack) -> None:
    t = time.perf_counter()
    payloads = generate(stack.dsn, args.events, args.per_segment, args.seed)
    gen_s = time.perf_counter() - t
    t = time.perf_counter()
    asyncio.run(publish(stack.nats.url, payloads))
    print(
        f"generated {args.events:,} events in {gen_s:.1f} s (COPY) and published "
        f"{len(payloads):,} segments in {time.perf_counter() - t:.1f} s"
    )
    sys.stdout.flush()
    s = summarize_all(stack, len(payloads), args.replicas)
    print()
    print(f"summarizer ({args.replicas} process(es), extractive):")
    print(
        table(
            [
                (
                    "segments",
                    "summarized/s",
                    "working s",
                    "wall s (incl. start)",
                    "node versions",
                    "nodes",
                    "grips",
                ),
                (
                    f"{len(payloads):,}",
                    f"{s['rate']:.1f}",
                    f"{s['working_s']:.1f}",
                    f"{s['wall_s']:.1f}",
                    f"{int(s['versions']):,}",
                    f"{int(s['nodes']):,}",
                    f"{int(s['grips']):,}",
                ),
            ],
            [True] * 7,
        )
    )
    sys.stdout.flush()
    stack.run("query", "agent_memory_query", lambda: http_ok(stack.query_url + "/readyz"))
    results = bench_queries(stack, args.calls, args.seed)
    print()
    print(f"query service, one sequential client, {args.calls} calls each (ms):")
    rows = [("call", "p50", "p95", "max")]
    for name, times in results:
        rows.append(
            (
                name,
                f"{percentile(times, 50):.1f}",
                f"{percentile(times, 95):.1f}",
                f"{max(times):.1f}",
            )
        )
    print(table(rows, [False, True, True, True]))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--events", type=int, default=100_000, help="events generated")
    p.add_argument("--per-segment", type=int, default=40, help="events per segment")
    p.add_argument("--replicas", type=int, default=1, help="summarizer processes")
    p.add_argument("--calls", type=int, default=200, help="requests per TOC call measured")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--keep", action="store_true", help="keep the work folder (logs, data)")
    args = p.parse_args(argv)
    for name in ("events", "per_segment", "replicas", "calls"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.events < args.per_segment:
        p.error("--events must be at least --per-segment")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    stop_on_sigterm()
    configure_logging("bench", "WARNING", json=False)
    print("agent-memory TOC benchmark")
    print(machine_info())
    print(
        f"run: {args.events:,} events, {args.per_segment} per segment, one project over 2026; "
        "Postgres with product settings (fsync on); services, servers and this client share "
        "the cores"
    )
    sys.stdout.flush()
    workdir = Path(tempfile.mkdtemp(prefix="agent-memory-bench-toc-"))
    stack = Stack(workdir)
    keep_logs = True
    try:
        t = time.perf_counter()
        stack.start()
        print(f"servers started in {time.perf_counter() - t:.1f} s (work folder {workdir})")
        bench(args, stack)
        keep_logs = False
        return 0
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        keep_logs = False
        return 130
    except Exception as exc:
        print(f"\nbenchmark failed: {exc!r}", file=sys.stderr)
        print(f"logs kept in {workdir}", file=sys.stderr)
        return 1
    finally:
        stack.stop()
        if args.keep:
            print(f"work folder kept: {workdir}")
        elif not keep_logs:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
