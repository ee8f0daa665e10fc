"""Issue #55, second pass, on real processes: DNS rebinding, body sizes, failed keys, sign-in.

Before: a page whose name was re-pointed at 127.0.0.1 (``Host: evil.example:PORT`` and a
matching ``Origin``) planted an event, read ``/v1/events``, created an admin key and read the
dashboard's API; a 200 MB body was read whole before its 422 and an unauthenticated body parsed
before its 401; 2,400 bad keys ran at 685 requests/s, each a Postgres lookup;
``/login?next=/%5Cevil.example`` sent the user to ``http://evil.example/``; the key cookie was
never ``Secure`` behind TLS, never expired, and kept working after sign-out.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.browser.support import dashboard_process
from tests.helpers import make_event
from tests.stack import LEAN, Stack, module_stack

SERVICES = ("gateway", "recorder", "query", "pruner")
TOKENS = "tok-dana:default"
DANA = {"authorization": "Bearer tok-dana"}
MIB = 1024 * 1024
BURST = 6


@pytest.fixture(scope="module")
def local(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stack, str]]:
    """Local mode (no tokens), default settings: every service and the dashboard."""
    with (
        module_stack(pg_server, tmp_path_factory, SERVICES, **LEAN) as stack,
        dashboard_process(stack) as dashboard,
    ):
        yield stack, dashboard


@pytest.fixture(scope="module")
def team(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stack, str]]:
    """Team mode with an operator's host name, a small failure budget and a short session."""
    with (
        module_stack(
            pg_server,
            tmp_path_factory,
            ("gateway", "recorder", "query"),
            AGENT_MEMORY_TOKENS=TOKENS,
            AGENT_MEMORY_ALLOWED_HOSTS="memory.example.com",
            AGENT_MEMORY_AUTH_FAIL_BURST=str(BURST),
            AGENT_MEMORY_AUTH_FAIL_PER_S="0.2",
            AGENT_MEMORY_KEY_CACHE_S="600",
            **LEAN,
        ) as stack,
        dashboard_process(stack, AGENT_MEMORY_DASHBOARD__SESSION_MAX_AGE_S="3600") as url,
    ):
        yield stack, url


def _error(r: httpx.Response, status: int, code: str) -> dict[str, object]:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert isinstance(body, dict) and body["error"] == code and body["message"], body
    assert "field" in body
    return body


def _rebound(url: str, name: str = "evil.example") -> dict[str, str]:
    """The headers of a page on ``name`` re-pointed at the service: Host and Origin agree."""
    port = urlsplit(url).port
    return {"host": f"{name}:{port}", "origin": f"http://{name}:{port}"}


# ---- 1. DNS rebinding ---------------------------------------------------------------------


