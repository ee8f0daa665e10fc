"""Ingest benchmark: events/s accepted by the gateway, events/s recorded, request latency.

Run by ``make bench-ingest``. Self-contained: it starts its own nats-server and Postgres (product
settings, fsync on) in a temporary folder, the gateway and the recorder as real OS processes,
then posts 100-event batches and watches the ``events`` table fill.

Throughput and latency are measured under different loads, and each figure is printed with its
load, because one load cannot show both. With N clients in a closed loop (each sends its next
request as soon as the last is answered) the gateway always has N requests queued, so at
saturation latency ~= N x 100 / throughput (Little's law): four clients at 11,000 events/s wait
~36 ms whatever the gateway does per request. So:

- throughput phase: 4 closed-loop clients, as fast as the gateway answers; the events/s targets
  (>= 10,000 accepted, >= 5,000 recorded end to end) are judged here;
- 1 closed-loop client: one request at a time, back to back, the service time of one batch;
- latency phase: open loop at a fixed rate (default 5,000 events/s, i.e. 50 requests/s, half the
  throughput target and the rate the recorder must sustain), requests sent on a fixed schedule
  whether or not the earlier ones were answered, each latency timed from the request's
  *scheduled* send time so that a slow answer cannot hide the requests it delayed (coordinated
  omission). The p99 < 10 ms target is judged on the first open-loop rate; a lighter one
  (1,000 events/s) is shown for reference;
- each stage alone: the recorder frozen while the gateway is loaded, then draining alone.

The recorder runs (and competes for the same cores) in every phase but the last. A summary table
at the end gives each target, the load it was judged under, the figure, PASS or MISS, and the
cores other work on the machine took meanwhile. The client is ``Connection``, a minimal HTTP/1.1
client on uvloop, so that the client's own CPU (it shares the cores) stays small.

A measurement, not a test: a missed target is printed as MISS and the exit code stays 0; only a
failure to run (a server that does not start, a refused request, events that never arrive) is
non-zero. Everything shares the same cores, the client included, so the client's own CPU is
reported beside the figures, and the CPU µs per event of every process, which moves much less
than the rates when other work shares the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psycopg
import uvloop

from agent_memory_common.core.logs import configure_logging
from agent_memory_common.db.postgres import prepare_database
from agent_memory_embedded import ManagedProcess, NatsServer, PostgresServer, free_port
from tests.bench.report import http_ok, percentile, stop_on_sigterm, table

TARGET_ACCEPTED = 10_000.0  # events/s
TARGET_RECORDED = 5_000.0  # events/s
TARGET_P99_MS = 10.0  # per 100-event batch, at the first open-loop rate

POLL_BUSY_S = 0.2  # while clients post: keep Postgres free for the recorder
POLL_TAIL_S = 0.05  # once posting is over: finer resolution for the end time
STALL_S = 60.0  # no new row for this long means the pipeline is stuck
SPIN_S = 0.0015  # open loop: sleep until this long before a request is due, then yield until due

# --------------------------------------------------------------------------------------------
# Workload: what a coding agent writes (prose with code, paths, commands, an error now and then)
# --------------------------------------------------------------------------------------------

PROSE = (
    "Ran the test suite again after moving the retry logic into the consumer runner; two "
    "failures remain in test_crash_recovery.py and both time out waiting for the recorder.",
    "The user wants the gateway to answer 202 only once JetStream has acknowledged every "
    "event, so the publish path now awaits all the acks before it returns.",
    "I checked the migration: events keeps a unique constraint on (tenant, event_id), which "
    "makes a redelivery after a crash harmless.",
    "Next step: add an index on (tenant, session_id, ts) so that the timeline query stops "
    "scanning the whole table for one session.",
    "Refactored the parser so that a bad request names the exact field, for example "
    "events[3].role, instead of a generic 422.",
    "Decision: raw events stay append-only forever and every derived table is rebuilt from "
    "them, so a bug in a later stage never loses data.",
    "The flaky test was a race: the fixture started the recorder before the stream existed. "
    "Creating the consumers ahead of time fixed it.",
    "Looked at the profile: most of the request time goes into validation and JSON encoding, "
    "not into NATS itself.",
    "The bearer token is read from AGENT_MEMORY_TOKENS; in local mode every request belongs "
    "to the tenant called default.",
    "Renamed session_start to session_open in the docs only; the wire format keeps the old "
    "name so existing clients keep working.",
    "Asked the user whether deleted projects should disappear from search or only be hidden; "
    "they prefer hidden, with a purge command for later.",
    "Postgres refuses NUL characters in text, so the gateway replaces them with U+FFFD "
    "before publishing.",
)

CODE = (
    "`await js.publish_async(subject, payload, headers={'Nats-Msg-Id': mid})`",
    "```python\nfor row in rows:\n    total += len(row.text)\nreturn total\n```",
    "`SELECT count(*) FROM events WHERE tenant = %s AND ts > now() - interval '1 day'`",
    'Traceback (most recent call last):\n  File "app.py", line 42, in handler\n'
    "KeyError: 'session_id'",
    "`git diff --stat HEAD~1`: 3 files changed, 41 insertions(+), 7 deletions(-)",
    "```\ndef retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n"
    "            return fn()\n        except TransientError:\n            time.sleep(2 ** i)\n```",
    "`uv run pytest services/gateway -q -k redaction` -> 38 passed in 1.92s",
    "`curl -s localhost:8700/v1/events -d @batch.json | jq .accepted`",
    "`ALTER TABLE events ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT now();`",
)

TOOLS = ("Bash", "Read", "Edit", "Grep", "WebFetch")
PROJECTS = ("agent-memory", "webshop", "infra")


def make_text(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        part = rng.choice(CODE) if rng.random() < 0.35 else rng.choice(PROSE)
        parts.append(part)
        length += len(part) + 1
    text = " ".join(parts)[:size]
    cut = text.rfind(" ")
    return text[:cut] if cut >= size * 0.9 else text  # end on a whole word when it is cheap


def make_batches(
    prefix: str, count: int, batch: int, text_bytes: int, seed: int
) -> tuple[list[tuple[int, bytes]], int]:
    """Pre-encoded request bodies, so that the timed loop only sends; also the text bytes."""
    rng = random.Random(seed)
    bodies: list[tuple[int, bytes]] = []
    text_total = 0
    ts0 = 1_767_225_600_000
    for start in range(0, count, batch):
        events: list[dict[str, Any]] = []
        for i in range(start, min(start + batch, count)):
            kind = rng.choices(("message", "tool_call", "tool_result"), (6, 2, 2))[0]
            text = make_text(rng, text_bytes)
            text_total += len(text.encode())
            event: dict[str, Any] = {
                "event_id": f"{prefix}-{i:08d}",
                "ts": ts0 + i,
                "project_id": PROJECTS[i % len(PROJECTS)],
                "agent_id": "claude-code",
                "session_id": f"{prefix}-s{i // 500}",
                "role": ("user", "assistant")[i % 2] if kind == "message" else "tool",
                "type": kind,
                "text": text,
            }
            if kind != "message":
                event["metadata"] = {"tool": rng.choice(TOOLS), "duration_ms": rng.randint(3, 900)}
            events.append(event)
        bodies.append((len(events), orjson.dumps({"events": events})))
    return bodies, text_total


# --------------------------------------------------------------------------------------------
# CPU accounting from /proc (Linux); every figure is CPU seconds, turned into cores used
# --------------------------------------------------------------------------------------------

CLOCK_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_times() -> dict[int, tuple[int, float]]:
    """pid -> (ppid, utime+stime seconds) for every process we can read."""
    out: dict[int, tuple[int, float]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                raw = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            rest = raw[raw.rfind(")") + 2 :].split()
            out[int(entry.name)] = (int(rest[1]), (int(rest[11]) + int(rest[12])) / CLOCK_TICK)
    return out


def _machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0, 0.0
    total = sum(fields[:8])
    idle = fields[3] + fields[4]
    return (total - idle) / CLOCK_TICK, total / CLOCK_TICK


@dataclass
class CpuSample:
    at: float
    groups: dict[str, float]
    machine_busy: float
    machine_total: float


class CpuMeter:
    """CPU seconds per component: each service, nats-server, Postgres (all backends), client."""

    def __init__(self, pids: dict[str, int], postmaster: int) -> None:
        self.pids = pids
        self.postmaster = postmaster

    def sample(self) -> CpuSample:
        procs = _proc_times()
        groups = {name: procs.get(pid, (0, 0.0))[1] for name, pid in self.pids.items()}
        groups["postgres"] = sum(
            t
            for pid, (ppid, t) in procs.items()
            if pid == self.postmaster or ppid == self.postmaster
        )
        usage = resource.getrusage(resource.RUSAGE_SELF)
        groups["bench client"] = usage.ru_utime + usage.ru_stime
        busy, total = _machine_busy()
        return CpuSample(time.perf_counter(), groups, busy, total)


# --------------------------------------------------------------------------------------------
# The stack
# --------------------------------------------------------------------------------------------


@dataclass
class BenchStack:
    workdir: Path
    nats: NatsServer | None = None
    pg: PostgresServer | None = None
    dsn: str = ""
    gateway_url: str = ""
    services: dict[str, ManagedProcess] = field(default_factory=dict)

    def start(self) -> None:
        self.nats = NatsServer(self.workdir / "nats", free_port(), self.workdir / "nats.log")
        self.nats.start(timeout=30)
        self.pg = PostgresServer(
            self.workdir / "pg" / "data", free_port(), self.workdir / "postgres.log", trust=True
        )
        self.pg.start(timeout=60)
        self.dsn = self.pg.dsn("agent_memory_bench")
        prepare_database(self.dsn)
        port = free_port()
        self.gateway_url = f"http://127.0.0.1:{port}"
        env = {
            **os.environ,
            "AGENT_MEMORY_NATS_URL": self.nats.url,
            "AGENT_MEMORY_PG_DSN": self.dsn,
            "AGENT_MEMORY_HOME": str(self.workdir / "home"),
            "AGENT_MEMORY_GATEWAY__PORT": str(port),
            "AGENT_MEMORY_LOG_LEVEL": "WARNING",
            "AGENT_MEMORY_LOG_JSON": "true",
            "AGENT_MEMORY_TOKENS": "",  # local mode: the tenant is "default"
        }
        for name, module, ready in (
            ("gateway", "agent_memory_gateway", lambda: http_ok(self.gateway_url + "/readyz")),
            ("recorder", "agent_memory_recorder", None),
        ):
            proc = ManagedProcess(
                name,
                [sys.executable, "-m", module],
                self.workdir / f"{name}.log",
                env=env,
                ready=ready,
            )
            self.services[name] = proc
            proc.start(timeout=60)

    def check_alive(self) -> None:
        for name, proc in self.services.items():
            if not proc.alive():
                raise RuntimeError(f"{name} exited; see {proc.log_path}")

    def priorities(self) -> str:
        """The CPU niceness each service gave itself from the product settings (the recorder
        lowers its own, ``AGENT_MEMORY_BACKGROUND_NICE``, as under ``agent-memory up``)."""
        niceness = []
        for name, proc in self.services.items():
            value = "?"
            if proc.pid is not None:
                with contextlib.suppress(OSError):
                    value = str(os.getpriority(os.PRIO_PROCESS, proc.pid))
                with contextlib.suppress(OSError, IndexError):  # autogroup scheduling only
                    group = Path(f"/proc/{proc.pid}/autogroup").read_text().split()[-1]
                    value += f" (its session's autogroup {group})"
            niceness.append(f"{name} {value}")
        return "CPU niceness: " + ", ".join(niceness) + ", set by the services themselves"

    def pids(self) -> dict[str, int]:
        pids = {name: proc.pid or 0 for name, proc in self.services.items()}
        if self.nats is not None and self.nats.pid:
            pids["nats-server"] = self.nats.pid
        return pids

    def stop(self) -> None:
        for proc in reversed(list(self.services.values())):
            if proc.pid is not None and proc.alive():  # a frozen recorder would not hear SIGTERM
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGCONT)
            with contextlib.suppress(Exception):
                proc.stop()
        for server in (self.pg, self.nats):
            if server is not None:
                with contextlib.suppress(Exception):
                    server.stop()


# --------------------------------------------------------------------------------------------
# One phase: N clients post pre-built batches; a poller watches the events table fill
# --------------------------------------------------------------------------------------------


@dataclass
class PhaseResult:
    events: int
    latencies_ms: list[float]
    retries: int
    start: CpuSample  # first post
    posted: CpuSample  # last 202
    resumed: CpuSample  # recorder running again (== posted unless it was paused)
    recorded: CpuSample  # the last event is in the events table
    backlog: int  # events not yet recorded when posting ended
    lateness_ms: list[float] = field(default_factory=list)  # open loop: send time - due time

    @property
    def accept_s(self) -> float:
        return self.posted.at - self.start.at

    @property
    def record_s(self) -> float:
        return self.recorded.at - self.start.at

    @property
    def drain_s(self) -> float:
        return self.recorded.at - self.resumed.at


class Connection:
    """One keep-alive HTTP/1.1 connection to the gateway, written for this benchmark.

    The client shares the cores with what it measures, and httpx spends ~1.2 ms of CPU on each
    50 KiB request, more than a third of the gateway's own; this spends a tenth of that, so the
    figures are the gateway's rather than the client library's. It sends exactly what an HTTP
    client sends (request line, Host, Content-Type, Content-Length, body) and reads the status,
    the headers and a Content-Length body, which is all the gateway answers with.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: bytes = b""
    ) -> tuple[int, dict[str, str], bytes]:
        reused = self.writer is not None
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        try:
            self.writer.write(head.encode() + body)
            status_line = await self.reader.readline()
        except ConnectionError:
            status_line = b""
        if not status_line:
            await self.close()
            if reused:  # the server closed it while idle (keep-alive timeout): a fresh one
                return await self.request(method, path, body)
            raise ConnectionError("the gateway closed the connection")
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" not in headers:
            raise RuntimeError(f"answer without Content-Length: {status} {headers}")
        data = await self.reader.readexactly(int(headers["content-length"]))
        if headers.get("connection") == "close":
            await self.close()
        return status, headers, data

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None


