"""POST events to the gateway within a deadline, with the standard library only.

Plain ``http://`` (the local gateway, the common case) is spoken over a raw socket: importing
``http.client`` costs ~25 ms (it pulls in the ``email`` package), a third of a hook's budget.
``https://`` (a team gateway behind TLS) uses ``http.client`` because TLS is worth the import.
The outcome is one of three, which is all a caller needs to decide: stored, retry later (spool
it), or refused for good (the event itself is wrong and retrying cannot help).
"""

from __future__ import annotations

import time

from agent_memory_hooks import lite

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

OK = "ok"
RETRY = "retry"
REJECTED = "rejected"

# Statuses that condemn the events themselves; anything else (401, 429, 5xx, no answer) may
# succeed later, so those events are kept.
_POISON = frozenset({400, 413, 422})


class PostResult:
    def __init__(self, outcome: str, status: int | None, detail: str) -> None:
        self.outcome = outcome
        self.status = status
        self.detail = detail

    def __repr__(self) -> str:
        return f"PostResult({self.outcome!r}, {self.status!r}, {self.detail[:80]!r})"

    @property
    def ok(self) -> bool:
        return self.outcome == OK


def classify(status: int | None, detail: str) -> PostResult:
    if status is not None and 200 <= status < 300:
        return PostResult(OK, status, detail)
    if status in _POISON:
        return PostResult(REJECTED, status, detail)
    return PostResult(RETRY, status, detail)


def encode_events(events: list[dict[str, Any]]) -> bytes:
    return lite.dumps({"events": events}).encode()


def post_events(
    base_url: str, events: list[dict[str, Any]], *, token: str | None, deadline: float
) -> PostResult:
    """One ``POST /v1/events`` carrying ``events``; never raises, never outlives ``deadline``."""
    body = encode_events(events)
    try:
        status, text = _post(base_url + "/v1/events", body, token, deadline)
    except (OSError, ValueError, TimeoutError) as exc:
        return PostResult(RETRY, None, f"{type(exc).__name__}: {exc}")
    return classify(status, text)


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("hook time budget spent")
    return left


def split_url(url: str) -> tuple[str, str, int, str]:
    """``scheme, host, port, path`` without ``urllib.parse`` (it imports ``re`` and more)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("http", "https"):
        raise ValueError(f"unsupported gateway URL {url!r}")
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


def _post(url: str, body: bytes, token: str | None, deadline: float) -> tuple[int, str]:
    scheme, host, port, path = split_url(url)
    if scheme == "https":
        return _post_https(host, port, path, body, token, deadline)
    head = [
        f"POST {path or '/'} HTTP/1.1",
        f"Host: {host}:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
        "User-Agent: agent-memory-hook",
    ]
    if token:
        head.append(f"Authorization: Bearer {token}")
    request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
    sock = lite.connect(host, port, _remaining(deadline))
    try:
        sock.settimeout(_remaining(deadline))
        sock.sendall(request)
        chunks: list[bytes] = []
        while True:
            sock.settimeout(_remaining(deadline))
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            if _complete(b"".join(chunks)):
                break
    finally:
        sock.close()
    return _parse_response(b"".join(chunks))


def _complete(data: bytes) -> bool:
    """True once headers and a Content-Length body are in (so we need not wait for close)."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                return len(rest) >= int(value.strip())
            except ValueError:
                return False
    return False


def _parse_response(data: bytes) -> tuple[int, str]:
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    fields = status_line.split(" ", 2)
    if len(fields) < 2 or not fields[0].startswith("HTTP/") or not fields[1].isdigit():
        raise ValueError(f"not an HTTP response: {status_line[:80]!r}")
    return int(fields[1]), rest.decode("utf-8", errors="replace")[:500]


def _post_https(
    host: str, port: int, path: str, body: bytes, token: str | None, deadline: float
) -> tuple[int, str]:
    import http.client  # lazy: TLS gateways only

    conn = http.client.HTTPSConnection(host, port, timeout=_remaining(deadline))
    headers = {"Content-Type": "application/json", "User-Agent": "agent-memory-hook"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        conn.request("POST", path or "/", body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read(500).decode("utf-8", errors="replace")
    finally:
        conn.close()
