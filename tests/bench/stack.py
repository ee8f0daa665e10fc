"""The product as a user starts it, for the retrieval benchmarks: ``agent-memory up`` in a
temporary home on free ports, events posted through the gateway, and the wait until every
event is recorded, every segment closed, summarized and indexed.

Shared by ``bench_locomo``, ``bench_coding`` and ``bench_summary``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import httpx
import psycopg

from agent_memory_common.core.credentials import load_credentials
from agent_memory_embedded import free_port
from tests import plain_http
from tests.bench.report import http_ok

REPO = Path(__file__).resolve().parents[2]


def shared_data(relative: str) -> Path:
    """``shared/bench-data/<relative>`` beside the repository, or beside the folder holding it
    (a git worktree under ``wt/``); the first candidate when neither holds it."""
    candidates = [parent / "shared" / "bench-data" / relative for parent in REPO.parents[:2]]
    return next((c for c in candidates if c.exists()), candidates[0])


# --------------------------------------------------------------------------------------------
# The stack: `agent-memory up`, exactly as a user starts it
# --------------------------------------------------------------------------------------------


@dataclass
class Product:
    workdir: Path
    extra_env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    log: BinaryIO | None = None  # agent-memory up's output, open while it runs
    gateway_url: str = ""
    query_url: str = ""
    pg_dsn: str = ""
    up_args: tuple[str, ...] = ()  # after ``agent-memory up``, e.g. ("--replicas", "embedder=2")
    env: dict[str, str] | None = None  # what ``agent-memory up`` was started with

    def start(self) -> None:
        names = ("nats", "pg", "gateway", "query", "pruner", "dashboard")
        ports = {name: free_port() for name in names}
        self.gateway_url = f"http://127.0.0.1:{ports['gateway']}"
        self.query_url = f"http://127.0.0.1:{ports['query']}"
        self.pg_dsn = f"postgresql://postgres@127.0.0.1:{ports['pg']}/agent_memory"
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("AGENT_MEMORY_") or k == "AGENT_MEMORY_LOG_LEVEL"
        }
        env.update(
            {
                "AGENT_MEMORY_HOME": str(self.workdir / "home"),
                "AGENT_MEMORY_EMBEDDED__NATS_PORT": str(ports["nats"]),
                "AGENT_MEMORY_EMBEDDED__PG_PORT": str(ports["pg"]),
                "AGENT_MEMORY_GATEWAY__PORT": str(ports["gateway"]),
                "AGENT_MEMORY_QUERY__PORT": str(ports["query"]),
                # two benchmarks may run side by side: no fixed port for them to collide on
                "AGENT_MEMORY_DASHBOARD__PORT": str(ports["dashboard"]),
                "AGENT_MEMORY_GATEWAY__GRPC_PORT": "0",
                "AGENT_MEMORY_METRICS__PORT": "0",
                "AGENT_MEMORY_LOG_JSON": "true",
                # a benchmark's sessions are over once their events are in: close them soon
                "AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S": "15",
                "AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S": "3",
                # a benchmark replays conversations of the past with their own timestamps: the
                # retention pruner, measured by bench_lifecycle, would drop every entry older
                # than its 30 days (by the wall clock) from both indexes within a minute of the
                # start, and the retrieval benchmarks would measure what is left
                "AGENT_MEMORY_PRUNER__PORT": str(ports["pruner"]),
                "AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S": "31536000",
                "AGENT_MEMORY_PRUNER__INTERVAL_S": "31536000",
                **self.extra_env,
            }
        )
        self.env = env
        self.log = open(self.workdir / "agent-memory-up.log", "ab")  # noqa: SIM115 - closed by stop
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_memory_cli", "up", *self.up_args],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"agent-memory up exited; see {self.workdir}")
            if http_ok(self.gateway_url + "/readyz", 2) and http_ok(self.query_url + "/readyz", 2):
                # as the services connect: with the credentials up generated in the home
                creds = load_credentials(self.workdir / "home")
                if creds is not None:
                    login = f"{creds.pg_user}:{creds.pg_password}"
                    self.pg_dsn = f"postgresql://{login}@127.0.0.1:{ports['pg']}/agent_memory"
                return
            time.sleep(0.5)
        raise RuntimeError(f"the stack did not become ready; see {self.workdir}")

    def run_module(self, module: str, *args: str, what: str, timeout: float = 1800) -> str:
        """``python -m module args`` with the stack's own environment (its engines, folders
        and Postgres), from the repository; its output, or an error naming ``what`` failed
        with the end of its stderr."""
        done = subprocess.run(
            [sys.executable, "-m", module, *args],
            env=self.env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{what} failed: {done.stderr[-2000:]}")
        return done.stdout

    def cpu_seconds(self) -> float:
        """CPU time used so far by every process of the stack (``agent-memory up`` starts them
        in a session of its own: the servers, the services and their replicas)."""
        if self.proc is None:
            return 0.0
        ticks = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # a process that just ended
            if int(fields[3]) == self.proc.pid:  # its session
                ticks += int(fields[11]) + int(fields[12])  # utime + stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def wait_until_quiet(
        self, share: float = 0.15, window_s: float = 5.0, timeout_s: float = 600.0
    ) -> float:
        """Wait until the stack uses less than ``share`` of one core over ``window_s`` (a
        stack just started loads its models, checks its ONNX exports and warms its caches for
        a minute or more, and a search timed meanwhile measures that); the seconds waited.
        Gives up after ``timeout_s`` and goes on."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout_s:
            before = self.cpu_seconds()
            time.sleep(window_s)
            if (self.cpu_seconds() - before) / window_s < share:
                break
        return time.monotonic() - t0

    @contextlib.contextmanager
    def second_query_service(
        self, settings: dict[str, str], python: str = sys.executable
    ) -> Iterator[str]:
        """One more query service on the running stack's store, as the stack starts its own
        plus ``settings``, on a free port; its URL while the block runs. Two query services
        asked the same questions in turn compare a query-side setting on the same store at
        the same moment, so that the machine's drift falls on both alike. ``python``: the
        interpreter of another checkout, to compare its code with this one's."""
        if self.env is None or self.proc is None:
            raise RuntimeError("the stack is not running")
        env = {
            **self.env,
            "AGENT_MEMORY_QUERY__PORT": str(free_port()),
            "AGENT_MEMORY_METRICS__PORT": "0",
            **settings,
        }
        url = f"http://127.0.0.1:{env['AGENT_MEMORY_QUERY__PORT']}"
        with open(self.workdir / "query-b.log", "ab") as log:
            proc = subprocess.Popen(
                [python, "-m", "agent_memory_query"],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
            try:
                deadline = time.monotonic() + 300
                while not http_ok(url + "/readyz", 2):
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"the second query service did not start: {log.name}")
                    time.sleep(0.5)
                yield url
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()

    def stop(self) -> None:
        try:
            if self.proc is None or self.proc.poll() is not None:
                return
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        finally:
            if self.log is not None:
                self.log.close()
                self.log = None