def _split_url(url: str) -> tuple[str, int, str]:
    parsed = urllib.parse.urlsplit(url)
    assert parsed.hostname and parsed.port, url
    return parsed.hostname, parsed.port, parsed.path


async def _send(conn: Connection, path: str, body: bytes) -> int:
    """Post until accepted; returns how many 503s were retried (same ids: no duplicates)."""
    retries = 0
    while True:
        status, headers, data = await conn.request("POST", path, body)
        if status == 202:
            return retries
        if status == 503:
            retries += 1
            await asyncio.sleep(float(headers.get("retry-after", "1")))
            continue
        raise RuntimeError(f"gateway answered {status}: {data[:500]!r}")


async def _post_all(
    url: str, bodies: Sequence[tuple[int, bytes]], clients: int
) -> tuple[list[float], int, list[float]]:
    queue: Iterator[tuple[int, bytes]] = iter(bodies)  # shared: each client takes the next body
    latencies: list[float] = []
    retries = 0
    host, port, path = _split_url(url)

    async def client() -> None:
        nonlocal retries
        conn = Connection(host, port)
        try:
            for _, body in queue:
                t = time.perf_counter()
                retries += await _send(conn, path, body)
                latencies.append((time.perf_counter() - t) * 1000.0)
        finally:
            await conn.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, retries, []


