"""One HTTP exchange within a deadline, with the standard library only: what a hook sends.

Capture (``post``) and recall (``recall``) both talk to a local service inside a hook's time
budget. Plain ``http://`` (the local services, the common case) is spoken over a raw socket:
importing ``http.client`` costs ~25 ms (it pulls in the ``email`` package), a third of a
hook's budget. ``https://`` (a team deployment behind TLS) uses ``http.client`` because TLS is
worth the import.
"""

from __future__ import annotations

import time

from agent_memory_hooks import lite

USER_AGENT = "agent-memory-hook"


def remaining(deadline: float) -> float:
    """Seconds left before ``deadline`` (``time.monotonic``); TimeoutError once it passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("hook time budget spent")
    return left


def split_url(url: str) -> tuple[str, str, int, str]:
    """``scheme, host, port, path`` without ``urllib.parse`` (it imports ``re`` and more)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("http", "https"):
        raise ValueError(f"unsupported service URL {url!r}")
    authority, slash, path = rest.partition("/")
    authority = authority.rpartition("@")[2]
    default = 443 if scheme == "https" else 80
    if authority.startswith("["):  # [::1]:8700
        host, _, port_text = authority[1:].partition("]")
        port_text = port_text.lstrip(":")
    else:
        host, _, port_text = authority.partition(":")
    port = int(port_text) if port_text else default
    return scheme, host or "127.0.0.1", port, slash + path


def exchange(url: str, body: bytes | None, token: str | None, deadline: float) -> tuple[int, bytes]:
    """One request (POST of a JSON ``body``, GET without one): its status and whole body.

    Raises OSError, ValueError (not an HTTP answer) or TimeoutError; never outlives
    ``deadline``."""
    scheme, host, port, path = split_url(url)
    method = "GET" if body is None else "POST"
    if scheme == "https":
        return _exchange_https(method, host, port, path, body, token, deadline)
    head = [
        f"{method} {path or '/'} HTTP/1.1",
        f"Host: {host}:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(body or b'')}",
        "Connection: close",
        f"User-Agent: {USER_AGENT}",
    ]
    if token:
        head.append(f"Authorization: Bearer {token}")
    sock = lite.connect(host, port, remaining(deadline))
    try:
        sock.settimeout(remaining(deadline))
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (body or b""))
        data = b""
        while True:
            sock.settimeout(remaining(deadline))
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            done = _whole(data)
            if done is not None:  # a Content-Length body is in: no need to wait for the close
                return done
    finally:
        sock.close()
    done = _whole(data, closed=True)
    if done is None:
        raise ValueError("incomplete HTTP response")
    return done


def _whole(data: bytes, closed: bool = False) -> tuple[int, bytes] | None:
    """(status, body) once the response is whole (its Content-Length, or the peer closed);
    a chunked body is returned as it came, framing and all (nothing here reads one)."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return None
    lines = head.split(b"\r\n")
    fields = lines[0].split(b" ", 2)
    if len(fields) < 2 or not fields[0].startswith(b"HTTP/") or not fields[1].isdigit():
        raise ValueError(f"not an HTTP response: {lines[0][:80]!r}")
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            size = int(value.strip())
            return (int(fields[1]), rest[:size]) if len(rest) >= size else None
    return (int(fields[1]), rest) if closed else None


def _exchange_https(
    method: str,
    host: str,
    port: int,
    path: str,
    body: bytes | None,
    token: str | None,
    deadline: float,
) -> tuple[int, bytes]:
    import http.client  # lazy: TLS services only

    conn = http.client.HTTPSConnection(host, port, timeout=remaining(deadline))
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        conn.request(method, path or "/", body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()
