"""Chaos: post events while ``kill -9`` hits random services, nats-server and Postgres.

``make chaos`` (``python -m tests.chaos``) runs the full variant; ``tests/test_chaos.py`` runs a
short one inside ``make test``. One run:

1. starts ``agent-memory up`` (the supervisor, exactly as a user starts it) on a fresh home and
   free ports, with the segmenter's idle flush shortened so that every segment closes soon;
2. posts a seeded, deterministic set of events, each with an explicit ``event_id``, from a few
   client threads; a client retries a batch whose answer was lost or refused (the gateway is
   idempotent by event id) and counts an id as accepted only on a ``202``;
3. meanwhile a seeded schedule ``kill -9``s one target at a time (every pipeline service,
   nats-server, Postgres) and waits for the supervisor to bring it back, while the retention
   pruner runs every few seconds (the events are a day old, well within retention);
4. waits (bounded) for the pipeline to drain and every segment to close, then audits Postgres,
   pgvector, Tantivy and the dead-letter stream:

   - every accepted id is stored exactly once in ``events``;
   - every stored event is the own event of exactly one segment;
   - every closed segment has its TOC node at (at least) its version;
   - every stored event (but a session marker) is indexed exactly once in pgvector and in
     Tantivy (and every non-empty segment node is indexed too);
   - the dead-letter stream is empty;
   - the retention pruner ran, and removed nothing.

The figures are printed (and written to ``<workdir>/chaos.json``); the exit code is non-zero
when anything was lost, doubled, left unindexed or dead-lettered, or when a target did not come
back.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import nats
import nats.js.errors
import orjson
import psutil
import psycopg

from agent_memory_common.contracts.subjects import STREAM_DLQ
from agent_memory_common.core.credentials import load_credentials
from agent_memory_embedded.servers import free_port, port_open
from tests import plain_http
from tests.helpers import tantivy_folder_ids

TENANT = "default"  # local mode: no tokens, every request is the default tenant's
PROJECT = "chaos"
GAP_MS = 2 * 3600 * 1000  # above the segmenter's 30 min gap: closes a segment

# target -> how to recognise its process among the supervisor's children
SERVICE_MODULES = {
    "recorder": "agent_memory_recorder",
    "segmenter": "agent_memory_segmenter",
    "summarizer": "agent_memory_summarizer",
    "embedder": "agent_memory_embedder",
    "bm25-indexer": "agent_memory_bm25",
    "gateway": "agent_memory_gateway",
    "query": "agent_memory_query",
}
TARGETS: tuple[str, ...] = (*SERVICE_MODULES, "nats-server", "postgres")
MIN_UP_S = 4.0  # a target is killed again only after it has been ready this long

_VOCABULARY = """
schema migration index segment summary vector tantivy postgres nats gateway recorder retry
idempotent duplicate window crash restart backlog consumer deadline review branch commit test
flaky latency budget token cache decision agreed rollback deploy alert
"""
WORDS = tuple(_VOCABULARY.split())


@dataclass(frozen=True)
class Plan:
    """What one run does; everything random in it follows ``seed``."""

    seed: int = 1
    events: int = 1_000
    sessions: int = 24
    clients: int = 3
    max_batch: int = 40
    gap_every: int = 50  # events of a session between two event-time gaps
    duration_s: float = 300.0  # the chaos phase; posting ends at ``post_share`` of it
    post_share: float = 0.85
    kills: int = 27  # three rounds: each target three times
    warmup_s: float = 5.0  # no kill before this much of the chaos phase has passed
    restart_timeout_s: float = 180.0
    drain_timeout_s: float = 480.0
    idle_flush_s: float = 5.0
    targets: tuple[str, ...] = TARGETS
    pruner_every_s: float = 10.0  # the retention pruner runs this often during the run


@dataclass
class Figures:
    seed: int = 0
    posted: int = 0
    accepted: int = 0
    never_accepted: int = 0
    retries: int = 0
    stored: int = 0
    stored_total: int = 0
    duplicated: int = 0
    lost: int = 0
    segments: int = 0
    open_segments: int = 0
    events_without_segment: int = 0
    events_in_several_segments: int = 0
    unsummarised: int = 0
    vector_unindexed: int = 0
    vector_duplicated: int = 0
    bm25_unindexed: int = 0
    bm25_duplicated: int = 0
    vector_nodes_unindexed: int = 0
    bm25_nodes_unindexed: int = 0
    dlq: int = 0
    kills: dict[str, int] = field(default_factory=dict)
    not_restarted: list[str] = field(default_factory=list)
    recovery_s: dict[str, float] = field(default_factory=dict)  # longest kill -> ready again
    supervisor_restarts: int = 0
    pruner_runs: int = 0  # scheduled retention runs that finished during the run
    pruned: int = 0  # entries they removed (none: every event of a run is within retention)
    drained: bool = False
    startup_s: float = 0.0
    chaos_s: float = 0.0
    drain_s: float = 0.0
    wall_s: float = 0.0

    def failures(self) -> list[str]:
        bad = {
            "never accepted": self.never_accepted,
            "lost": self.lost,
            "duplicated": self.duplicated,
            "open segments": self.open_segments,
            "events without a segment": self.events_without_segment,
            "events in several segments": self.events_in_several_segments,
            "unsummarised segments": self.unsummarised,
            "unindexed in pgvector": self.vector_unindexed,
            "doubled in pgvector": self.vector_duplicated,
            "unindexed in Tantivy": self.bm25_unindexed,
            "doubled in Tantivy": self.bm25_duplicated,
            "segment nodes unindexed in pgvector": self.vector_nodes_unindexed,
            "segment nodes unindexed in Tantivy": self.bm25_nodes_unindexed,
            "dead-lettered": self.dlq,
            "targets not restarted": len(self.not_restarted),
            "entries removed by the retention pruner": self.pruned,
        }
        out = [f"{what}: {n}" for what, n in bad.items() if n]
        if not self.drained:
            out.append("the pipeline did not drain in time")
        if self.accepted == 0:
            out.append("nothing was accepted")
        if self.pruner_runs == 0:
            out.append("the retention pruner never ran")
        return out

    def report(self) -> str:
        kills = ", ".join(f"{k} {v}" for k, v in sorted(self.kills.items())) or "none"
        recovery = ", ".join(f"{k} {v:.0f}" for k, v in sorted(self.recovery_s.items())) or "-"
        rows = [
            ("seed", self.seed),
            ("posted", self.posted),
            ("accepted (202)", self.accepted),
            ("never accepted", self.never_accepted),
            ("client retries", self.retries),
            ("stored (accepted ids)", self.stored),
            ("stored (all rows)", self.stored_total),
            ("duplicated", self.duplicated),
            ("lost", self.lost),
            ("segments", self.segments),
            ("open segments", self.open_segments),
            ("events without segment", self.events_without_segment),
            ("events in >1 segment", self.events_in_several_segments),
            ("unsummarised segments", self.unsummarised),
            ("unindexed: pgvector", self.vector_unindexed),
            ("unindexed: Tantivy", self.bm25_unindexed),
            ("doubled: pgvector / Tantivy", f"{self.vector_duplicated} / {self.bm25_duplicated}"),
            (
                "segment nodes unindexed: pgvector / Tantivy",
                f"{self.vector_nodes_unindexed} / {self.bm25_nodes_unindexed}",
            ),
            ("dead letters", self.dlq),
            ("kills", f"{sum(self.kills.values())} ({kills})"),
            ("restarts seen by the supervisor", self.supervisor_restarts),
            ("retention pruner: runs / entries removed", f"{self.pruner_runs} / {self.pruned}"),
            ("longest kill -> ready again (s)", recovery),
            ("not restarted", ", ".join(self.not_restarted) or "none"),
            ("drained", self.drained),
            (
                "wall time",
                f"{self.wall_s:.0f} s (startup {self.startup_s:.0f}, chaos {self.chaos_s:.0f}, "
                f"drain {self.drain_s:.0f})",
            ),
        ]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"  {k:<{width}}  {v}" for k, v in rows)


# --------------------------------------------------------------------------------------------
# The events: deterministic from the seed
# --------------------------------------------------------------------------------------------


Batch = list[dict[str, Any]]


def recent_base_ts_ms() -> int:
    """Where the events' time starts: a day before the start of the current hour (UTC).

    The events must be recent, because the retention pruner runs during the run and drops the
    index documents of events older than their retention (30 days by default, by event time):
    with a fixed date in the past, every document it found was gone from both indexes (seen in
    CI, whenever the pruner's first run came before the audit). A day back leaves room for
    every session's event-time gaps without reaching the future.
    """
    hour = 3_600_000
    return (int(time.time() * 1000) // hour) * hour - 24 * hour


def make_events(plan: Plan) -> list[list[Batch]]:
    """One list of batches per client; every event has its id, session and time from the seed
    (time counted from ``recent_base_ts_ms()``).

    Sessions are dealt to clients, so a session's events come from one client in time order
    (as from one agent); every ``gap_every`` events the event time jumps, which cuts a segment,
    and every other session ends with a ``session_end`` event.
    """
    rng = random.Random(f"events-{plan.seed}")
    base = recent_base_ts_ms()
    per_session: list[list[dict[str, Any]]] = [[] for _ in range(plan.sessions)]
    for i in range(plan.events):
        per_session[i % plan.sessions].append({})
    n = 0
    for s, events in enumerate(per_session):
        ts = base + s * 60_000
        for k in range(len(events)):
            if k and k % plan.gap_every == 0:
                ts += GAP_MS
            ts += 1000
            last = k == len(events) - 1
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))
            events[k] = {
                "event_id": f"chaos-{plan.seed}-{n:06d}",
                "ts": ts,
                "project_id": PROJECT,
                "agent_id": f"agent-{s % plan.clients}",
                "session_id": f"s{plan.seed}-{s:03d}",
                "role": "user" if k % 2 == 0 else "assistant",
                "type": "session_end" if last and s % 2 == 0 else "message",
                "text": f"turn {k} of session {s}: {text}",
            }
            n += 1
    out: list[list[Batch]] = []
    for c in range(plan.clients):
        queues = [list(per_session[s]) for s in range(c, plan.sessions, plan.clients)]
        mine: list[Batch] = []
        while any(queues):
            q = rng.choice([q for q in queues if q])
            take = rng.randint(1, plan.max_batch)
            mine.append(q[:take])
            del q[:take]
        out.append(mine)
    return out


# --------------------------------------------------------------------------------------------
# The product: `agent-memory up`
# --------------------------------------------------------------------------------------------


class Up:
    """``agent-memory up`` on its own home and ports; the supervisor restarts what dies."""

    def __init__(self, workdir: Path, plan: Plan) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.home = workdir / "home"
        self.out_path = workdir / "agent-memory-up.log"
        ports = {
            name: free_port() for name in ("nats", "pg", "gateway", "query", "pruner", "dashboard")
        }
        self.gateway_url = f"http://127.0.0.1:{ports['gateway']}"
        self.query_url = f"http://127.0.0.1:{ports['query']}"
        self.ports = ports
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("AGENT_MEMORY_") or k == "AGENT_MEMORY_LOG_LEVEL"
        }
        self.env.update(
            {
                "AGENT_MEMORY_HOME": str(self.home),
                "AGENT_MEMORY_EMBEDDED__NATS_PORT": str(ports["nats"]),
                "AGENT_MEMORY_EMBEDDED__PG_PORT": str(ports["pg"]),
                "AGENT_MEMORY_GATEWAY__PORT": str(ports["gateway"]),
                "AGENT_MEMORY_QUERY__PORT": str(ports["query"]),
                "AGENT_MEMORY_PRUNER__PORT": str(ports["pruner"]),
                "AGENT_MEMORY_DASHBOARD__PORT": str(ports["dashboard"]),
                # the consumers' probe ports: a free one each (logged), not the fixed defaults
                "AGENT_MEMORY_METRICS__PORT": "0",
                "AGENT_MEMORY_LOG_JSON": "true",
                # the retention pruner runs all along (it writes both indexes too): it must
                # remove nothing that is within retention, whatever else is killed
                "AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S": str(plan.pruner_every_s),
                "AGENT_MEMORY_PRUNER__INTERVAL_S": str(plan.pruner_every_s),
                # sessions stop when the run stops posting: close their open segments soon
                "AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S": str(plan.idle_flush_s),
                "AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S": "1",
                # nothing here searches by vector: the query service needs no sentence model
                "AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER": "false",
                # on a machine shared with other jobs, the consumers at niceness 5 (the default)
                # get so little CPU that the embedder takes minutes to reload its model after a
                # kill; what is under test here is recovery, not scheduling
                "AGENT_MEMORY_BACKGROUND_NICE": "0",
            }
        )
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pg_dsn(self) -> str:
        """As the services connect: the role and the password that ``agent-memory up``
        generated in the home at its first start (core/credentials.py)."""
        creds = load_credentials(self.home)
        login = f"{creds.pg_user}:{creds.pg_password}" if creds else "postgres"
        return f"postgresql://{login}@127.0.0.1:{self.ports['pg']}/agent_memory"

    @property
    def nats_url(self) -> str:
        creds = load_credentials(self.home)
        login = f"{creds.nats_user}:{creds.nats_password}@" if creds else ""
        return f"nats://{login}127.0.0.1:{self.ports['nats']}"

    def start(self, timeout: float = 180.0) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.out_path, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "agent_memory_cli", "up"],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"agent-memory up exited; see {self.out_path}")
            # every service started (the supervisor restarts nothing before): posting and
            # kills start together
            if self.running() and _http_ok(self.gateway_url + "/readyz"):
                return
            time.sleep(0.5)
        raise RuntimeError(f"the stack did not become ready; see {self.out_path}")

    def running(self) -> bool:
        """The supervisor has started everything and watches (restarts) its children now."""
        return "agent-memory is running" in self.output()

    def output(self) -> str:
        return self.out_path.read_text(errors="replace") if self.out_path.exists() else ""

    def pid_of(self, target: str) -> int | None:
        """The live process of ``target`` among the supervisor's children, if any."""
        if self.proc is None:
            return None
        try:
            children = psutil.Process(self.proc.pid).children()
        except psutil.NoSuchProcess:
            return None
        for child in children:
            try:
                argv = child.cmdline()
                if child.status() == psutil.STATUS_ZOMBIE:
                    continue
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                continue
            if _is_target(argv, target):
                return int(child.pid)
        return None

    def stop(self) -> None:
        if self.proc is None:
            return
        procs: list[psutil.Process] = []
        with contextlib.suppress(psutil.NoSuchProcess):
            procs = psutil.Process(self.proc.pid).children(recursive=True)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        _, alive = psutil.wait_procs(procs, timeout=10)
        for p in alive:  # nothing of the run may outlive it
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()


def _is_target(argv: Sequence[str], target: str) -> bool:
    if target == "nats-server":
        return bool(argv) and Path(argv[0]).name == "nats-server"
    if target == "postgres":
        return bool(argv) and Path(argv[0]).name == "postgres" and "-D" in argv
    module = SERVICE_MODULES[target]
    return any(a == "-m" and b == module for a, b in itertools.pairwise(argv))


def _http_ok(url: str) -> bool:
    try:
        return plain_http.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _pg_ok(dsn: str) -> bool:
    try:
        with psycopg.connect(dsn, connect_timeout=2) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


# --------------------------------------------------------------------------------------------
# The clients and the killer
# --------------------------------------------------------------------------------------------


class Client(threading.Thread):
    """Posts its batches on a schedule; a batch is retried until a 202 or ``give_up_s``."""

    def __init__(self, url: str, batches: list[Batch], start: float, post_s: float) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.batches = batches
        self.start_at = start
        self.post_s = post_s
        self.give_up_s = 180.0
        self.accepted: list[str] = []
        self.never_accepted: list[str] = []
        self.retries = 0
        self.error: str | None = None

    def run(self) -> None:
        try:
            with httpx.Client(base_url=self.url, timeout=15) as client:
                for n, batch in enumerate(self.batches):
                    due = self.start_at + self.post_s * n / max(len(self.batches), 1)
                    time.sleep(max(0.0, due - time.monotonic()))
                    self._post(client, batch)
        except Exception as exc:  # reported, so that a broken client fails the run
            self.error = repr(exc)

    def _post(self, client: httpx.Client, batch: Batch) -> None:
        ids = [e["event_id"] for e in batch]
        deadline = time.monotonic() + self.give_up_s
        delay = 0.1
        while True:
            try:
                r = client.post("/v1/events", json={"events": batch})
            except httpx.TransportError:
                r = None  # refused, reset or timed out: the answer is lost, send it again
            if r is not None and r.status_code == 202:
                if r.json()["event_ids"] != ids:
                    raise AssertionError(f"202 with other ids: {r.text[:200]}")
                self.accepted.extend(ids)
                return
            if r is not None and r.status_code not in (429, 500, 502, 503, 504):
                raise AssertionError(f"gateway refused a batch: {r.status_code} {r.text[:300]}")
            if time.monotonic() > deadline:
                self.never_accepted.extend(ids)
                return
            self.retries += 1
            time.sleep(delay)
            delay = min(delay * 2, 2.0)


def kill_schedule(plan: Plan, targets: Sequence[str]) -> list[tuple[float, str]]:
    """(offset into the chaos phase, target): each target once per round, in seeded order."""
    rng = random.Random(f"kills-{plan.seed}")
    order: list[str] = []
    while len(order) < plan.kills:
        round_ = list(targets)
        rng.shuffle(round_)
        order += round_
    span = max(plan.duration_s - plan.warmup_s, 1.0) / max(plan.kills, 1)
    return [
        (plan.warmup_s + i * span + rng.uniform(0, span * 0.6), t)
        for i, t in enumerate(order[: plan.kills])
    ]


class Killer(threading.Thread):
    """``kill -9`` by schedule; the supervisor brings each target back.

    Kills follow the schedule, not the recoveries: a target may be killed while another is
    still coming back (Postgres while NATS restarts...). A target is only killed once it is
    ready again itself, so that every kill lands on a working process, not on one still
    loading (the embedder takes most of a minute to import torch on a busy machine).
    """

    def __init__(self, up: Up, schedule: list[tuple[float, str]], start: float, plan: Plan):
        super().__init__(daemon=True)
        self.up = up
        self.schedule = schedule
        self.start_at = start
        self.plan = plan
        self.kills: Counter[str] = Counter()
        self.not_restarted: list[str] = []
        self.recovery_s: dict[str, float] = {}  # longest kill -> ready again, per target
        self.pending: dict[str, float] = {}  # killed, not ready yet: since when
        self.ready_since: dict[str, float] = {}  # seen ready (again): since when

    def run(self) -> None:
        for offset, target in self.schedule:
            while time.monotonic() < self.start_at + offset:
                self._poll()
                time.sleep(0.2)
            if not self._wait(partial(self._ready_again, target)):
                self.not_restarted.append(target)
                print(f"  {target} did not come back", flush=True)
                return
            pid = self.up.pid_of(target)
            if pid is None:
                self.not_restarted.append(f"{target} (not running)")
                return
            self._kill(pid, target)
            self.kills[target] += 1
            self.ready_since.pop(target, None)
            self.pending[target] = time.monotonic()
            t = self.pending[target] - self.start_at
            print(f"  [{t:6.1f}s] kill -9 {target} (pid {pid})", flush=True)
        if not self._wait(lambda: not self.pending):
            self.not_restarted += sorted(self.pending)

    def _ready_again(self, target: str) -> bool:
        """Ready, and for ``MIN_UP_S`` already: an overdue kill still lands on a process that
        has started working, not on one that has just connected."""
        if target in self.pending or not self._ready_now(target):
            return False
        since = self.ready_since.setdefault(target, time.monotonic())
        return time.monotonic() - since >= MIN_UP_S

    def _wait(self, done: Callable[[], bool]) -> bool:
        deadline = time.monotonic() + self.plan.restart_timeout_s
        while time.monotonic() < deadline:
            self._poll()
            if done():
                return True
            time.sleep(0.2)
        return False

    def _poll(self) -> None:
        """Note the targets that are back."""
        for target, killed_at in list(self.pending.items()):
            if self._ready_now(target):
                took = round(time.monotonic() - killed_at, 1)
                self.recovery_s[target] = max(self.recovery_s.get(target, 0.0), took)
                self.ready_since[target] = time.monotonic()
                del self.pending[target]

    def _kill(self, pid: int, target: str) -> None:
        others: list[int] = []
        if target == "postgres":
            # the whole server at once, postmaster and every backend (each backend leads a
            # process group of its own, so ``kill -9 -<pgid>`` would reach the postmaster only)
            with contextlib.suppress(psutil.NoSuchProcess):
                others = [p.pid for p in psutil.Process(pid).children(recursive=True)]
        for victim in (pid, *others):
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, signal.SIGKILL)

    def _ready_now(self, target: str) -> bool:
        """Running (restarted, if it was killed) and serving or consuming."""
        if self.up.pid_of(target) is None:
            return False
        if target == "postgres":
            return _pg_ok(self.up.pg_dsn)
        if target == "nats-server":
            return port_open("127.0.0.1", int(self.up.nats_url.rsplit(":", 1)[1]))
        if target in ("gateway", "query"):
            url = self.up.gateway_url if target == "gateway" else self.up.query_url
            return _http_ok(url + "/readyz")
        # a consumer service logs "<name>.ready" once per start, when Postgres and NATS are
        # reached and its consumers exist: one start, plus one restart per kill
        log = self.up.home / "logs" / f"{target}.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        return text.count(f'"{target}.ready"') >= self.kills[target] + 1