def ingest(product: Product, events: Sequence[dict[str, Any]], batch: int = 200) -> float:
    t0 = time.monotonic()
    with httpx.Client(timeout=60) as client:
        for start in range(0, len(events), batch):
            body = {"events": list(events[start : start + batch])}
            r = client.post(f"{product.gateway_url}/v1/events", json=body)
            if r.status_code != 202:
                raise RuntimeError(f"gateway refused a batch: {r.status_code} {r.text}")
    return time.monotonic() - t0


def stop_and_clean(product: Product, workdir: Path, keep: bool) -> None:
    """Stop the stack; its folder stays when asked for, or when the run failed (its logs)."""
    product.stop()
    if keep:
        print(f"work folder kept: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)


def get_json(client: httpx.Client, path: str, **params: Any) -> dict[str, Any]:
    """A JSON object from one GET; a benchmark cannot go on from anything but 200."""
    r = client.get(path, params=params)
    if r.status_code != 200:
        raise RuntimeError(f"GET {path}: {r.status_code} {r.text[:300]}")
    data: dict[str, Any] = r.json()
    return data


def status(product: Product) -> dict[str, Any]:
    try:
        r = plain_http.get(f"{product.query_url}/v1/status", timeout=10)
        return dict(r.json()) if r.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return {}


def open_segments(product: Product) -> int:
    try:
        with psycopg.connect(product.pg_dsn, connect_timeout=5) as conn:
            row = conn.execute("SELECT count(*) FROM segments WHERE status = 'open'").fetchone()
    except psycopg.Error:
        return -1
    return int(row[0]) if row else -1


def caught_up(st: dict[str, Any], consumers: Sequence[str] | None) -> bool:
    """Every consumer (or every one of ``consumers``) exists and has nothing pending."""
    if consumers is None:
        return bool(st.get("drained"))
    by_name = {c.get("name"): c for c in st.get("consumers", [])}
    return all(
        name in by_name
        and by_name[name].get("exists", True)
        and by_name[name].get("pending", 0) + by_name[name].get("ack_pending", 0) == 0
        for name in consumers
    )


# What a TOC needs: the events recorded, segmented and summarized (no index).
SUMMARIZED = ("recorder", "segmenter", "summarizer")


def wait_until_indexed(
    product: Product,
    expected: int,
    timeout: float = 3600,
    consumers: Sequence[str] | None = None,
) -> float:
    """Drained with every event stored, no open segment left, and drained once more; with
    ``consumers``, only those must have caught up (``SUMMARIZED``: the TOC is written)."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    phase = "events"
    last = ""
    while time.monotonic() < deadline:
        st = status(product)
        drained = caught_up(st, consumers) and st.get("events_stored") == expected
        if phase == "events" and drained:
            phase = "segments"
        if phase == "segments" and open_segments(product) == 0:
            phase = "final"
            time.sleep(2)
            continue
        if phase == "final" and drained:
            return time.monotonic() - t0
        backlog = sum(
            c.get("pending", 0) + c.get("ack_pending", 0) for c in st.get("consumers", [])
        )
        line = f"    waiting ({phase}): stored {st.get('events_stored')}, backlog {backlog}"
        if line != last and int(time.monotonic() - t0) % 10 == 0:
            print(line, flush=True)
            last = line
        time.sleep(1)
    raise RuntimeError("the pipeline did not drain in time")


def wait_for_vectors(product: Product, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = {"query": "warm up", "tiers": ["vector"], "project_id": "no-such-project"}
        with contextlib.suppress(httpx.HTTPError, KeyError, ValueError):
            r = plain_http.post(f"{product.query_url}/v1/search", json=body, timeout=30)
            if r.json()["explain"]["tiers"]["vector"]["status"] == "used":
                return
        time.sleep(1)
    raise RuntimeError("the query service never loaded its embedding model")


def fill_or_reuse(product: Product, events: Sequence[dict[str, Any]], reuse: bool) -> None:
    """A fresh stack gets the events and drains them; a reused one (``--reuse``: a folder
    ``--keep`` left) answers as a fresh one would, the usage counts of earlier runs cleared.
    Either way the query service has loaded its model when this returns."""
    if reuse:
        with psycopg.connect(product.pg_dsn) as conn:
            conn.execute("DELETE FROM search_access")
    else:
        post_s = ingest(product, events)
        print(f"  posted {len(events):,} events in {post_s:.1f} s")
        indexed_s = wait_until_indexed(product, len(events))
        print(f"  drained, segments closed and indexed {indexed_s:.0f} s after the last post")
    wait_for_vectors(product)


def add_question_options(parser: argparse.ArgumentParser, limit: int) -> None:
    """The options every question benchmark takes: ``--limit``, ``--set``, ``--keep``,
    ``--reuse`` (a folder ``--keep`` left, questions only)."""
    parser.add_argument("--limit", type=int, default=limit, help="results asked per question")
    parser.add_argument(
        "--set", action="append", default=[], metavar="VAR=VALUE", help="extra stack setting"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument(
        "--reuse",
        metavar="WORKDIR",
        help="start the stack on a work folder kept by --keep and only ask the questions (no"
        " ingest; the usage counts of earlier runs are cleared): to measure a change of search",
    )


def question_stack(args: argparse.Namespace, prefix: str) -> tuple[Product, Path, bool]:
    """The product of a question benchmark, on the folder ``--reuse`` names or a new one
    (``prefix``), with the ``--set`` settings; and whether it is reused."""
    reuse = args.reuse is not None
    workdir = Path(args.reuse) if reuse else Path(tempfile.mkdtemp(prefix=prefix))
    return Product(workdir, dict(item.split("=", 1) for item in args.set)), workdir, reuse


def start_filled(product: Product, events: Sequence[dict[str, Any]], reuse: bool) -> None:
    """Start the stack and give it the events (``fill_or_reuse``), saying how long it took."""
    t0 = time.monotonic()
    product.start()
    print(f"  stack up in {time.monotonic() - t0:.0f} s ({product.workdir})")
    fill_or_reuse(product, events, reuse)