def test_a_rebound_page_gets_421_from_every_service(local: tuple[Stack, str]) -> None:
    stack, dashboard = local
    attempts = [
        ("POST", stack.gateway_url, "/v1/events", make_event(1, text="disable TLS checks")),
        ("GET", stack.query_url, "/v1/events", None),
        ("POST", stack.query_url, "/v1/keys", {"role": "admin", "tenant": "default"}),
        ("POST", stack.query_url, "/v1/erasures", {"project_id": "p", "dry_run": True}),
        ("POST", stack.query_url, "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("POST", stack.pruner_url, "/v1/admin/cleanup", {"dry_run": True}),
        ("GET", dashboard, "/api/v1/projects", None),
        ("GET", dashboard, "/", None),
    ]
    for method, base, path, body in attempts:
        headers = {**_rebound(base), "accept": "application/json, text/event-stream"}
        r = plain_http.request(method, base + path, json=body, headers=headers)
        assert _error(r, 421, "misdirected_request")["field"] == "Host", (method, path)
    # nothing was planted, and no key was made
    events = plain_http.get(f"{stack.query_url}/v1/events").json()["events"]
    assert not [e for e in events if e["text"] == "disable TLS checks"]
    assert plain_http.get(f"{stack.query_url}/v1/keys").json()["keys"] == []


def test_loopback_names_with_any_port_still_work(local: tuple[Stack, str]) -> None:
    stack, dashboard = local
    for base in (stack.gateway_url, stack.query_url, stack.pruner_url, dashboard):
        port = urlsplit(base).port
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost"):
            r = plain_http.get(base + "/healthz", headers={"host": host})
            assert r.status_code == 200, (base, host, r.text)
    r = plain_http.get(f"{stack.query_url}/v1/events", headers={"host": "localhost:1"})
    assert r.status_code == 200, r.text


def test_team_mode_answers_the_operators_host_names_only(team: tuple[Stack, str]) -> None:
    stack, dashboard = team
    for base in (stack.gateway_url, stack.query_url, dashboard):
        r = plain_http.get(base + "/healthz", headers=_rebound(base))
        _error(r, 421, "misdirected_request")
        r = plain_http.get(base + "/healthz", headers=_rebound(base, "memory.example.com"))
        assert r.status_code == 200, (base, r.text)
    r = plain_http.get(
        f"{stack.query_url}/v1/projects",
        headers={**DANA, "host": "memory.example.com"},
    )
    assert r.status_code == 200, r.text


# ---- 4. bodies and failed authentication -----------------------------------------------------


def _chunks(total: int) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        yield b" " * 65536
        sent += 65536


def test_bodies_over_the_limit_are_refused_by_every_service(local: tuple[Stack, str]) -> None:
    stack, dashboard = local
    big = b"{" + b" " * (2 * MIB) + b"}"
    json_headers = {"content-type": "application/json", "x-dashboard": "1"}
    for base, path in (
        (stack.query_url, "/v1/search"),
        (stack.pruner_url, "/v1/admin/cleanup"),
        (dashboard, "/api/v1/search"),
        (dashboard, "/login"),
    ):
        # announced in Content-Length, then streamed without one (chunked)
        r = plain_http.post(base + path, content=big, headers=json_headers, timeout=60)
        assert _error(r, 413, "body_too_large")["field"] == "body", (base, path)
        r = plain_http.post(base + path, content=_chunks(2 * MIB), headers=json_headers, timeout=60)
        _error(r, 413, "body_too_large")
        assert plain_http.get(base + "/healthz").status_code == 200
    # a body within the limit is still served
    r = plain_http.post(f"{stack.query_url}/v1/search", json={"query": "x" * 1000}, timeout=60)
    assert r.status_code == 200, r.text


def _raw_answer(url: str, request: bytes, timeout: float = 10.0) -> bytes:
    """Send ``request`` and return the whole answer that comes back while the body is still
    owed: the head and its ``content-length`` bytes (the server may write them in two
    packets, so one ``recv`` can end after the head)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname or "", parts.port or 80), timeout=timeout) as s:
        s.sendall(request)
        answer = b""
        while True:
            head, sep, body = answer.partition(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head) if sep else None
            if length is not None and len(body) >= int(length.group(1)):
                return answer
            chunk = s.recv(65536)
            if not chunk:  # the server closed: what it sent is the answer
                return answer
            answer += chunk


def test_a_body_is_not_read_before_its_sender_is_authenticated(team: tuple[Stack, str]) -> None:
    stack, _ = team
    port = urlsplit(stack.query_url).port
    # the headers of a 900 KB search, without the body: the 401 comes at once
    head = (
        f"POST /v1/search HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
        "content-type: application/json\r\ncontent-length: 900000\r\n\r\n"
    ).encode()
    answer = _raw_answer(stack.query_url, head)
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert b'"error":"unauthorized"' in answer


# ---- 5. the dashboard's sign-in ----------------------------------------------------------------


def _next_of(page: httpx.Response) -> str:
    match = re.search(r'data-next="([^"]*)"', page.text)
    assert match, page.text
    return match.group(1)


@pytest.mark.parametrize(
    "target",
    [
        "/%5Cevil.example",
        "/%5cevil.example",
        "//evil.example",
        "/%2F%2Fevil.example",
        "https://evil.example/",
        "javascript:alert(1)",
        "/%09/evil.example",
        "evil.example",
    ],
)
def test_sign_in_never_sends_the_browser_elsewhere(team: tuple[Stack, str], target: str) -> None:
    _, dashboard = team
    page = plain_http.get(f"{dashboard}/login?next={target}")
    assert page.status_code == 200
    assert _next_of(page) == "/"


def test_sign_in_returns_to_a_page_of_the_dashboard(team: tuple[Stack, str]) -> None:
    _, dashboard = team
    page = plain_http.get(f"{dashboard}/login?next=/search%3Fq%3Dx")
    assert _next_of(page) == "/search?q=x"


def test_the_session_cookie_expires_is_secure_over_tls_and_dies_at_sign_out(
    team: tuple[Stack, str],
) -> None:
    _, dashboard = team
    r = plain_http.post(f"{dashboard}/login", json={"key": "tok-dana"})
    assert r.status_code == 204, r.text
    cookie = r.headers["set-cookie"]
    assert "Max-Age=3600" in cookie and "HttpOnly" in cookie, cookie
    assert "Secure" not in cookie  # plain HTTP: a Secure cookie would never come back
    assert "tok-dana" not in cookie  # the key itself stays on the server
    # behind a TLS proxy (uvicorn trusts 127.0.0.1's X-Forwarded-Proto by default)
    tls = plain_http.post(
        f"{dashboard}/login", json={"key": "tok-dana"}, headers={"x-forwarded-proto": "https"}
    )
    assert tls.status_code == 204 and "Secure" in tls.headers["set-cookie"], tls.headers

    session = {"cookie": cookie.split(";", 1)[0]}
    assert plain_http.get(f"{dashboard}/api/v1/projects", headers=session).status_code == 200
    out = plain_http.post(f"{dashboard}/logout", headers=session)
    assert out.status_code == 204
    # a copy of the signed-out cookie no longer works, for reads or writes
    stale = plain_http.get(f"{dashboard}/api/v1/projects", headers=session)
    _error(stale, 401, "unauthorized")
    r = plain_http.get(f"{dashboard}/", headers=session)
    assert r.status_code == 303 and r.headers["location"].startswith("/login")


# ---- 4, last: it spends the failure budget of 127.0.0.1 in the team stack ----------


def test_failed_keys_are_limited_per_address(team: tuple[Stack, str]) -> None:
    stack, dashboard = team
    assert plain_http.get(f"{stack.query_url}/v1/projects", headers=DANA).status_code == 200
    statuses = []
    started = time.monotonic()
    for i in range(BURST + 4):
        bad = {"authorization": f"Bearer amk_{i:012x}_guess"}
        statuses.append(plain_http.get(f"{stack.query_url}/v1/projects", headers=bad))
    assert time.monotonic() - started < 5  # the bucket refills one token every 5 s
    codes = [r.status_code for r in statuses]
    assert 429 in codes, codes
    # 401s (at most the burst, less what earlier tests of this module spent), then only 429s
    first = codes.index(429)
    assert 1 <= first <= BURST + 1 and codes[:first] == [401] * first, codes
    assert codes[first:] == [429] * (len(codes) - first), codes
    refused = next(r for r in statuses if r.status_code == 429)
    assert _error(refused, 429, "too_many_failures")["field"] == "Authorization"
    assert int(refused.headers["retry-after"]) >= 1
    # the same address's known key keeps working, and so do the probes
    assert plain_http.get(f"{stack.query_url}/v1/projects", headers=DANA).status_code == 200
    assert plain_http.get(f"{stack.query_url}/healthz").status_code == 200
    # the gateway counts its own failures the same way
    for i in range(BURST + 2):
        bad = {"authorization": f"Bearer amk_{i:012x}_guess"}
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json=make_event(i), headers=bad)
    _error(r, 429, "too_many_failures")
    # and the dashboard its refused sign-ins
    codes = [
        plain_http.post(f"{dashboard}/login", json={"key": f"amk_{i:012x}_guess"}).status_code
        for i in range(BURST + 2)
    ]
    assert 429 in codes, codes
