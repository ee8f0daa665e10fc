"""The credentials of the embedded stack, generated at its first start.

``agent-memory up`` writes ``$AGENT_MEMORY_HOME/credentials.json`` (mode 0600, in a 0700
home) once: a NATS user and password that nats-server requires of every client, the password
of the Postgres role ``agent_memory`` that owns the ``agent_memory`` database and that every
service and command connects as, and the password of the Postgres superuser (for the supervisor
alone: creating the role and the extensions). The settings read it (``CommonSettings``): where
``AGENT_MEMORY_NATS_URL`` and ``AGENT_MEMORY_PG_DSN`` are not set, their defaults carry these
credentials, so a service or a command run with the same home finds them without being told.
With servers of your own (compose, Kubernetes), the credentials are in those two URLs.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path

CREDENTIALS_FILE = "credentials.json"
NATS_USER = "agent-memory"
PG_ROLE = "agent_memory"
PG_SUPERUSER = "postgres"


@dataclass(frozen=True)
class Credentials:
    nats_user: str
    nats_password: str
    pg_user: str
    pg_password: str
    pg_superuser_password: str


def credentials_path(home: Path) -> Path:
    return home / CREDENTIALS_FILE


def load_credentials(home: Path) -> Credentials | None:
    """The credentials of the embedded stack in ``home``; None before its first start."""
    path = credentials_path(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"{path}: unreadable credentials ({exc})") from exc
    try:
        return Credentials(**{k: str(data[k]) for k in Credentials.__dataclass_fields__})
    except (KeyError, TypeError) as exc:
        raise RuntimeError(f"{path}: incomplete credentials ({exc})") from exc


def ensure_credentials(home: Path) -> Credentials:
    """Load the credentials of ``home``, generating them (0600) the first time."""
    found = load_credentials(home)
    path = credentials_path(home)
    if found is not None:
        path.chmod(0o600)
        return found
    creds = Credentials(
        nats_user=NATS_USER,
        nats_password=secrets.token_urlsafe(32),  # URL-safe: it goes into URLs and DSNs
        pg_user=PG_ROLE,
        pg_password=secrets.token_urlsafe(32),
        pg_superuser_password=secrets.token_urlsafe(32),
    )
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(asdict(creds), handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
    return creds


def without_password(url: str) -> str:
    """``url`` (a NATS URL list or a DSN) with every password replaced by ``***``: to print."""
    parts = []
    for one in url.split(","):
        scheme, sep, rest = one.partition("://")
        if sep and "@" in rest:
            userinfo, _, host = rest.rpartition("@")
            user, colon, _password = userinfo.partition(":")
            if colon:
                one = f"{scheme}://{user}:***@{host}"
        parts.append(one)
    return ",".join(parts)
