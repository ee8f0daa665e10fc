"""The dashboard's own browser protections, on top of ``CrossOriginGuard``.

- The key lives in an ``HttpOnly``, ``SameSite=Strict`` cookie: page scripts cannot read it and
  no other site's page can make the browser send it.
- Writes through ``/api`` also need the ``x-dashboard`` header, which a page of another origin
  cannot set without a CORS preflight that ``CrossOriginGuard`` refuses.
- Every page forbids framing (clickjacking) and loads scripts and styles only from this origin,
  so no CDN can be pulled in, by us or by an injected tag.
"""

from __future__ import annotations

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