async def _post_open_loop(
    url: str, bodies: Sequence[tuple[int, bytes]], rate: float
) -> tuple[list[float], int, list[float]]:
    """Send each request when its events are due at ``rate`` events/s, whatever happened to the
    earlier ones; returns the latencies, the 503s retried, and how late each request was sent.

    Open loop: a slow answer does not delay the next request (a closed-loop client would wait,
    send less, and hide the queueing it caused: coordinated omission). Each latency runs from the
    request's *scheduled* send time, so a late sender or a busy client loop counts against the
    gateway, never for it. A request takes an idle connection, or opens one if all are busy.

    The event loop's timers have millisecond resolution (uvloop, like epoll, rounds a sleep to
    whole milliseconds: measured 0.2 ms late at the median and ~1 ms at p99), which would add
    the client's own lateness to every figure. So the client sleeps until ``SPIN_S`` before the
    due time and then yields to the loop until it is due (answers keep being read meanwhile).
    The lateness that remains is measured and reported, and still counted in the latency.
    """
    latencies: list[float] = []
    lateness: list[float] = []
    retries = 0
    host, port, path = _split_url(url)
    idle: list[Connection] = []
    opened: list[Connection] = []

    async def one(due: float, body: bytes) -> None:
        nonlocal retries
        lateness.append((time.perf_counter() - due) * 1000.0)
        if idle:
            conn = idle.pop()
        else:
            conn = Connection(host, port)
            opened.append(conn)
        retries += await _send(conn, path, body)
        latencies.append((time.perf_counter() - due) * 1000.0)
        idle.append(conn)

    try:
        # a few connections open before the clock starts, as long-running agents would have
        for _ in range(4):
            conn = Connection(host, port)
            opened.append(conn)
            status, _, _ = await conn.request("GET", "/healthz")
            if status != 200:
                raise RuntimeError(f"gateway /healthz answered {status}")
            idle.append(conn)
        tasks: list[asyncio.Task[None]] = []
        start = time.perf_counter() + 0.01
        sent = 0  # events scheduled before this request
        for count, body in bodies:
            due = start + sent / rate
            sent += count
            delay = due - time.perf_counter() - SPIN_S
            if delay > 0:
                await asyncio.sleep(delay)
            while time.perf_counter() < due:
                await asyncio.sleep(0)
            tasks.append(asyncio.create_task(one(due, body)))
        await asyncio.gather(*tasks)
    finally:
        for conn in opened:
            await conn.close()
    return latencies, retries, lateness


