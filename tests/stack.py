"""pytest fixtures: real nats-server and Postgres processes, and the services as processes.

Registered by the repository's root ``conftest.py``. Postgres starts once per test session with a
migrated template database; every test gets its own database cloned from it (milliseconds) and
its own nats-server (tens of milliseconds), so tests never see each other's streams or rows.

What costs time is the services: each is a Python process that takes seconds of CPU to import
and start, and the query service then loads the sentence model in the background (seconds more,
on a machine of two cores that the tests share). So stacks are started once per module where the
module's tests are independent (each its own project, session or tenant), and the model is
loaded only where a test ranks by vectors (``LEAN`` leaves it unloaded). A test that kills,
stops or restarts a process, or counts every row of the database, keeps a stack of its own.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import pytest
from psycopg import sql

from agent_memory_common.core.catalog import BY_NAME
from agent_memory_common.db.postgres import apply_migrations
from agent_memory_embedded.servers import ManagedProcess, NatsServer, PostgresServer, free_port
from tests import plain_http
from tests.helpers import drained, eventually, make_event

TEMPLATE_DB = "agent_memory_template"

# The query service leaves its sentence model unloaded: no vector tier (search answers from BM25,
# the TOC and the raw scan, and explain says why), ready sooner, and seconds of CPU saved per
# stack. For the stacks of tests that do not rank by vectors.
LEAN = {"AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER": "false"}


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    root = tmp_path_factory.mktemp("pg")
    server = PostgresServer(
        root / "data",
        free_port(),
        root / "postgres.log",
        # tests never crash Postgres itself, so durability of its files is not under test
        settings={"fsync": "off", "synchronous_commit": "on", "full_page_writes": "off"},
        trust=True,  # a throwaway server: no passwords (agent-memory up's has them)
    )
    server.start(timeout=60)
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE_DB)))
    apply_migrations(server.dsn(TEMPLATE_DB))
    yield server
    server.stop()


def create_database(pg_server: PostgresServer) -> str:
    """A fresh, migrated database cloned from the template; returns its DSN."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(TEMPLATE_DB)
            )
        )
    return pg_server.dsn(name)


@pytest.fixture
def pg_dsn(pg_server: PostgresServer) -> str:
    """A fresh, migrated database for this test."""
    return create_database(pg_server)


def start_nats(workdir: Path) -> NatsServer:
    server = NatsServer(workdir / "nats", free_port(), workdir / "nats-server.log")
    server.start(timeout=30)
    return server


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    server = start_nats(tmp_path)
    yield server
    server.stop()


@dataclass
class Stack:
    """The services of the pipeline, each a real OS process, on a test's own servers."""

    nats: NatsServer
    pg_dsn: str
    workdir: Path
    env: dict[str, str]
    gateway_url: str = ""
    gateway_grpc: str = ""  # host:port of the gateway's gRPC IngestService
    query_url: str = ""
    pruner_url: str = ""
    processes: dict[str, ManagedProcess] = field(default_factory=dict)
    # where each consumer service serves /metrics, /healthz and /readyz (a free port each)
    metrics_urls: dict[str, str] = field(default_factory=dict)

    def start(self, name: str, replica: int = 0, timeout: float = 180.0) -> ManagedProcess:
        """Start service ``name``; ``replica`` > 0 starts a further process of a consumer
        service (named ``<name>-<replica>``) that shares its durable consumers. ``timeout``:
        generous by default, for a busy CI machine (the query service loads its model)."""
        spec = BY_NAME[name]  # the one declaration of the services (core.catalog)
        urls = {"gateway": self.gateway_url, "query": self.query_url, "pruner": self.pruner_url}
        if spec.http is not None and spec.http not in urls:
            raise ValueError(f"{name}: the test stack gives it no address (tests/stack.py)")
        module, url = spec.module, urls.get(spec.http or "", "")
        ready = _http_ok(url + "/readyz") if url else None
        key = f"{name}-{replica}" if replica else name
        env = self.env
        if not url:
            port = free_port()
            env = {**self.env, "AGENT_MEMORY_METRICS__PORT": str(port)}
            self.metrics_urls[key] = f"http://127.0.0.1:{port}"
        proc = ManagedProcess(
            key,
            [sys.executable, "-m", module],
            self.workdir / f"{key}.log",
            env=env,
            ready=ready,
        )
        proc.start(timeout=timeout)
        self.processes[key] = proc
        return proc

    def stop(self) -> None:
        for proc in reversed(list(self.processes.values())):
            proc.stop()

    def log(self, name: str) -> str:
        return (self.workdir / f"{name}.log").read_text(errors="replace")


