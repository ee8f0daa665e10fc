"""``make bench-cli``: how long ``agent-memory`` takes to answer, and how much of it is its own.

Issue 56 measured 3.8-11 s for ``--help``, ``status`` and ``search`` against 16-60 ms of server
time; the targets are ``--help`` under 0.5 s and ``status`` / ``search`` (and ``projects``,
``sessions``) under 1 s plus the server's time. This starts a small stack of its own (Postgres
and nats-server in a temporary folder, the gateway, the recorder and the query service without
its sentence model, as the lean test stack does), stores a few hundred events, then runs the
real console script, each command ``--runs`` times:

- ``wall``: the whole process, start to exit, as a person waits for it (median and worst);
- ``cpu``: its user + system CPU seconds (less sensitive to a busy machine than wall time);
- ``server``: the same request sent from this process over a warm connection (median): what the
  command would cost if starting it were free;
- ``own``: median wall - server, what the command itself adds; judged against the target,
  and so is ``cpu`` (on a busy machine the wall times are mostly waiting for a CPU).

A measurement, not a test: a missed target prints MISS and the exit code stays 0. On a shared
machine the wall times move with the neighbours' load; the CPU column and ``python -c pass``
(the interpreter's own start) say how much.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
from psycopg import sql

from agent_memory_common.db.postgres import apply_migrations
from agent_memory_embedded.servers import PostgresServer, free_port
from tests import plain_http
from tests.bench.report import stop_on_sigterm, table
from tests.stack import Stack, make_stack, start_nats

AGENT_MEMORY = str(Path(sys.executable).parent / "agent-memory")
PROJECT = "bench-cli"
SESSIONS = 20
EVENTS_PER_SESSION = 15


@dataclass
class Row:
    name: str
    target: float | None  # seconds: for the whole command (help) or for its own share
    own_target: bool  # the target is for ``own`` (wall - server) rather than for wall
    wall: list[float]
    cpu: list[float]
    server: list[float]


@contextmanager
def lean_stack(workdir: Path) -> Iterator[Stack]:
    """Postgres, nats-server, gateway, recorder and query (no sentence model), all stopped and
    removed at the end."""
    pg = PostgresServer(
        workdir / "pg",
        free_port(),
        workdir / "postgres.log",
        settings={"fsync": "off", "full_page_writes": "off"},
        trust=True,
    )
    pg.start(timeout=120)
    nats = None
    stack = None
    try:
        with psycopg.connect(pg.dsn(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier("agent_memory")))
        dsn = pg.dsn("agent_memory")
        apply_migrations(dsn)
        nats = start_nats(workdir)
        stack = make_stack(nats, dsn, workdir, AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false")
        for name in ("gateway", "recorder", "query"):
            stack.start(name)
        yield stack
    finally:
        if stack is not None:
            stack.stop()
        if nats is not None:
            nats.stop()
        pg.stop()


def seed(stack: Stack) -> None:
    """A project of ``SESSIONS`` sessions, recorded before the clock starts."""
    events = [
        {
            "event_id": f"bench-cli-{s}-{n}",
            "project_id": PROJECT,
            "agent_id": "claude-code",
            "session_id": f"session-{s:02d}",
            "role": "user" if n % 2 == 0 else "assistant",
            "ts": 1_765_000_000_000 + s * 3_600_000 + n * 1000,
            "text": f"We decided to keep the schema append-only (session {s}, turn {n}); "
            "the importer reads the old export format and skips attachments.",
        }
        for s in range(SESSIONS)
        for n in range(EVENTS_PER_SESSION)
    ]
    plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events}, timeout=30)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        page = plain_http.get(f"{stack.query_url}/v1/projects", timeout=10).json()["projects"]
        if page and page[0]["events"] >= len(events):
            return
        time.sleep(0.5)
    raise SystemExit("bench-cli: the recorder did not store the seed events in 120 s")


def run_cli(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """One run of the console script: (wall seconds, CPU seconds); fails loudly if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([AGENT_MEMORY, *argv], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(
            f"bench-cli: agent-memory {' '.join(argv)} failed:\n{proc.stdout}{proc.stderr}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def server_times(request: Callable[[], httpx.Response], runs: int) -> list[float]:
    """The request from a warm client, ``runs`` times after one unmeasured."""
    request().raise_for_status()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        request().raise_for_status()
        times.append(time.perf_counter() - started)
    return times


def python_start(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - started)
    return times


def measure(stack: Stack, runs: int) -> list[Row]:
    env = {**stack.env}
    query = "what did we decide about the schema"
    http = httpx.Client(base_url=stack.query_url, timeout=30)
    cases: list[tuple[str, list[str], float | None, bool, Callable[[], httpx.Response] | None]] = [
        ("--help", ["--help"], 0.5, False, None),
        ("search --help", ["search", "--help"], 0.5, False, None),
        ("status", ["status"], 1.0, True, lambda: http.get("/v1/status")),
        (
            "search",
            ["search", query, "--project", PROJECT],
            1.0,
            True,
            lambda: http.post(
                "/v1/search", json={"query": query, "limit": 10, "project_id": PROJECT}
            ),
        ),
        ("projects", ["projects"], 1.0, True, lambda: http.get("/v1/projects")),
        (
            "sessions",
            ["sessions", PROJECT],
            1.0,
            True,
            lambda: http.get(f"/v1/projects/{PROJECT}/sessions"),
        ),
    ]
    rows = []
    for name, argv, target, own, request in cases:
        run_cli(argv, env)  # warm the page cache once, unmeasured
        measured = [run_cli(argv, env) for _ in range(runs)]
        rows.append(
            Row(
                name=name,
                target=target,
                own_target=own,
                wall=[w for w, _ in measured],
                cpu=[c for _, c in measured],
                server=server_times(request, runs) if request else [],
            )
        )
    http.close()
    return rows


def render(rows: list[Row], start: list[float]) -> str:
    """One row a command; the target judged twice: on wall time (what a person waits on a quiet
    machine) and on CPU time (what the command itself spends, whatever the neighbours do)."""
    lines = [
        [
            "command",
            "wall p50",
            "wall max",
            "cpu p50",
            "server p50",
            "own p50",
            "target",
            "wall",
            "cpu",
        ]
    ]
    for r in rows:
        wall = statistics.median(r.wall)
        cpu = statistics.median(r.cpu)
        server = statistics.median(r.server) if r.server else 0.0
        own = wall - server
        judged = own if r.own_target else wall
        target = "" if r.target is None else f"{'own' if r.own_target else 'wall'} < {r.target:g} s"
        lines.append(
            [
                f"agent-memory {r.name}",
                f"{wall:.3f}",
                f"{max(r.wall):.3f}",
                f"{cpu:.3f}",
                f"{server * 1000:.1f} ms" if r.server else "-",
                f"{own:.3f}",
                target,
                "" if r.target is None else ("ok" if judged < r.target else "MISS"),
                "" if r.target is None else ("ok" if cpu < r.target else "MISS"),
            ]
        )
    lines.append(
        [
            "python -c pass",
            f"{statistics.median(start):.3f}",
            f"{max(start):.3f}",
            "",
            "",
            "",
            "",
            "",
            "",
        ]
    )
    return table(lines, [False, True, True, True, True, True, False, False, False])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10, help="runs of each command (default 10)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    stop_on_sigterm()
    workdir = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        with lean_stack(workdir) as stack:
            seed(stack)
            load = os.getloadavg()
            rows = measure(stack, args.runs)
            start = python_start(args.runs)
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"agent-memory, {args.runs} runs of each command, seconds "
        f"(load average at the start: {load[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    print(render(rows, start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
