"""The dashboard in team mode and its cross-origin protection, over HTTP, on real processes:
gateway, recorder and query service with tokens configured, the dashboard in front."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.browser.support import dashboard_process
from tests.helpers import eventually, make_event
from tests.stack import module_stack

TOKENS = "tok-dana:default,tok-eve:acme"


@pytest.fixture(scope="module")
def dashboard(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        AGENT_MEMORY_TOKENS=TOKENS,
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    ) as stack:
        r = plain_http.post(
            f"{stack.gateway_url}/v1/events",
            json={"events": [make_event(1, project="dana-project")]},
            headers={"authorization": "Bearer tok-dana"},
        )
        assert r.status_code == 202, r.text
        with dashboard_process(stack) as url:
            yield url


@contextmanager
def signed_in(url: str, key: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=30) as client:
        r = client.post("/login", json={"key": key})
        assert r.status_code == 204, r.text
        cookie = r.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        yield client


def test_without_a_key_every_page_asks_to_sign_in(dashboard: str) -> None:
    pages = ("/", "/projects/p", "/toc", "/toc/nodes/n", "/search?q=x", "/pipeline", "/topics")
    for page in (*pages, "/retention", "/erasures", "/keys"):
        r = plain_http.get(dashboard + page)
        assert r.status_code == 303, (page, r.status_code)
        assert r.headers["location"].startswith("/login?next=/"), page
    assert plain_http.get(dashboard + "/api/v1/projects").status_code == 401
    assert plain_http.get(dashboard + "/login").status_code == 200


def test_a_refused_key_names_the_field(dashboard: str) -> None:
    r = plain_http.post(dashboard + "/login", json={"key": "tok-nobody"})
    assert r.status_code == 401 and r.json()["field"] == "key"
    r = plain_http.post(dashboard + "/login", json={})
    assert r.status_code == 422 and "key" in r.text


def test_a_key_sees_its_own_tenant_only(dashboard: str) -> None:
    with signed_in(dashboard, "tok-dana") as dana, signed_in(dashboard, "tok-eve") as eve:
        eventually(lambda: "dana-project" in dana.get("/").text, timeout=60, what="listed")
        assert dana.get("/api/v1/projects").json()["projects"][0]["project_id"] == "dana-project"
        assert "dana-project" not in eve.get("/").text
        assert eve.get("/api/v1/projects").json() == {"projects": []}
        assert dana.post("/logout").status_code == 204


def test_cross_origin_writes_are_refused(dashboard: str) -> None:
    with signed_in(dashboard, "tok-dana") as dana:
        _refused_from_elsewhere(dana)


def _refused_from_elsewhere(dana: httpx.Client) -> None:
    body = {"query": "anything"}
    evil = {"origin": "https://evil.example", "x-dashboard": "1"}
    assert dana.post("/api/v1/search", json=body, headers=evil).status_code == 403
    site = {"sec-fetch-site": "cross-site", "x-dashboard": "1"}
    assert dana.post("/api/v1/search", json=body, headers=site).status_code == 403
    no_header = dana.post("/api/v1/search", json=body)
    assert no_header.status_code == 403 and "x-dashboard" in no_header.json()["message"]
    form = dana.post(
        "/api/v1/search",
        content=b"query=x",
        headers={"content-type": "application/x-www-form-urlencoded", "x-dashboard": "1"},
    )
    assert form.status_code == 415
    preflight = dana.options(
        "/api/v1/search",
        headers={"origin": "https://evil.example", "access-control-request-method": "POST"},
    )
    assert preflight.status_code == 403
    ok = dana.post("/api/v1/search", json=body, headers={"x-dashboard": "1"})
    assert ok.status_code == 200, ok.text


def test_pages_forbid_framing_and_foreign_scripts(dashboard: str) -> None:
    with signed_in(dashboard, "tok-dana") as dana:
        r = dana.get("/")
    csp = r.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
    assert r.headers["x-frame-options"] == "DENY"
    assert '<script src="/static/app.js"' in r.text and "http" not in r.text.split("<main>")[0]
