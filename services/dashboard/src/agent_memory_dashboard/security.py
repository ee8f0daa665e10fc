"""The dashboard's own browser protections, on top of ``CrossOriginGuard``.

- The key stays on the server: the browser holds an ``HttpOnly``, ``SameSite=Strict`` cookie
  with a random session id (page scripts cannot read it, no other site's page can make the
  browser send it, and a copied cookie does not reveal the key). The session ends after
  ``session_max_age_s`` (the cookie's ``Max-Age`` too) or at sign-out, when this process
  forgets it: a signed-out cookie no longer works. Sessions live in this process, so a restart
  signs everyone out and several replicas need a sticky load balancer.
- The cookie is ``Secure`` whenever the request came over HTTPS (uvicorn takes the scheme from
  ``X-Forwarded-Proto`` only from ``trusted_proxies``).
- After sign-in the browser goes only to a path of this site (``safe_next``): never
  ``//host``, ``/\\host`` (``%5C``) or another scheme, which browsers read as another site.
- Writes through ``/api`` also need the ``x-dashboard`` header, which a page of another origin
  cannot set without a CORS preflight that ``CrossOriginGuard`` refuses.
- Every page forbids framing (clickjacking) and loads scripts and styles only from this origin,
  so no CDN can be pulled in, by us or by an injected tag.
"""

from __future__ import annotations

import secrets
import time
from urllib.parse import unquote, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

KEY_COOKIE = "am_key"
WRITE_HEADER = "x-dashboard"

_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]


class SecurityHeaders:
    """ASGI middleware adding the headers above to every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *_HEADERS]}
            await send(message)

        await self.app(scope, receive, wrapped)


def safe_next(target: str | None) -> str:
    """Where to go after sign-in: ``target`` if it is a path of this site, else ``/``."""
    if not target:
        return "/"
    for text in (target, unquote(target)):
        if not text.startswith("/") or text.startswith("//") or "\\" in text:
            return "/"
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
            return "/"
        parts = urlsplit(text)
        if parts.scheme or parts.netloc:
            return "/"
    return target


class Sessions:
    """Signed-in sessions: random id -> (API key, expiry), in this process."""

    MAX = 10_000

    def __init__(self, max_age_s: int) -> None:
        self.max_age_s = max_age_s
        self._sessions: dict[str, tuple[str, float]] = {}

    def open(self, key: str) -> str:
        now = time.monotonic()
        if len(self._sessions) >= self.MAX:
            self._sessions = {s: v for s, v in self._sessions.items() if v[1] > now}
            while len(self._sessions) >= self.MAX:  # still full: the oldest go first
                del self._sessions[next(iter(self._sessions))]
        session_id = secrets.token_urlsafe(32)
        self._sessions[session_id] = (key, now + self.max_age_s)
        return session_id

    def key(self, session_id: str | None) -> str | None:
        """The session's key; None when unknown, signed out or expired."""
        if not session_id:
            return None
        found = self._sessions.get(session_id)
        if found is None:
            return None
        if found[1] <= time.monotonic():
            del self._sessions[session_id]
            return None
        return found[0]

    def close(self, session_id: str | None) -> None:
        if session_id:
            self._sessions.pop(session_id, None)