Poster = Callable[
    [str, Sequence[tuple[int, bytes]]], Awaitable[tuple[list[float], int, list[float]]]
]


def closed_loop(clients: int) -> Poster:
    return lambda url, bodies: _post_all(url, bodies, clients)


def open_loop(rate: float) -> Poster:
    return lambda url, bodies: _post_open_loop(url, bodies, rate)


async def _scalar(conn: psycopg.AsyncConnection[Any], query: str, *params: object) -> int:
    cur = await conn.execute(query, params or None)
    row = await cur.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


class RowCounter:
    """Rows appended to ``events`` since ``base``, counted without rescanning them.

    ``count(*)`` over every row of the phase costs Postgres tens of milliseconds once the phase
    has written 100,000 rows, several times a second while the clients post: CPU taken from the
    pipeline being measured, in bursts that land in the latency tail. Only the recorder writes,
    one transaction at a time, so rows become visible in ``seq`` order and each poll counts only
    the rows past the highest ``seq`` already counted.
    """

    def __init__(self, conn: psycopg.AsyncConnection[Any], base: int) -> None:
        self.conn = conn
        self.last_seq = base
        self.count = 0
        self._lock = asyncio.Lock()  # the watcher and the phase may both ask

    async def poll(self) -> int:
        async with self._lock:
            cur = await self.conn.execute(
                "SELECT count(*), max(seq) FROM events WHERE seq > %s", (self.last_seq,)
            )
            row = await cur.fetchone()
            if row is not None and row[0]:
                self.count += int(row[0])
                self.last_seq = int(row[1])
            return self.count


