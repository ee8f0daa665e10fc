"""Every route of the HTTP services (gateway, query, pruner), and every MCP tool, with every role:
allowed or forbidden.

The routes are enumerated from the apps themselves (``app.routes``), so a route added anywhere
is walked here. A route must declare its role (``dependencies=[READ]``, see
``agent_memory_common.auth.access`` and docs/architecture.md, "A route"); one that does not fails
``test_every_route_declares_its_role`` by name (and is served admin-only meanwhile).

Each route is then called on the real services with a key of each role, with placeholder path
parameters and no body: a role below the declaration must get 403, a role at or above it must
get past authorization (any answer but 401/403: usually 404 or 422 for the placeholder input).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from agent_memory_common.auth.access import ROLES, Role, app_routes, declared_access
from agent_memory_embedded.servers import PostgresServer
from agent_memory_gateway.app import create_app as gateway_app
from agent_memory_gateway.settings import Settings as GatewaySettings
from agent_memory_pruner.app import create_app as pruner_app
from agent_memory_pruner.settings import Settings as PrunerSettings
from agent_memory_query.app import create_app as query_app
from agent_memory_query.settings import Settings as QuerySettings
from tests import plain_http
from tests.stack import Stack, module_stack

BOOT = {"authorization": "Bearer boot-token"}
_RANK = {None: 0, "reader": 1, "writer": 2, "admin": 3}

# The role of each MCP tool: the role of the REST route it calls with the caller's key.
TOOL_ROLES: dict[str, Role] = {
    "memory_search": "reader",
    "memory_brief": "reader",
    "memory_toc": "reader",
    "memory_expand": "reader",
    "memory_timeline": "reader",
    "memory_note": "writer",
    "memory_topics": "reader",
}


def apps() -> dict[str, FastAPI]:
    return {
        "gateway": gateway_app(GatewaySettings()),
        "query": query_app(QuerySettings()),
        "pruner": pruner_app(PrunerSettings()),
    }


def api_routes() -> list[tuple[str, str, APIRoute]]:
    """(service, path, route) of every API route of the apps."""
    return [
        (service, path, route) for service, app in apps().items() for path, route in app_routes(app)
    ]


def test_every_route_declares_its_role() -> None:
    routes = api_routes()
    assert {service for service, _, _ in routes} == set(apps())
    missing = [
        f"{service}: {sorted(route.methods or ())} {path}"
        for service, path, route in routes
        if declared_access(route) is None
    ]
    assert not missing, (
        "routes without a role declaration (add dependencies=[READ|WRITE|ADMIN|PUBLIC], "
        f"agent_memory_common.auth.access): {missing}"
    )


def _sync_calls(dependant: Dependant) -> Iterator[str]:
    """Plain ``def`` callables in a route's dependency tree; its root's ``call`` is the endpoint."""
    call = dependant.call
    if call is not None:
        method = call if inspect.isroutine(call) else type(call).__call__  # Access() instances
        if not inspect.iscoroutinefunction(method):
            yield getattr(call, "__qualname__", repr(call))
    for dep in dependant.dependencies:
        yield from _sync_calls(dep)


def test_no_route_waits_for_the_thread_pool() -> None:
    """FastAPI runs a plain ``def`` endpoint or dependency in its thread pool: a thread hop and
    the GIL back on every request (~1 ms of each search when ``get_context`` was one)."""
    routes = api_routes()
    assert routes
    slow = sorted(
        {
            f"{service} {path}: {name}"
            for service, path, route in routes
            for name in _sync_calls(route.dependant)
        }
    )
    assert not slow, f"make these async def (they wait for the thread pool): {slow}"


@pytest.fixture(scope="module")
def secured(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        AGENT_MEMORY_TOKENS="boot-token:acme",
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
        AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S="3600",
    ) as s:
        s.start("pruner")
        yield s


@pytest.fixture(scope="module")
def keys(secured: Stack) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for role in ROLES:
        r = plain_http.post(f"{secured.query_url}/v1/keys", json={"role": role}, headers=BOOT)
        assert r.status_code == 201, r.text
        found[role] = {"authorization": f"Bearer {r.json()['secret']}"}
    return found


def _url(stack: Stack, service: str, path: str) -> str:
    base = {"gateway": stack.gateway_url, "query": stack.query_url, "pruner": stack.pruner_url}
    return base[service] + re.sub(r"\{[^}]+\}", "x", path)


def test_every_route_with_every_role(secured: Stack, keys: dict[str, dict[str, str]]) -> None:
    wrong: list[str] = []
    walked = 0
    for service, path, route in api_routes():
        access = declared_access(route)
        needed = access.role if access is not None else "admin"
        for method in sorted((route.methods or set()) - {"HEAD", "OPTIONS"}):
            url = _url(secured, service, path)
            anonymous = plain_http.request(method, url, timeout=30).status_code
            if needed is not None and anonymous != 401:
                wrong.append(f"{method} {path} without a key: {anonymous}, not 401")
            for role in ROLES:
                status = plain_http.request(method, url, headers=keys[role], timeout=30).status_code
                allowed = _RANK[role] >= _RANK[needed]
                if allowed and status in (401, 403):
                    wrong.append(f"{method} {path} as {role}: {status}, should pass")
                if not allowed and status != 403:
                    wrong.append(f"{method} {path} as {role}: {status}, not 403")
                walked += 1
    assert walked >= 3 * 25, walked
    assert not wrong, "\n".join(wrong)


def test_a_reader_reads_the_recall_switch_and_only_an_admin_sets_it(
    secured: Stack, keys: dict[str, dict[str, str]]
) -> None:
    """``PUT /v1/projects/{id}/recall`` turns injection off for every runtime: an admin's
    call, like the retention overrides; any reader of the project may see the switch."""
    url = f"{secured.query_url}/v1/projects/p/recall"
    off = {"injection": "off"}
    assert plain_http.get(url, headers=keys["reader"], timeout=10).json()["injection"] == "on"
    assert plain_http.put(url, json=off, timeout=10).status_code == 401
    for role in ("reader", "writer"):
        r = plain_http.put(url, json=off, headers=keys[role], timeout=10)
        assert r.status_code == 403, f"{role}: {r.text}"
    other = plain_http.post(
        f"{secured.query_url}/v1/keys",
        json={"role": "admin", "projects": ["q"]},
        headers=BOOT,
        timeout=10,
    ).json()["secret"]
    elsewhere = {"authorization": f"Bearer {other}"}
    for method, body in (("GET", None), ("PUT", off)):
        r = plain_http.request(method, url, json=body, headers=elsewhere, timeout=10)
        assert r.status_code == 403 and r.json()["field"] == "project_id", r.text
    try:
        r = plain_http.put(url, json=off, headers=keys["admin"], timeout=10)
        assert r.status_code == 200 and r.json()["injection"] == "off", r.text
        assert plain_http.get(url, headers=keys["reader"], timeout=10).json()["injection"] == "off"
    finally:
        plain_http.put(url, json={"injection": "on"}, headers=keys["admin"], timeout=10)


async def test_every_mcp_tool_with_every_role(
    secured: Stack, keys: dict[str, dict[str, str]]
) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    args: dict[str, dict[str, Any]] = {
        "memory_search": {"query": "anything", "project_id": "p"},
        "memory_brief": {"project_id": "p"},
        "memory_toc": {"project_id": "p"},
        "memory_expand": {"id": "e-1"},
        "memory_timeline": {"since": "2020-01-01T00:00:00Z", "project_id": "p"},
        "memory_note": {"text": "a note", "project_id": "p"},
        "memory_topics": {"project_id": "p"},
    }
    for role in ROLES:
        async with httpx2.AsyncClient(headers=keys[role], timeout=30) as http:
            transport = streamable_http_client(f"{secured.query_url}/mcp", http_client=http)
            async with Client(transport, read_timeout_seconds=30) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert names == set(TOOL_ROLES), "a tool without a role in TOOL_ROLES"
                for name, needed in TOOL_ROLES.items():
                    result = await client.call_tool(name, args[name])
                    text = " ".join(getattr(c, "text", "") for c in result.content)
                    forbidden = result.is_error and "or above" in text  # the 403's message
                    if _RANK[role] >= _RANK[needed]:
                        assert not forbidden, f"{name} as {role}: {text}"
                    else:
                        assert forbidden, f"{name} as {role} should be refused: {text}"
