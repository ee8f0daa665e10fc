"""What a web browser may ask of our HTTP services, and the JSON shape of the server's own errors.

**Cross-origin writes.** The services listen on localhost without authentication in local mode,
so any web page a developer opens could POST to them: a "simple" cross-origin request
(``content-type: text/plain``, no preflight) used to be stored as an event, which plants text
into the agent's memory ("always disable TLS verification"). ``CrossOriginGuard`` closes that:

- a state-changing request (POST, PUT, PATCH, DELETE) that a browser marks as coming from
  another site (``Origin`` not this host and not configured, or ``Sec-Fetch-Site:
  cross-site``/``same-site``) gets 403 before the application sees it;
- a request body is accepted as JSON only when declared ``application/json`` (or
  ``application/<x>+json``): the content types a page may send without a CORS preflight
  (``text/plain``, forms) get 415;
- CORS is answered only for the origins in ``AGENT_MEMORY_ALLOWED_ORIGINS`` (the dashboard's
  own origin is same-origin and needs nothing), so no other page can even read an answer.

Agents, hooks, curl and the SDKs send no ``Origin``/``Sec-Fetch-*`` headers and are unaffected.

**DNS rebinding.** A page on ``evil.example`` whose name is re-pointed at 127.0.0.1 is
*same-origin* with the service as far as the browser knows: its requests carry ``Host:
evil.example:PORT`` and a matching ``Origin``, so the checks above pass and the page can read
the answers. The ``Host`` header is the one thing it cannot choose: every request whose host is
not on the allowlist (loopback names, plus ``AGENT_MEMORY_ALLOWED_HOSTS``) is answered
``421 misdirected_request`` before anything else, on every route, ``/mcp`` included (the MCP
SDK's own check is switched off there so that this is the one implementation).

**Errors before the application.** The HTTP parser refuses some requests before any ASGI code
runs (a request line over llhttp's limit, e.g. a 100 KB query string; malformed requests) and
uvicorn answers those in plain text. ``JsonErrorsHttpToolsProtocol`` gives them the same
``{"error", "message", "field"}`` body as every other error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_QUERY_STRING = 8 * 1024  # bytes; every filter of every route fits in a fraction of this
_CORS_METHODS = b"GET, POST, PUT, PATCH, DELETE, OPTIONS"
_CORS_HEADERS = b"authorization, content-type, mcp-session-id, mcp-protocol-version"


LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})


def parse_hosts(value: str | Iterable[str] | None) -> frozenset[str] | None:
    """``"memory.example.com, *.corp.example, q:8701"`` -> lowercased entries; None or ``*``
    among them: any host."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    hosts = frozenset(h.strip().lower().rstrip(".") for h in items if h.strip())
    return None if "*" in hosts else hosts


def split_host(host: str) -> tuple[str, str | None]:
    """``"[::1]:8701"`` -> (``"[::1]"``, ``"8701"``); ``"localhost"`` -> (``"localhost"``, None)."""
    if host.startswith("["):
        name, _, rest = host.partition("]")
        port = rest[1:] if rest.startswith(":") else None
        return name + "]", port
    name, sep, port = host.rpartition(":")
    if sep and port.isdigit():
        return name, port
    return host, None


def host_allowed(host: bytes | None, allowed: frozenset[str] | None) -> bool:
    """Whether a ``Host`` header names this service: a loopback name (no page can own one),
    or an allowlist entry (``name`` any port, ``name:port``, ``*.suffix``)."""
    if allowed is None or host is None:  # no Host at all: HTTP/1.0, never a browser
        return True
    text = host.decode("latin-1").strip().lower()
    name, port = split_host(text)
    name = name.rstrip(".")
    if name in LOOPBACK_HOSTS or name in allowed:
        return True
    if port is not None and f"{name}:{port}" in allowed:
        return True
    return any(e.startswith("*.") and name.endswith(e[1:]) for e in allowed)


def parse_origins(value: str | Iterable[str]) -> frozenset[str]:
    """``"https://a.example, http://localhost:3000"`` -> normalised origins (no trailing /)."""
    items = value.split(",") if isinstance(value, str) else value
    return frozenset(o.strip().rstrip("/").lower() for o in items if o.strip())


def _is_json(content_type: bytes) -> bool:
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (
        media.startswith(b"application/") and media.endswith(b"+json")
    )


def error_body(code: str, message: str, field: str | None = None) -> bytes:
    return orjson.dumps({"error": code, "message": message, "field": field})