async def _wait_recorded(
    stack: BenchStack,
    counter: RowCounter,
    total: int,
    interval: Callable[[int], float],
) -> None:
    """Return as soon as ``total`` new rows are visible; fail if the pipeline stalls."""
    seen, last_progress = 0, time.perf_counter()
    while True:
        n = await counter.poll()
        now = time.perf_counter()
        if n >= total:
            return
        if n > seen:
            seen, last_progress = n, now
        elif now - last_progress > STALL_S:
            raise RuntimeError(f"recorder stalled at {n:,}/{total:,} events")
        stack.check_alive()
        await asyncio.sleep(interval(n))


async def run_phase(
    stack: BenchStack,
    meter: CpuMeter,
    bodies: Sequence[tuple[int, bytes]],
    post: Poster,
    *,
    pause_recorder: bool = False,
) -> PhaseResult:
    """Post every body; with ``pause_recorder`` the recorder is frozen (SIGSTOP) meanwhile, so
    the gateway runs alone and the recorder then drains the backlog alone."""
    total = sum(n for n, _ in bodies)
    url = stack.gateway_url + "/v1/events"
    recorder = stack.services["recorder"].pid
    assert recorder is not None
    async with await psycopg.AsyncConnection.connect(stack.dsn, autocommit=True) as conn:
        counter = RowCounter(conn, await _scalar(conn, "SELECT max(seq) FROM events"))
        posting = True
        watcher: asyncio.Task[None] | None = None
        if pause_recorder:
            os.kill(recorder, signal.SIGSTOP)
        try:
            start = meter.sample()
            if not pause_recorder:
                watcher = asyncio.create_task(
                    _wait_recorded(
                        stack,
                        counter,
                        total,
                        # coarse while the clients need the CPU, fine near the end
                        lambda n: POLL_BUSY_S if posting and n < 0.9 * total else POLL_TAIL_S,
                    )
                )
            latencies, retries, lateness = await post(url, bodies)
            posted = meter.sample()
            posting = False
        except BaseException:
            if watcher is not None:
                watcher.cancel()
            raise
        finally:
            if pause_recorder:
                os.kill(recorder, signal.SIGCONT)
        resumed = meter.sample() if pause_recorder else posted
        backlog = total - await counter.poll()
        if watcher is None:
            await _wait_recorded(stack, counter, total, lambda _: POLL_TAIL_S)
        else:
            await watcher
        recorded = meter.sample()
    return PhaseResult(
        total, latencies, retries, start, posted, resumed, recorded, max(backlog, 0), lateness
    )


class Profilers:
    """py-spy attached to the services for one phase (``--py-spy``), writing collapsed stacks."""

    def __init__(self, binary: str | None, stack: BenchStack, tag: str) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.outputs: list[Path] = []
        if not binary:
            return
        for name, proc in stack.services.items():
            out = stack.workdir / f"profile-{name}-{tag}.txt"
            argv = [binary, "record", "--pid", str(proc.pid), "--rate", "250", "--nonblocking"]
            argv += ["--format", "raw", "--output", str(out)]
            with open(stack.workdir / f"py-spy-{name}-{tag}.log", "wb") as log:
                self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT))
            self.outputs.append(out)
        time.sleep(0.5)  # py-spy needs a moment to attach

    def stop(self) -> list[Path]:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
        for proc in self.procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return [p for p in self.outputs if p.exists()]


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

OURS = ("gateway", "recorder", "nats-server", "postgres", "bench client")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def cpu_seconds(a: CpuSample, b: CpuSample) -> dict[str, float]:
    """CPU seconds per component between two samples, plus everything else on the machine."""
    used = {name: b.groups[name] - a.groups.get(name, 0.0) for name in OURS}
    machine = b.machine_busy - a.machine_busy
    used["other processes, kernel"] = max(machine - sum(used.values()), 0.0)
    used["whole machine"] = machine
    return used


def latency_rows(batch: int, r: PhaseResult) -> list[tuple[str, str]]:
    cuts = (50, 90, 99, 99.9, 100)
    values = " / ".join(f"{percentile(r.latencies_ms, p):.1f}" for p in cuts)
    return [(f"latency p50 / p90 / p99 / p99.9 / max, {batch}-event batch (ms)", values)]