def _http_ok(url: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            return plain_http.get(url, timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    return check


def make_stack(nats: NatsServer, pg_dsn: str, workdir: Path, **extra_env: str) -> Stack:
    gateway_port, query_port, pruner_port = free_port(), free_port(), free_port()
    grpc_port = free_port()
    env = {
        **os.environ,
        "AGENT_MEMORY_NATS_URL": nats.url,
        "AGENT_MEMORY_PG_DSN": pg_dsn,
        "AGENT_MEMORY_HOME": str(workdir / "home"),
        "AGENT_MEMORY_GATEWAY__PORT": str(gateway_port),
        "AGENT_MEMORY_GATEWAY__GRPC_PORT": str(grpc_port),
        "AGENT_MEMORY_QUERY__PORT": str(query_port),
        "AGENT_MEMORY_PRUNER__PORT": str(pruner_port),
        "AGENT_MEMORY_LOG_JSON": "true",
        **extra_env,
    }
    return Stack(
        nats=nats,
        pg_dsn=pg_dsn,
        workdir=workdir,
        env=env,
        gateway_url=f"http://127.0.0.1:{gateway_port}",
        gateway_grpc=f"127.0.0.1:{grpc_port}",
        query_url=f"http://127.0.0.1:{query_port}",
        pruner_url=f"http://127.0.0.1:{pruner_port}",
    )


DEFAULT_SERVICES = ("gateway", "recorder", "query")


@contextlib.contextmanager
def running_stack(
    nats: NatsServer,
    dsn: str,
    workdir: Path,
    services: Sequence[str] = DEFAULT_SERVICES,
    **extra_env: str,
) -> Iterator[Stack]:
    s = make_stack(nats, dsn, workdir, **extra_env)
    try:
        for name in services:
            s.start(name)
        yield s
    finally:
        s.stop()


@contextlib.contextmanager
def deployments(
    pg_server: PostgresServer,
    tmp_path_factory: pytest.TempPathFactory,
    names: Sequence[str],
    services: Sequence[str],
    **extra_env: str,
) -> Iterator[list[Stack]]:
    """Separate deployments (an export from one, an import into another): each its own
    nats-server and database, ``services`` started in each; all stopped at the end."""
    stacks: list[Stack] = []
    servers: list[NatsServer] = []
    try:
        for name in names:
            workdir = tmp_path_factory.mktemp(f"stack-{name}")
            servers.append(start_nats(workdir))
            stacks.append(make_stack(servers[-1], create_database(pg_server), workdir, **extra_env))
            for service in services:
                stacks[-1].start(service)
        yield stacks
    finally:
        for s in stacks:
            s.stop()
        for nats in servers:
            nats.stop()


def agent_memory(
    stack: Stack, *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``agent-memory ARGS`` as an operator runs it beside ``stack`` (its settings and DSN)."""
    return subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", *args],
        env={**stack.env, "AGENT_MEMORY_PG_DSN": stack.pg_dsn},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def stack(nats_server: NatsServer, pg_dsn: str, tmp_path: Path) -> Iterator[Stack]:
    """Gateway, recorder and query service on this test's own servers, for a test that stops,
    kills or restarts one of them (or NATS) or counts every stored row; without the sentence
    model (``LEAN``): none of these tests ranks by vectors. Tests that need neither use
    ``shared_stack``."""
    with running_stack(nats_server, pg_dsn, tmp_path, **LEAN) as s:
        yield s


@contextlib.contextmanager
def module_stack(
    pg_server: PostgresServer,
    tmp_path_factory: pytest.TempPathFactory,
    services: Sequence[str] = DEFAULT_SERVICES,
    **extra_env: str,
) -> Iterator[Stack]:
    """A stack on its own nats-server and database, for one module's tests: ``services``
    started, in that order."""
    workdir = tmp_path_factory.mktemp("stack")
    nats = start_nats(workdir)
    try:
        with running_stack(nats, create_database(pg_server), workdir, services, **extra_env) as s:
            yield s
    finally:
        nats.stop()


@pytest.fixture(scope="module")
def shared_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """One stack for a whole module, for tests that only read, only get refused, or each write
    and read their own sessions or projects; without the sentence model (``LEAN``): its tests
    do not rank by vectors. A module whose tests do starts its own with ``module_stack``."""
    with module_stack(pg_server, tmp_path_factory, **LEAN) as s:
        yield s


@pytest.fixture(scope="module")
def lean_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """One stack for a module whose tests do not rank by vectors: the query service leaves the
    sentence model unloaded (search answers from its other tiers, the playbook curator uses its
    deterministic hashing embedder), so it is ready in seconds even on a busy machine."""
    with module_stack(pg_server, tmp_path_factory, **LEAN) as s:
        yield s


RECALL_SERVICES = ("gateway", "recorder", "bm25-indexer", "embedder", "query")


@contextlib.contextmanager
def recall_ready_stack(
    pg_server: PostgresServer,
    tmp_path_factory: pytest.TempPathFactory,
    project: str,
    facts: Sequence[str],
) -> Iterator[Stack]:
    """A module's stack for recall (``POST /v1/recall``, the brief): its confidence is the best
    cosine, so the embedder and the query service's model are up. ``facts`` are stored as one
    event each (``e-00000<i>``, session ``old-<i>``) in ``project``; yields once they are
    drained and the vector tier finds the first one."""
    with module_stack(pg_server, tmp_path_factory, RECALL_SERVICES) as s:
        events = [
            make_event(i, project=project, session=f"old-{i}", text=text)
            for i, text in enumerate(facts)
        ]
        r = plain_http.post(f"{s.gateway_url}/v1/events", json={"events": events}, timeout=30)
        assert r.status_code == 202, r.text
        eventually(
            lambda: drained(
                s.query_url, len(facts), consumers=("recorder", "bm25-indexer", "embedder")
            ),
            timeout=300,
            what="pipeline drained",
        )

        def vectors_answer() -> bool:  # the query service's model loaded, the vectors readable
            body = {"query": facts[0], "project_id": project}
            answer = plain_http.post(f"{s.query_url}/v1/search", json=body, timeout=30).json()
            return (answer.get("match_score") or 0) > 0.9

        eventually(vectors_answer, timeout=300, what="the vector tier answers")
        yield s
