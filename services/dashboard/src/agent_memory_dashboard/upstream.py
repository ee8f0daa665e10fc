"""The query service's public API, called with the signed-in user's key.

The dashboard holds no data and no privileges of its own: every page is one or a few API calls
made with the key the user signed in with (none in local mode), so the dashboard shows exactly
what that key may see, and the query service enforces every rule in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx


class SignInRequired(Exception):
    """The API answered 401: no key, or a key it does not accept."""


@dataclass(frozen=True)
class Answer:
    """An API answer: status and JSON body (``None`` when the body is not JSON)."""

    status: int
    body: Any
    retry_after: str | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def unavailable(self) -> bool:
        """The route does not exist on this server (a feature not deployed there)."""
        return self.status in (404, 405) and _route_missing(self.body)

    @property
    def message(self) -> str:
        if isinstance(self.body, dict) and "message" in self.body:
            return str(self.body["message"])
        return f"HTTP {self.status}"


def _route_missing(body: Any) -> bool:
    """FastAPI's answer for an unknown path carries no field; a missing resource names one."""
    return not (isinstance(body, dict) and body.get("field"))


class QueryApi:
    def __init__(self, base_url: str, timeout_s: float) -> None:
        self.client = httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=timeout_s)

    async def close(self) -> None:
        await self.client.aclose()

    async def call(
        self,
        method: str,
        path: str,
        key: str | None,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
    ) -> Answer:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        try:
            r = await self.client.request(
                method,
                path,
                params={k: v for k, v in (params or {}).items() if v not in (None, "")},
                json=json,
                headers=headers,
            )
        except httpx.HTTPError as exc:
            return Answer(503, {"error": "unavailable", "message": f"query service: {exc}"})
        if r.status_code == 401:
            raise SignInRequired
        try:
            body = r.json()
        except ValueError:
            body = None
        return Answer(r.status_code, body, r.headers.get("retry-after"))

    async def get(self, path: str, key: str | None, **params: Any) -> Answer:
        return await self.call("GET", path, key, params=params)

    async def forward(
        self, method: str, path: str, key: str | None, query: bytes, body: bytes
    ) -> httpx.Response:
        """The JavaScript's calls, passed through as they are (with the key added)."""
        headers = {"content-type": "application/json"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        url = path + (f"?{query.decode('latin-1')}" if query else "")
        return await self.client.request(method, url, content=body or None, headers=headers)