def report_closed(clients: int, batch: int, r: PhaseResult) -> str:
    accepted = r.events / r.accept_s
    recorded = r.events / r.record_s
    rows = [
        ("metric", "measured"),
        ("events/s accepted by the gateway (202)", f"{accepted:,.0f}"),
        ("events/s recorded end to end", f"{recorded:,.0f}"),
        *latency_rows(batch, r),
    ]
    out = [
        f"closed loop, {clients} client(s): each sends its next request as soon as the last is "
        f"answered (as fast as the gateway goes); gateway and recorder running together; "
        f"{r.events:,} events in {len(r.latencies_ms):,} requests",
        table(rows, (False, True)),
        f"  posting took {r.accept_s:.2f} s; the last event was recorded {r.record_s:.2f} s after "
        f"the first post; {r.backlog:,} events were still unrecorded when posting ended",
    ]
    if clients > 1:
        out.append(
            f"  {clients} clients in a closed loop keep {clients} requests in flight, so at "
            f"saturation latency ~= {clients} x {batch} / throughput = "
            f"{clients * batch / accepted * 1000:.0f} ms (Little's law): queueing, not the "
            "latency an agent sees at a normal rate (see the open-loop phase)"
        )
    else:
        out.append("  one request at a time, back to back: the service time of one batch")
    if r.retries:
        out.append(f"  503 answers retried: {r.retries}")
    out += ["", cpu_table(r)]
    return "\n".join(out)


def report_open(rate: float, batch: int, r: PhaseResult, capacity: float | None) -> str:
    sent = r.events / r.accept_s
    mean_ms = sum(r.latencies_ms) / len(r.latencies_ms)
    rows = [
        ("metric", "measured"),
        ("events/s offered (fixed schedule)", f"{rate:,.0f}"),
        ("events/s accepted by the gateway (202)", f"{sent:,.0f}"),
        ("events/s recorded end to end", f"{r.events / r.record_s:,.0f}"),
        *latency_rows(batch, r),
        ("requests in flight on average (Little's law)", f"{rate / batch * mean_ms / 1000:.2f}"),
        (
            "client's own lateness p50 / p99 / max (ms; counted in the latency)",
            " / ".join(f"{percentile(r.lateness_ms, p):.2f}" for p in (50, 99, 100)),
        ),
    ]
    share = f", {rate / capacity:.0%} of the capacity measured above" if capacity else ""
    out = [
        f"open loop at {rate:,.0f} events/s: a {batch}-event request every "
        f"{batch / rate * 1000:.1f} ms on a fixed schedule ({rate / batch:.0f} requests/s"
        f"{share}), each timed from its scheduled send time; gateway and recorder running "
        f"together; {r.events:,} events in {len(r.latencies_ms):,} requests",
        table(rows, (False, True)),
        f"  the last event was recorded {r.record_s - r.accept_s:.2f} s after the last 202",
    ]
    if r.retries:
        out.append(f"  503 answers retried: {r.retries}")
    out += ["", cpu_table(r)]
    return "\n".join(out)


@dataclass
class Verdicts:
    """The figures the targets are judged on, with the load each was measured under, and how
    many cores other work on the machine took meanwhile (a busy neighbour moves every figure)."""

    rows: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)

    def add(
        self, metric: str, load: str, r: PhaseResult, measured: str, target: str, ok: bool | None
    ) -> None:
        used = cpu_seconds(r.start, r.posted)
        other = used["other processes, kernel"] / max(r.accept_s, 1e-9)
        result = "" if ok is None else verdict(ok)
        self.rows.append((metric, load, measured, target, result, f"{other:.2f}"))

    def render(self) -> str:
        header = ("target", "load", "measured", "target", "result", "other work (cores)")
        return table([header, *self.rows], (False, False, True, True, False, True))


def cpu_table(r: PhaseResult) -> str:
    posting = cpu_seconds(r.start, r.posted)
    whole = cpu_seconds(r.start, r.recorded)
    rows = [("CPU by process", "cores while posting", "cores whole run", "CPU µs per event")]
    for name in whole:
        rows.append(
            (
                name,
                f"{posting[name] / max(r.accept_s, 1e-9):.2f}",
                f"{whole[name] / max(r.record_s, 1e-9):.2f}",
                f"{whole[name] / r.events * 1e6:.0f}",
            )
        )
    ours = sum(whole[name] for name in OURS if name != "bench client") / r.events
    cores = os.cpu_count() or 1
    return "\n".join(
        [
            table(rows, (False, True, True, True)),
            f"  the pipeline (gateway, recorder, nats-server, postgres) spends {ours * 1e6:.0f} µs "
            f"of CPU per event: at most ~{cores / ours:,.0f} events/s end to end on {cores} "
            "cores even if nothing else ran",
        ]
    )


