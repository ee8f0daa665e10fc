"""A raw NATS client, as the issue 55 probe used (``nats pub``): does a nats-server let in a
client without the credentials? And a real nats-server run with the ``authorization`` block
of a deployment's config (compose, Kubernetes), to ask it."""

from __future__ import annotations

import contextlib
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path

from agent_memory_embedded.servers import ManagedProcess, free_port, nats_server_binary, port_open


def nats_login(port: int, user: str = "", password: str = "", subject: str = "") -> str:
    """``connected``, or ``refused: <why>``: speak the NATS protocol to ``127.0.0.1:port``,
    with ``user`` and ``password`` or none, and publish to ``subject`` (default: an event
    subject of the tenant ``default`` without credentials, a subject of no stream with them)."""
    subject = subject or ("probe.login" if user else "mem.events.default.probe")
    login = {"user": user, "pass": password} if user else {}
    hello = {"verbose": False, "pedantic": False, "protocol": 1, **login}
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.recv(4096)  # INFO
        sock.sendall(f"CONNECT {json.dumps(hello)}\r\nPUB {subject} 2\r\nhi\r\nPING\r\n".encode())
        answer = b""
        while b"PONG" not in answer and b"-ERR" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    text = answer.decode(errors="replace")
    return "connected" if "PONG" in text and "-ERR" not in text else f"refused: {text.strip()}"


def authorization_block(config: str) -> str:
    """The ``authorization { ... }`` block of a nats-server config (one level of braces)."""
    found = re.search(r"(?ms)^\s*authorization\s*\{[^{}]*\}", config)
    assert found, "the NATS config has no authorization block: any client is let in"
    return found.group(0)


@contextlib.contextmanager
def nats_with(config: str, env: dict[str, str], workdir: Path) -> Iterator[int]:
    """A real nats-server on a free port with the ``authorization`` block of ``config`` and
    the environment ``env`` (its ``$VARIABLES``); yields the port."""
    port = free_port()
    path = workdir / "nats-auth.conf"
    path.write_text(f"port: {port}\n{authorization_block(config)}\n", encoding="utf-8")
    server = ManagedProcess(
        "nats-server",
        [nats_server_binary(), "--config", str(path), "--addr", "127.0.0.1"],
        workdir / "nats-auth.log",
        env=env,
        ready=lambda: port_open("127.0.0.1", port),
    )
    server.start(timeout=30)
    try:
        yield port
    finally:
        server.stop()
