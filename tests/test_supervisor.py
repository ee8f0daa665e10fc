"""``agent-memory up`` (what ``make run`` runs): starts everything, restarts a dead service,
stops cleanly on SIGTERM, and a second start finds the earlier data."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import psycopg
import pytest

from agent_memory_common.core.catalog import SERVICES
from agent_memory_common.core.credentials import load_credentials
from agent_memory_common.core.runtime import autogroup_scheduling
from agent_memory_embedded import postgres_memory_settings
from agent_memory_embedded.servers import free_port, port_open
from tests import plain_http
from tests.helpers import eventually, make_event

pytestmark = pytest.mark.slow


class Up:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.gateway = f"http://127.0.0.1:{free_port()}"
        self.query = f"http://127.0.0.1:{free_port()}"
        self.dashboard = f"http://127.0.0.1:{free_port()}"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("AGENT_MEMORY_")  # the stack must be the embedded one
        }
        self.env.update(
            AGENT_MEMORY_HOME=str(home),
            AGENT_MEMORY_EMBEDDED__NATS_PORT=str(free_port()),
            AGENT_MEMORY_EMBEDDED__PG_PORT=str(free_port()),
            AGENT_MEMORY_GATEWAY__PORT=self.gateway.rsplit(":", 1)[1],
            AGENT_MEMORY_GATEWAY__GRPC_PORT=str(free_port()),
            AGENT_MEMORY_QUERY__PORT=self.query.rsplit(":", 1)[1],
            AGENT_MEMORY_PRUNER__PORT=str(free_port()),
            AGENT_MEMORY_DASHBOARD__PORT=self.dashboard.rsplit(":", 1)[1],
        )
        self.out = home / "up.out"
        self.proc: subprocess.Popen[bytes] | None = None
        self.offset = 0

    def start(self, *args: str) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.offset = len(self.output())
        with open(self.out, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "agent_memory_cli", "up", *args],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        eventually(
            lambda: "agent-memory is running" in self.output()[self.offset :] or self._died(),
            timeout=120,
            what="agent-memory up banner",
        )
        assert self.proc.poll() is None, self.output()

    def _died(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def output(self) -> str:
        return self.out.read_text(errors="replace") if self.out.exists() else ""

    def children(self) -> list[psutil.Process]:
        assert self.proc is not None
        return psutil.Process(self.proc.pid).children(recursive=True)

    def service_pids(self, module: str) -> list[int]:
        pids = []
        for child in self.children():
            try:
                if child.cmdline()[-1:] == [module]:
                    pids.append(child.pid)
            except psutil.NoSuchProcess:
                continue
        return pids

    def service_pid(self, module: str) -> int | None:
        for child in self.children():
            try:
                if module in " ".join(child.cmdline()):
                    return child.pid
            except psutil.NoSuchProcess:
                continue
        return None

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    u = Up(tmp_path / "home")
    yield u
    if u.proc is not None and u.proc.poll() is None:
        u.proc.kill()
        u.proc.wait()
    for child in psutil.process_iter():  # nothing of this test may outlive it
        try:
            if str(u.home) in " ".join(child.cmdline()) or str(u.home) in str(child.environ()):
                child.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue


def pg_size(value: str) -> int:
    """Megabytes of a Postgres size: SHOW says "6GB" where the setting was "6144MB"."""
    number, unit = int(value[:-2]), value[-2:]
    return number * {"kB": 1, "MB": 1024, "GB": 1024**2, "TB": 1024**3}[unit] // 1024


def _stored(query: str, event_id: str) -> bool:
    try:
        return plain_http.get(f"{query}/v1/events/{event_id}", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def _nice(up: Up, module: str) -> int:
    pid = up.service_pid(module)
    assert pid is not None, module
    return int(psutil.Process(pid).nice())


def _background(up: Up, module: str) -> bool:
    """The service runs at the consumers' niceness (5) and, with autogroup scheduling, so does
    its session: each service leads a session of its own, and sessions share the CPU first."""
    pid = up.service_pid(module)
    assert pid is not None, module
    nice = int(psutil.Process(pid).nice())
    if nice != max(os.getpriority(os.PRIO_PROCESS, 0), 5):
        return False
    if not autogroup_scheduling():
        return True
    return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1]) == nice


def test_up_runs_restarts_stops_and_keeps_data(up: Up) -> None:
    up.start()
    out = up.output()
    assert up.gateway in out and up.query in out and up.dashboard in out

    r = plain_http.post(f"{up.gateway}/v1/events", json=make_event(1), timeout=10)
    assert r.status_code == 202, r.text
    eventually(lambda: _stored(up.query, "e-000001"), what="event recorded")
    # Postgres is sized from the machine, not left at its 128 MB of buffers
    creds = load_credentials(up.home)  # generated by this first start (test_embedded_security)
    assert creds is not None
    login = f"{creds.pg_user}:{creds.pg_password}"
    pg = f"postgresql://{login}@127.0.0.1:{up.env['AGENT_MEMORY_EMBEDDED__PG_PORT']}/postgres"
    with psycopg.connect(pg) as conn:
        shown = conn.execute("SHOW shared_buffers").fetchone()
    assert shown is not None
    assert pg_size(shown[0]) == pg_size(postgres_memory_settings()["shared_buffers"])
    # consumers are background work: lower CPU priority (default niceness 5); capture is not
    assert _background(up, "agent_memory_recorder")
    assert _nice(up, "agent_memory_gateway") == os.getpriority(os.PRIO_PROCESS, 0)

    # a service that dies is restarted by the supervisor
    old = up.service_pid("agent_memory_recorder")
    assert old is not None
    os.kill(old, signal.SIGKILL)
    eventually(
        lambda: (pid := up.service_pid("agent_memory_recorder")) is not None and pid != old,
        timeout=30,
        what="recorder restarted",
    )
    assert (
        plain_http.post(f"{up.gateway}/v1/events", json=make_event(2), timeout=10).status_code
        == 202
    )
    eventually(lambda: _stored(up.query, "e-000002"), what="event recorded after restart")
    assert _background(up, "agent_memory_recorder")  # the restarted one too

    children = up.children()
    started = time.monotonic()
    assert up.stop() == 0
    assert time.monotonic() - started < 45
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, f"left running: {alive}"
    assert "stopped" in up.output()

    # a second start finds all earlier data; this one with two processes of the embedder
    # (the slowest stage) and one of every other consumer
    up.start("--replicas", "embedder=2")
    assert _stored(up.query, "e-000001") and _stored(up.query, "e-000002")
    started_lines = up.output()[up.offset :]
    assert "starting embedder-1" in started_lines and "starting embedder-2" in started_lines
    assert "starting recorder..." in started_lines
    assert len(up.service_pids("agent_memory_embedder")) == 2
    assert len(up.service_pids("agent_memory_recorder")) == 1
    assert up.stop() == 0


def test_second_up_on_same_home_is_refused(up: Up) -> None:
    # the home is held from the first moment of the first up: its servers are enough here
    up.start("--without", ",".join(svc.name for svc in SERVICES))
    second = subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "up"],
        env=up.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode != 0
    assert "another 'agent-memory up'" in second.stdout + second.stderr
    assert up.stop() == 0


# The HTTP services' own ports, which the test below leaves unset: each service then listens
# where its default says, and agent-memory up must look for it there.
DEFAULT_PORTS = {"gateway": 8700, "query": 8701, "dashboard": 8702, "pruner": 8704}


@pytest.mark.serial  # binds the default ports every other test's CLI would find
def test_up_with_service_settings_but_not_their_ports(up: Up) -> None:
    """Issue #58: ``AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S=86400 make run`` refused to start
    (``AGENT_MEMORY_PRUNER__PORT: Field required``), and so did any setting of an HTTP service
    set without its port. Here each HTTP service gets one documented setting and no port, so
    it listens on its default (each documented setting alone is checked at the settings level
    by tests/test_documented_settings.py). And issue #56: the terminal shows only lines for a
    person; the supervisor's JSON log (migrations of this fresh home) is in its log file."""
    taken = [port for port in DEFAULT_PORTS.values() if port_open("127.0.0.1", port)]
    # the point is the default ports: a machine that holds them cannot run this, and says so
    assert not taken, f"free the services' default ports to run this test: {taken} are in use"
    for service in DEFAULT_PORTS:
        del up.env[f"AGENT_MEMORY_{service.upper()}__PORT"]
    up.env.update(
        AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S="86400",
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
        AGENT_MEMORY_DASHBOARD__REFRESH_MS="1000",
    )  # and the gateway's AGENT_MEMORY_GATEWAY__GRPC_PORT, which Up sets
    up.start()
    out = up.output()
    for service, port in DEFAULT_PORTS.items():
        url = f"http://127.0.0.1:{port}"
        assert url in out, (service, out)
        assert plain_http.get(f"{url}/healthz", timeout=5).status_code == 200, service

    records = [line for line in out.splitlines() if line.lstrip().startswith("{")]
    assert not records, records
    assert "migrations: " in out
    assert "db.migration_applied" in (up.home / "logs" / "supervisor.log").read_text()
    assert up.stop() == 0