def report_isolated(clients: int, batch: int, r: PhaseResult) -> str:
    p50, p95, p99 = (percentile(r.latencies_ms, p) for p in (50, 95, 99))
    gw = cpu_seconds(r.start, r.posted)
    rec = cpu_seconds(r.resumed, r.recorded)
    per_event = {name: f"{v / r.events * 1e6:.0f}" for name, v in rec.items()}
    rows = [
        ("stage alone", "events/s", "p50 ms", "p95 ms", "p99 ms", "CPU µs per event"),
        (
            "gateway (recorder paused)",
            f"{r.events / r.accept_s:,.0f}",
            f"{p50:.1f}",
            f"{p95:.1f}",
            f"{p99:.1f}",
            f"gateway {gw['gateway'] / r.events * 1e6:.0f}, nats-server "
            f"{gw['nats-server'] / r.events * 1e6:.0f}, client "
            f"{gw['bench client'] / r.events * 1e6:.0f}",
        ),
        (
            "recorder (draining the backlog)",
            f"{r.events / r.drain_s:,.0f}",
            "",
            "",
            "",
            f"recorder {per_event['recorder']}, postgres {per_event['postgres']}, "
            f"nats-server {per_event['nats-server']}",
        ),
    ]
    return "\n".join(
        [
            f"each stage alone: {clients} client(s) post {r.events:,} events while the recorder "
            "is frozen (SIGSTOP); then the recorder drains them with the gateway idle",
            table(rows, (False, True, True, True, True, False)),
            f"  gateway alone: {gw['gateway'] / r.accept_s:.2f} cores for the gateway, "
            f"{gw['whole machine'] / r.accept_s:.2f} cores busy on the machine; recorder alone: "
            f"{rec['recorder'] / r.drain_s:.2f} cores for the recorder, "
            f"{rec['whole machine'] / r.drain_s:.2f} busy on the machine",
            f"  on one dedicated core each (1 / CPU per event): gateway ~"
            f"{r.events / max(gw['gateway'], 1e-9):,.0f} events/s, recorder ~"
            f"{r.events / max(rec['recorder'], 1e-9):,.0f} events/s",
        ]
    )


def machine_info() -> str:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    cores = os.cpu_count() or 1
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    busy0, _ = _machine_busy()
    time.sleep(1.0)
    busy1, _ = _machine_busy()
    info = (
        f"machine: {cores} cores ({usable} usable), {model or platform.processor() or '?'}, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}; "
        f"{busy1 - busy0:.2f} cores already busy with other work before the run"
    )
    if busy1 - busy0 > 0.25 * cores:
        info += (
            "\nWARNING: other work is using the cores: the rates below will be low; the CPU µs "
            "per event columns are the figures that hold"
        )
    return info


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


