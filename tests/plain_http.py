"""The tests' one-off HTTP calls: ``httpx``'s own functions, with one SSL context per process.

``httpx.get(url)`` builds a client per call, and each client builds an SSL context, loading
certifi's CA bundle: about 45 ms of CPU, even for the plain-http URLs the tests call. A test
polling ``/v1/status`` every 100 ms spent half a core on it, taken from the very services it
waited for, and a stack's readiness poll (every 50 ms) nearly a whole core while each service
started. These functions are ``httpx.request`` with a context built once: each call still
opens its own connection and closes it, as before (no pool is shared between tests or
servers). ``make lint`` refuses ``httpx.get`` and its siblings (ruff ``TID251``).
"""

from __future__ import annotations

from typing import Any

import httpx

_CONTEXT = httpx.create_ssl_context()


def request(method: str, url: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, url, verify=_CONTEXT, **kwargs)  # noqa: TID251


def get(url: str, **kwargs: Any) -> httpx.Response:
    return request("GET", url, **kwargs)


def post(url: str, **kwargs: Any) -> httpx.Response:
    return request("POST", url, **kwargs)


def put(url: str, **kwargs: Any) -> httpx.Response:
    return request("PUT", url, **kwargs)


def patch(url: str, **kwargs: Any) -> httpx.Response:
    return request("PATCH", url, **kwargs)


def delete(url: str, **kwargs: Any) -> httpx.Response:
    return request("DELETE", url, **kwargs)


def options(url: str, **kwargs: Any) -> httpx.Response:
    return request("OPTIONS", url, **kwargs)


def head(url: str, **kwargs: Any) -> httpx.Response:
    return request("HEAD", url, **kwargs)