class CrossOriginGuard:
    """ASGI middleware: refuse foreign Host names (DNS rebinding), browser cross-site writes,
    non-JSON bodies, overlong queries.

    ``allowed_hosts``: the allowlist beside the loopback names (``""``: loopback only, None:
    any host), normally ``CommonSettings.host_allowlist``.
    """

    def __init__(
        self,
        app: ASGIApp,
        allowed_origins: str | Iterable[str] = "",
        allowed_hosts: str | Iterable[str] | None = "",
    ) -> None:
        self.app = app
        self.allowed = parse_origins(allowed_origins)
        self.hosts = parse_hosts(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        origin = host = fetch_site = content_type = preflight = None
        for name, value in scope["headers"]:
            if name == b"origin":
                origin = value
            elif name == b"host":
                host = value
            elif name == b"sec-fetch-site":
                fetch_site = value
            elif name == b"content-type":
                content_type = value
            elif name == b"access-control-request-method":
                preflight = value
        if not host_allowed(host, self.hosts):
            shown = (host or b"").decode("latin-1")
            await send_error(
                send,
                421,
                "misdirected_request",
                f"this service does not answer to the host {shown!r} "
                "(allow it with AGENT_MEMORY_ALLOWED_HOSTS)",
                "Host",
            )
            return
        if len(scope.get("query_string", b"")) > MAX_QUERY_STRING:
            await send_error(
                send, 414, "uri_too_long", f"query string over {MAX_QUERY_STRING} bytes"
            )
            return
        method = scope["method"]
        allowed_origin = self._allowed(origin)
        if method == "OPTIONS" and origin is not None and preflight is not None:
            if allowed_origin:
                await _send_preflight(send, origin)
            else:
                await send_error(send, 403, "cross_origin", _refused(origin), "Origin")
            return
        if method in UNSAFE_METHODS:
            if origin is not None and not allowed_origin and not _same_origin(origin, host):
                await send_error(send, 403, "cross_origin", _refused(origin), "Origin")
                return
            if fetch_site in (b"cross-site", b"same-site") and not allowed_origin:
                await send_error(
                    send, 403, "cross_origin", "cross-site request refused", "Sec-Fetch-Site"
                )
                return
            if content_type is not None and not _is_json(content_type):
                await send_error(
                    send,
                    415,
                    "unsupported_media_type",
                    "request bodies are JSON: send content-type: application/json",
                    "Content-Type",
                )
                return
        if origin is not None and allowed_origin:
            await self.app(scope, receive, _with_cors(send, origin))
            return
        await self.app(scope, receive, send)

    def _allowed(self, origin: bytes | None) -> bool:
        if origin is None or not self.allowed:
            return False
        return origin.decode("latin-1").rstrip("/").lower() in self.allowed


def _refused(origin: bytes) -> str:
    return (
        f"cross-origin request from {origin.decode('latin-1')!r} refused "
        "(allow it with AGENT_MEMORY_ALLOWED_ORIGINS)"
    )


def _same_origin(origin: bytes, host: bytes | None) -> bool:
    """The page was served by this very service (its own dashboard): scheme-less host match."""
    if host is None:
        return False
    netloc = urlsplit(origin.decode("latin-1")).netloc.lower()
    return bool(netloc) and netloc == host.decode("latin-1").lower()


def _with_cors(send: Send, origin: bytes) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            headers += [(b"access-control-allow-origin", origin), (b"vary", b"Origin")]
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


async def _send_preflight(send: Send, origin: bytes) -> None:
    headers = [
        (b"access-control-allow-origin", origin),
        (b"access-control-allow-methods", _CORS_METHODS),
        (b"access-control-allow-headers", _CORS_HEADERS),
        (b"access-control-max-age", b"600"),
        (b"vary", b"Origin"),
        (b"content-length", b"0"),
    ]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def send_error(
    send: Send,
    status: int,
    code: str,
    message: str,
    field: str | None = None,
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    """Answer an error in the project's JSON shape from plain ASGI code (a middleware)."""
    body = error_body(code, message, field)
    raw = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *headers,
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class JsonErrorsHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, answering requests it cannot parse in our JSON shape."""

    def send_400_response(self, msg: str) -> None:
        body = error_body("bad_request", msg)
        content: list[bytes] = [b"HTTP/1.1 400 Bad Request\r\n"]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend(
            [
                b"content-type: application/json\r\n",
                b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                b"connection: close\r\n",
                b"\r\n",
                body,
            ]
        )
        self.transport.write(b"".join(content))
        self.transport.close()


def uvicorn_options() -> dict[str, Any]:
    """What both HTTP services pass to ``uvicorn.run`` besides the app, host and port."""
    return {
        "loop": "uvloop",
        "http": JsonErrorsHttpToolsProtocol,
        "access_log": False,
        "log_level": "warning",
        "timeout_graceful_shutdown": 5,
    }