async def bench(args: argparse.Namespace, stack: BenchStack) -> Verdicts:
    pg = stack.pg
    assert pg is not None and pg.pid is not None
    meter = CpuMeter(stack.pids(), pg.pid)
    run_id = f"b{int(time.time())}"
    phases: list[tuple[str, float]] = [("closed", c) for c in args.client_counts]
    phases += [("open", rate) for rate in args.latency_rates]
    if args.isolated:
        phases.append(("isolated", max(args.client_counts)))
    verdicts = Verdicts()
    throughput_clients = max(args.client_counts)
    capacity: float | None = None  # events/s accepted in the throughput phase
    latency_judged = False
    for n, (kind, param) in enumerate(phases):
        if kind == "open":
            requests = max(1, round(param * args.latency_seconds / args.batch))
            events = requests * args.batch
            warm_events = max(5, round(param / args.batch)) * args.batch  # about one second
            post = open_loop(param)
            tag = f"open-{param:.0f}eps"
        else:
            events, warm_events = args.events, args.warmup
            post = closed_loop(int(param))
            tag = f"{kind}-{int(param)}clients"
        warm, _ = make_batches(f"{run_id}w{n}", warm_events, args.batch, args.text_bytes, n)
        bodies, text_total = make_batches(
            f"{run_id}m{n}", events, args.batch, args.text_bytes, 1000 + n
        )
        if warm and kind != "isolated":  # fresh client connections: warm them up first
            await run_phase(stack, meter, warm, post)  # excluded from the figures
        profilers = Profilers(args.py_spy, stack, tag)
        try:
            result = await run_phase(stack, meter, bodies, post, pause_recorder=kind == "isolated")
        finally:
            profiles = profilers.stop()
        print()
        p99 = percentile(result.latencies_ms, 99)
        if kind == "closed":
            clients = int(param)
            print(report_closed(clients, args.batch, result))
            load = f"closed loop, {clients} client{'s' if clients > 1 else ''}"
            if clients == throughput_clients and capacity is None:
                capacity = result.events / result.accept_s
                recorded = result.events / result.record_s
                verdicts.add(
                    "events/s accepted by the gateway (202)",
                    load + " (as fast as it answers)",
                    result,
                    f"{capacity:,.0f}",
                    f">= {TARGET_ACCEPTED:,.0f}",
                    capacity >= TARGET_ACCEPTED,
                )
                verdicts.add(
                    "events/s recorded end to end",
                    load,
                    result,
                    f"{recorded:,.0f}",
                    f">= {TARGET_RECORDED:,.0f}",
                    recorded >= TARGET_RECORDED,
                )
            verdicts.add(
                f"p99 per {args.batch}-event batch (ms)", load, result, f"{p99:.1f}", "", None
            )
        elif kind == "open":
            print(report_open(param, args.batch, result, capacity))
            load = f"open loop, {param:,.0f} events/s ({param / args.batch:.0f} requests/s)"
            judged = not latency_judged
            latency_judged = True
            verdicts.add(
                f"p99 per {args.batch}-event batch (ms)",
                load,
                result,
                f"{p99:.1f}",
                f"< {TARGET_P99_MS:.0f}" if judged else "",
                p99 < TARGET_P99_MS if judged else None,
            )
        else:
            print(report_isolated(int(param), args.batch, result))
        for path in profiles:
            print(f"  py-spy profile (collapsed stacks): {path}")
        if n == 0:
            body_kib = sum(len(b) for _, b in bodies) / len(bodies) / 1024
            print(
                f"  (texts average {text_total / events:.0f} bytes, request bodies "
                f"{body_kib:.1f} KiB; built before the clock starts)"
            )
        sys.stdout.flush()
    return verdicts


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument(
        "--events", type=int, default=50_000, help="measured events per closed-loop configuration"
    )
    p.add_argument("--batch", type=int, default=100, help="events per request")
    p.add_argument(
        "--clients",
        default="4,1",
        help="closed-loop clients; a comma-separated list measures each in turn (the most "
        "clients give the throughput figures)",
    )
    p.add_argument("--text-bytes", type=int, default=300, help="size of each event's text")
    p.add_argument(
        "--warmup",
        type=int,
        default=5_000,
        help="events posted first in each closed-loop configuration, excluded from figures "
        "(open loop: about one second's worth)",
    )
    p.add_argument(
        "--latency-rates",
        default="5000,1000",
        help="open-loop phases, events/s offered on a fixed schedule (comma-separated; the p99 "
        "target is judged on the first; empty for none)",
    )
    p.add_argument(
        "--latency-seconds", type=float, default=20.0, help="length of each open-loop phase"
    )
    p.add_argument(
        "--no-isolated",
        dest="isolated",
        action="store_false",
        help="skip the last configuration, which measures the gateway and the recorder each alone",
    )
    p.add_argument("--keep", action="store_true", help="keep the work folder (logs, data)")
    p.add_argument(
        "--py-spy",
        metavar="PATH",
        help="py-spy executable: profile the gateway and the recorder during each measured phase "
        "(implies --keep; the collapsed stacks are written to the work folder)",
    )
    args = p.parse_args(argv)
    for name in ("events", "batch", "text_bytes"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.warmup < 0:
        p.error("--warmup must be 0 or more")
    try:
        args.client_counts = [int(c) for c in str(args.clients).split(",") if c.strip()]
    except ValueError:
        p.error("--clients: expected integers such as 4 or 4,1")
    if not args.client_counts or min(args.client_counts) < 1:
        p.error("--clients: every count must be at least 1")
    try:
        args.latency_rates = [float(r) for r in str(args.latency_rates).split(",") if r.strip()]
    except ValueError:
        p.error("--latency-rates: expected events/s such as 5000 or 5000,1000")
    if any(r <= 0 for r in args.latency_rates):
        p.error("--latency-rates: every rate must be above 0")
    if args.latency_seconds <= 0:
        p.error("--latency-seconds must be above 0")
    if args.py_spy:
        args.keep = True
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    stop_on_sigterm()
    configure_logging("bench", "WARNING", json=False)
    print("agent-memory ingest benchmark")
    print(machine_info())
    rates = ", ".join(f"{r:,.0f}" for r in args.latency_rates) or "none"
    print(
        f"run: closed loop with {', '.join(map(str, args.client_counts))} client(s), "
        f"{args.events:,} events each (+{args.warmup:,} warm-up, not counted); open loop at "
        f"{rates} events/s for {args.latency_seconds:g} s each; {args.batch} events per request, "
        f"~{args.text_bytes}-byte texts; Postgres with product settings (fsync on); gateway, "
        "recorder, nats-server, Postgres and this client share the cores"
    )
    sys.stdout.flush()
    workdir = Path(tempfile.mkdtemp(prefix="agent-memory-bench-"))
    stack = BenchStack(workdir)
    keep_logs = True  # after a failure, for its post-mortem
    try:
        t = time.perf_counter()
        stack.start()
        print(f"stack started in {time.perf_counter() - t:.1f} s (work folder {workdir})")
        verdicts = uvloop.run(bench(args, stack))  # the services run on uvloop too
        keep_logs = False
        print()
        print("summary: throughput is judged at saturation (closed loop, most clients), the p99")
        print("at a stated rate (the first open-loop phase); the other rows are for reference")
        print(verdicts.render())
        print(stack.priorities())
        print(f"load average at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
        print("(a measurement: the exit code is 0 whatever the figures)")
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
