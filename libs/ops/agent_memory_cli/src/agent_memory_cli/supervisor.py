"""``agent-memory up``: the embedded stack and every service, each its own OS process.

Order matters: NATS and Postgres first (unless external ones are configured), migrations, then
the services. A child that dies is restarted with a growing delay; Ctrl-C or SIGTERM stops the
services first, then NATS, then Postgres, so no acknowledged write is cut off.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from functools import partial
from types import FrameType
from typing import IO

from agent_memory_cli.settings import Settings
from agent_memory_cli.state import PRIVATE_UMASK, restrict, world_writable
from agent_memory_common.core.catalog import CONSUMERS, SERVICES
from agent_memory_common.core.credentials import ensure_credentials, without_password
from agent_memory_common.core.logs import configure_logging
from agent_memory_common.core.settings import DEFAULT_DATABASE
from agent_memory_common.db.postgres import prepare_database
from agent_memory_embedded import (
    ManagedProcess,
    NatsServer,
    PostgresServer,
    postgres_memory_settings,
)
from agent_memory_embedded.servers import port_open


def replica_counts(values: Sequence[str]) -> dict[str, int]:
    """``--replicas`` values as processes per consumer service: ``N`` for every consumer,
    ``SERVICE=N`` for one (later values win), so that the slowest stage (the embedder) can
    have a process per core without copies of every other consumer. ``ValueError`` names the
    value it cannot take."""
    counts = dict.fromkeys(CONSUMERS, 1)
    for value in values:
        name, sep, number = value.rpartition("=")
        if not number.strip().isdigit() or int(number) < 1:
            raise ValueError(f"--replicas {value}: the number of processes must be 1 or more")
        if not sep:
            counts = dict.fromkeys(CONSUMERS, int(number))
        elif name in CONSUMERS:
            counts[name] = int(number)
        else:
            raise ValueError(
                f"--replicas {value}: {name!r} is not a consumer service"
                f" (one of: {', '.join(CONSUMERS)}; the HTTP services run once)"
            )
    return counts


def left_out(values: Sequence[str]) -> frozenset[str]:
    """``--without`` values (names, or comma-separated lists of them) as the set of services
    not to start: a laptop that cannot spare the embedder's CPU, a stack without its
    dashboard. ``ValueError`` names the value it cannot take."""
    names = {svc.name for svc in SERVICES}
    out: set[str] = set()
    for value in values:
        for name in filter(None, (part.strip() for part in value.split(","))):
            if name not in names:
                raise ValueError(
                    f"--without {name}: not a service (one of: {', '.join(sorted(names))})"
                )
            out.add(name)
    return frozenset(out)


MAX_BACKOFF_S = 30.0
HEALTHY_AFTER_S = 60.0


class Child:
    """A supervised process and its restart bookkeeping."""

    def __init__(self, process: ManagedProcess) -> None:
        self.process = process
        self.started_at = 0.0
        self.backoff = 1.0
        self.restart_at: float | None = None
        self.restarts = 0

    def start(self, timeout: float = 60.0, *, wait: bool = True) -> None:
        self.started_at = time.monotonic()
        self.process.start(timeout, wait=wait)


class Supervisor:
    def __init__(
        self,
        settings: Settings,
        out: IO[str] = sys.stdout,
        *,
        replicas: int | Mapping[str, int] = 1,
        without: frozenset[str] = frozenset(),
    ) -> None:
        """``replicas``: processes of every consumer service, or of each by name
        (``replica_counts``; the HTTP services run once); replicas share their durable
        consumers, as they do in compose and Kubernetes. ``without``: services not started
        (``left_out``); their durable consumers exist from the first start, so one started
        later catches up on everything published meanwhile."""
        self.settings = settings
        self.without = without
        if isinstance(replicas, int):
            self.replicas = dict.fromkeys(CONSUMERS, max(1, replicas))
        else:
            self.replicas = {name: max(1, replicas.get(name, 1)) for name in CONSUMERS}
        self.out = out
        self.home = settings.home
        self.logs = self.home / "logs"
        self.children: list[Child] = []
        self.stopping = False
        self.nats_url = settings.nats_url
        self.pg_dsn = settings.pg_dsn

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def run(self) -> int:
        # what the supervisor and its children create (Tantivy, logs, the JetStream store,
        # the credentials) is for this user alone: 0600 files in 0700 folders (state.py)
        os.umask(PRIVATE_UMASK)
        self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        unsafe = world_writable(self.home)
        if unsafe is not None:
            self.say(
                f"agent-memory: {unsafe} is world-writable: anyone on this machine may have"
                f" changed the memory stored in {self.home}. Check it, make it private"
                f" (chmod o-w '{unsafe}') and start again."
            )
            return 1
        restrict(self.home, keep=(self.home / "postgres",))
        lock = self._lock()
        log = self._log_to_file()
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        try:
            self._start_infrastructure()
            self._start_services()
            self._print_banner()
            self._watch()
        except (RuntimeError, TimeoutError, OSError) as exc:
            self.say(f"agent-memory: {exc}")
            return 1
        finally:
            self._stop_all()
            log.close()
            lock.close()
        return 0

    def _log_to_file(self) -> IO[str]:
        """The supervisor's own log (migrations applied...) goes to ``logs/supervisor.log``, as
        JSON unless ``AGENT_MEMORY_LOG_JSON=false``, beside the services' logs: the terminal
        of ``make run`` shows only the lines said to a person (``say``), not JSON records
        between them (issue #56)."""
        self.logs.mkdir(parents=True, exist_ok=True)
        handle = open(self.logs / "supervisor.log", "a", buffering=1)  # noqa: SIM115 - until stop
        json = True if self.settings.log_json is None else self.settings.log_json
        configure_logging("supervisor", self.settings.log_level, json, stream=handle)
        return handle

    def _lock(self) -> IO[str]:
        path = self.home / "supervisor.lock"
        handle = open(path, "w")  # noqa: SIM115 - held for the supervisor's lifetime
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SystemExit(
                f"agent-memory: another 'agent-memory up' is using {self.home}"
            ) from None
        handle.write(str(os.getpid()))
        handle.flush()
        return handle

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if not self.stopping:
            self.say(f"\nagent-memory: {signal.Signals(signum).name} received, stopping...")
        self.stopping = True

    def _check_port_free(self, port: int, what: str, variable: str) -> None:
        if port_open("127.0.0.1", port):
            raise RuntimeError(f"port {port} for {what} is already in use; set {variable}")

    def _start_infrastructure(self) -> None:
        emb = self.settings.embedded
        embedded_nats = "AGENT_MEMORY_NATS_URL" not in os.environ
        embedded_pg = "AGENT_MEMORY_PG_DSN" not in os.environ
        # generated at the first start (and at the first start of a home made before them);
        # the settings of every service and command read them from the home
        creds = ensure_credentials(self.home) if embedded_nats or embedded_pg else None
        if embedded_nats:
            assert creds is not None
            self._check_port_free(emb.nats_port, "NATS", "AGENT_MEMORY_EMBEDDED__NATS_PORT")
            nats = NatsServer(
                self.home / "nats",
                emb.nats_port,
                self.logs / "nats-server.log",
                auth=(creds.nats_user, creds.nats_password),
            )
            self._add(nats, "starting nats-server (JetStream)")
            self.nats_url = nats.url
        if embedded_pg:
            assert creds is not None
            self._check_port_free(emb.pg_port, "Postgres", "AGENT_MEMORY_EMBEDDED__PG_PORT")
            pg = PostgresServer(
                self.home / "postgres",
                emb.pg_port,
                self.logs / "postgres.log",
                settings=postgres_memory_settings(emb.pg_shared_buffers),
                password=creds.pg_superuser_password,
            )
            self._add(pg, "starting PostgreSQL")
            # the services connect as a role of their own, owner of the database and no
            # superuser; the superuser's password is for this step alone
            self.pg_dsn = pg.ensure_owner_role(creds.pg_user, creds.pg_password, DEFAULT_DATABASE)
        applied = prepare_database(self.pg_dsn)
        self.say(f"  migrations: {len(applied)} applied" if applied else "  migrations: up to date")

    def _start_services(self) -> None:
        env = {
            **os.environ,
            "AGENT_MEMORY_NATS_URL": self.nats_url,
            "AGENT_MEMORY_PG_DSN": self.pg_dsn,
            "AGENT_MEMORY_HOME": str(self.home),
            "AGENT_MEMORY_LOG_JSON": os.environ.get("AGENT_MEMORY_LOG_JSON", "true"),
            "AGENT_MEMORY_DASHBOARD__QUERY_URL": os.environ.get(
                "AGENT_MEMORY_DASHBOARD__QUERY_URL", self.settings.query_url
            ),
            "AGENT_MEMORY_DASHBOARD__PRUNER_URL": os.environ.get(
                "AGENT_MEMORY_DASHBOARD__PRUNER_URL", self.settings.pruner_url
            ),
        }
        for svc in SERVICES:
            if svc.name in self.without:
                self.say(f"  not starting {svc.name} (--without)")
                continue
            ready = None
            if svc.http is not None:
                address = getattr(self.settings, svc.http)
                host = "127.0.0.1" if address.host in ("0.0.0.0", "::") else address.host
                self._check_port_free(
                    address.port, svc.name, f"AGENT_MEMORY_{svc.http.upper()}__PORT"
                )
                ready = partial(port_open, host, address.port)
            copies = self.replicas.get(svc.name, 1)
            for replica in range(copies):
                name = svc.name if copies == 1 else f"{svc.name}-{replica + 1}"
                process = ManagedProcess(
                    name,
                    [sys.executable, "-m", svc.module],
                    self.logs / f"{name}.log",
                    env=self._replica_env(env, svc.name, replica),
                    ready=ready,
                )
                self._add(process, f"starting {name}")

    def _replica_env(self, env: dict[str, str], service: str, replica: int) -> dict[str, str]:
        """Each replica its own metrics port: the service's (8710...) + 100 per replica."""
        if replica == 0 or "AGENT_MEMORY_METRICS__PORT" in os.environ:
            return env
        port = self.settings.metrics.port_for(service)
        return {**env, "AGENT_MEMORY_METRICS__PORT": str(port + 100 * replica if port else 0)}

    def _add(self, process: ManagedProcess, message: str) -> None:
        self.say(f"  {message}...")
        child = Child(process)
        self.children.append(child)
        child.start()

    def _print_banner(self) -> None:
        s = self.settings
        grpc = f"  gRPC ingest    : {s.gateway_grpc}   (docs/grpc.md)\n" if s.gateway_grpc else ""
        lines = {
            "gateway": f"  ingest gateway : {s.gateway_url}   (POST /v1/events)\n{grpc}",
            "query": f"  query service  : {s.query_url}   (GET /v1/events, /v1/status, /docs)\n",
            "pruner": f"  pruner         : {s.pruner_url}   (POST /v1/admin/cleanup, hourly)\n",
            "dashboard": f"  dashboard      : {s.dashboard_url}   (open it in a browser)\n",
        }
        services = "".join(line for name, line in lines.items() if name not in self.without)
        if self.without:
            services += f"  not started    : {', '.join(sorted(self.without))}   (--without)\n"
        self.say(
            "\nagent-memory is running.\n"
            f"{services}"
            f"  NATS           : {without_password(self.nats_url)}\n"
            f"  Postgres       : {without_password(self.pg_dsn)}\n"
            f"  data and logs  : {self.home}\n"
            "Press Ctrl-C to stop.\n"
        )
        self.say(
            "Try:\n"
            f"  curl -s -X POST {s.gateway_url}/v1/events -H 'content-type: application/json' \\\n"
            '    -d \'{"project_id":"demo","agent_id":"me","session_id":"s1",'
            '"role":"user","text":"hello memory"}\'\n'
            f"  curl -s {s.query_url}/v1/events?project_id=demo\n"
        )

    def _watch(self) -> None:
        while not self.stopping:
            now = time.monotonic()
            for child in self.children:
                if self.stopping:
                    break
                if child.process.alive():
                    if now - child.started_at > HEALTHY_AFTER_S:
                        child.backoff = 1.0
                    continue
                if child.restart_at is None:
                    code = child.process.proc.returncode if child.process.proc else None
                    self.say(
                        f"agent-memory: {child.process.name} exited ({code}); "
                        f"restarting in {child.backoff:.0f}s (log: {child.process.log_path})"
                    )
                    child.process.stop()
                    child.restart_at = now + child.backoff
                    child.backoff = min(child.backoff * 2, MAX_BACKOFF_S)
                elif now >= child.restart_at:
                    child.restart_at = None
                    child.restarts += 1
                    # A restarted service is not waited for: while it waits for a NATS or
                    # Postgres that also died, this loop must go on and restart those (the
                    # chaos run saw nats-server held back ~60 s behind a gateway's restart).
                    # The servers themselves are waited for: the services need them.
                    essential = isinstance(child.process, NatsServer | PostgresServer)
                    try:
                        child.start(wait=essential)
                    except (RuntimeError, TimeoutError, OSError) as exc:
                        self.say(f"agent-memory: {child.process.name} failed to start: {exc}")
            time.sleep(0.2)

    def _stop_all(self) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the shutdown
        for child in reversed(self.children):
            child.process.stop()
        self.say("agent-memory: stopped.")