# --------------------------------------------------------------------------------------------
# Drain and audit
# --------------------------------------------------------------------------------------------


def _status(query_url: str) -> dict[str, Any]:
    try:
        r = plain_http.get(f"{query_url}/v1/status", timeout=10)
        return dict(r.json()) if r.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return {}


def wait_drained(up: Up, accepted: set[str], timeout: float) -> bool:
    """Every accepted event stored, every consumer caught up, no segment open, and the audit
    clean; polled until then or ``timeout`` (the caller audits once more either way)."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        st = _status(up.query_url)
        drained = bool(st.get("drained")) and int(st.get("events_stored") or 0) >= len(accepted)
        if drained:
            figures = audit(up, accepted)
            if not figures.failures():
                return True
            line = "; ".join(figures.failures())
        else:
            backlog = {
                c["name"]: c.get("pending", 0) + c.get("ack_pending", 0)
                for c in st.get("consumers", [])
                if c.get("pending") or c.get("ack_pending")
            }
            line = f"stored {st.get('events_stored')}, backlog {backlog}"
        if line != last:
            print(f"  waiting: {line}", flush=True)
            last = line
        time.sleep(2)
    return False


def audit(up: Up, accepted: set[str]) -> Figures:
    f = Figures(accepted=len(accepted), drained=True)
    with psycopg.connect(up.pg_dsn, connect_timeout=10) as conn:
        rows = conn.execute(
            "SELECT event_id, count(*) FROM events WHERE tenant = %s GROUP BY event_id",
            (TENANT,),
        ).fetchall()
        stored = {str(r[0]): int(r[1]) for r in rows}
        f.stored_total = sum(stored.values())
        f.stored = sum(1 for e in accepted if e in stored)
        f.lost = len(accepted) - f.stored
        f.duplicated = sum(1 for n in stored.values() if n > 1)

        seg = conn.execute(
            "SELECT count(*) FILTER (WHERE status <> 'retracted'),"
            " count(*) FILTER (WHERE status = 'open') FROM segments WHERE tenant = %s",
            (TENANT,),
        ).fetchone()
        assert seg is not None
        f.segments, f.open_segments = int(seg[0]), int(seg[1])
        own = Counter(
            str(r[0])
            for r in conn.execute(
                "SELECT unnest(event_ids[overlap_count + 1:]) FROM segments"
                " WHERE tenant = %s AND status <> 'retracted'",
                (TENANT,),
            )
        )
        f.events_without_segment = sum(1 for e in stored if own[e] == 0)
        f.events_in_several_segments = sum(1 for e in stored if own[e] > 1)
        row = conn.execute(
            "SELECT count(*) FROM segments s LEFT JOIN toc_nodes n"
            " ON n.tenant = s.tenant AND n.node_id = 'segment:' || s.segment_id"
            " WHERE s.tenant = %s AND s.status = 'closed'"
            " AND (n.node_id IS NULL OR coalesce(n.source_version, 0) < s.version)",
            (TENANT,),
        ).fetchone()
        assert row is not None
        f.unsummarised = int(row[0])
        nodes = {
            f"node:{TENANT}:{r[0]}"
            for r in conn.execute(
                "SELECT node_id FROM toc_nodes WHERE tenant = %s AND level = 'segment'"
                " AND NOT is_empty",
                (TENANT,),
            )
        }
        markers = {  # session markers get no index documents (``sources.indexed``)
            str(r[0])
            for r in conn.execute(
                "SELECT event_id FROM events WHERE tenant = %s"
                " AND type IN ('session_start', 'session_end')",
                (TENANT,),
            )
        }
        vectors = Counter(
            str(r[0])
            for r in conn.execute(
                "SELECT id FROM vector_docs WHERE tenant = %s AND type IN ('event', 'toc_node')",
                (TENANT,),
            )
        )
    wanted = {f"event:{TENANT}:{e}" for e in stored if e not in markers}
    f.vector_unindexed = sum(1 for d in wanted if vectors[d] == 0)
    f.vector_duplicated = sum(1 for d in wanted if vectors[d] > 1)
    f.vector_nodes_unindexed = sum(1 for d in nodes if vectors[d] == 0)
    bm25 = tantivy_ids(up.home / "tantivy")
    f.bm25_unindexed = sum(1 for d in wanted if bm25[d] == 0)
    f.bm25_duplicated = sum(1 for d in wanted if bm25[d] > 1)
    f.bm25_nodes_unindexed = sum(1 for d in nodes if bm25[d] == 0)
    f.dlq = dead_letters(up.nats_url)
    f.pruner_runs, f.pruned = pruner_runs(up.home / "logs" / "pruner.log")
    return f


def tantivy_ids(root: Path) -> Counter[str]:
    """How many live documents carry each id, in every Tantivy folder under ``root``."""
    ids: Counter[str] = Counter()
    for meta in sorted(root.glob("*/meta.json")):
        ids.update(tantivy_folder_ids(meta.parent))
    return ids


def pruner_runs(log: Path) -> tuple[int, int]:
    """(runs, entries removed) of the retention pruner, from its JSON log."""
    runs = removed = 0
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    for line in lines:
        if '"pruner.cleanup"' not in line:
            continue
        with contextlib.suppress(orjson.JSONDecodeError):
            record = orjson.loads(line)
            if record.get("event") == "pruner.cleanup" and not record.get("dry_run"):
                runs += 1
                removed += int(record.get("entries") or 0)
    return runs, removed


def dead_letters(nats_url: str) -> int:
    async def count() -> int:
        nc = await nats.connect(nats_url, connect_timeout=5, max_reconnect_attempts=3)
        try:
            info = await nc.jetstream().stream_info(STREAM_DLQ)
            return int(info.state.messages)
        except nats.js.errors.NotFoundError:
            return 0
        finally:
            await nc.close()

    return asyncio.run(count())


# --------------------------------------------------------------------------------------------
# One run
# --------------------------------------------------------------------------------------------


def run(plan: Plan, workdir: Path) -> Figures:
    t0 = time.monotonic()
    batches = make_events(plan)
    posted = sum(len(b) for c in batches for b in c)
    up = Up(workdir, plan)
    print(f"chaos: seed {plan.seed}, {posted} events, {plan.kills} kills; in {workdir}", flush=True)
    try:
        try:
            up.start()
        except RuntimeError as exc:
            # not what is under test, and seen once on a crowded machine (initdb failed): one
            # more try on a fresh home, with the first one's output kept for a look
            print(f"  {exc}; starting once more", flush=True)
            up.stop()
            up = Up(workdir / "second-start", plan)
            up.start()
        startup_s = time.monotonic() - t0
        start = time.monotonic() + 0.5
        post_s = plan.duration_s * plan.post_share
        clients = [Client(up.gateway_url, b, start, post_s) for b in batches]
        killer = Killer(up, kill_schedule(plan, plan.targets), start, plan)
        for thread in (*clients, killer):
            thread.start()
        for c in clients:
            c.join()
        killer.join()  # every wait in it is bounded
        chaos_s = time.monotonic() - start
        for c in clients:
            if c.error:
                raise RuntimeError(f"a client failed: {c.error}")
        accepted = {e for c in clients for e in c.accepted}
        print(f"  posting done: {len(accepted)} of {posted} accepted; draining...", flush=True)
        t_drain = time.monotonic()
        drained = wait_drained(up, accepted, plan.drain_timeout_s) if accepted else False
        drain_s = time.monotonic() - t_drain
        figures = audit(up, accepted)
        figures.drained = drained
        figures.seed = plan.seed
        figures.posted = posted
        figures.never_accepted = sum(len(c.never_accepted) for c in clients)
        figures.retries = sum(c.retries for c in clients)
        figures.kills = dict(killer.kills)
        figures.not_restarted = killer.not_restarted
        figures.recovery_s = killer.recovery_s
        figures.supervisor_restarts = up.output().count("; restarting in")
        figures.startup_s, figures.chaos_s, figures.drain_s = startup_s, chaos_s, drain_s
    finally:
        up.stop()
    figures.wall_s = time.monotonic() - t0
    (workdir / "chaos.json").write_text(json.dumps(asdict(figures), indent=2))
    return figures


# The variant `make test` runs: every kind of target once, except the two that take most of a
# minute to come back on a busy two-core machine (the embedder loads its sentence model, the
# query service imports the most); the full run kills those too.
SHORT = Plan(
    events=300,
    sessions=6,
    clients=2,
    max_batch=20,
    gap_every=40,
    duration_s=30.0,
    kills=7,
    warmup_s=3.0,
    restart_timeout_s=90.0,
    drain_timeout_s=150.0,
    idle_flush_s=3.0,
    targets=tuple(t for t in TARGETS if t not in ("embedder", "query")),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos", description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--short", action="store_true", help="the variant `make test` runs")
    parser.add_argument("--events", type=int)
    parser.add_argument("--kills", type=int)
    parser.add_argument("--duration", type=float, help="seconds of the chaos phase")
    parser.add_argument("--targets", help=f"comma-separated subset of {','.join(TARGETS)}")
    parser.add_argument("--workdir", type=Path, help="default: a new folder under /tmp")
    args = parser.parse_args(argv)
    plan = SHORT if args.short else Plan()
    over: dict[str, Any] = {"seed": args.seed}
    if args.events is not None:
        over["events"] = args.events
    if args.kills is not None:
        over["kills"] = args.kills
    if args.duration is not None:
        over["duration_s"] = args.duration
    plan = Plan(**{**asdict(plan), **over})
    if args.targets:
        over["targets"] = tuple(args.targets.split(","))
        unknown = set(over["targets"]) - set(TARGETS)
        if unknown:
            parser.error(f"unknown targets: {', '.join(sorted(unknown))}")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="agent-memory-chaos-"))
    workdir.mkdir(parents=True, exist_ok=True)
    figures = run(plan, workdir)
    print(figures.report())
    failures = figures.failures()
    if failures:
        print(f"chaos: FAILED ({'; '.join(failures)}); logs in {workdir}")
        return 1
    print(f"chaos: OK; logs in {workdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
