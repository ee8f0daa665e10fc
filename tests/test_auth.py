"""Bearer tokens: no or unknown token is 401, and the token (never the body) decides the tenant."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import drained, eventually, make_event
from tests.stack import LEAN, Stack, module_stack

A = {"authorization": "Bearer token-a"}
B = {"authorization": "Bearer token-b"}


@pytest.fixture(scope="module")
def secured(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One stack for the module: only the tenant test stores events (one per tenant, read back
    per tenant); the others are refused or read counters that carry no counts."""
    with module_stack(
        pg_server, tmp_path_factory, AGENT_MEMORY_TOKENS="token-a:acme,token-b:globex", **LEAN
    ) as s:
        yield s


def test_missing_or_unknown_token_is_401(secured: Stack) -> None:
    for headers in ({}, {"authorization": "Bearer nope"}, {"authorization": "Basic abc"}):
        r = plain_http.post(f"{secured.gateway_url}/v1/events", json=make_event(1), headers=headers)
        assert r.status_code == 401, r.text
        assert "www-authenticate" in r.headers
        q = plain_http.get(f"{secured.query_url}/v1/events", headers=headers)
        assert q.status_code == 401


def test_token_decides_tenant_and_tenants_never_see_each_other(secured: Stack) -> None:
    same_id = make_event(1, text="acme's secret plan")
    assert (
        plain_http.post(f"{secured.gateway_url}/v1/events", json=same_id, headers=A).status_code
        == 202
    )
    other = make_event(1, text="globex's plan")
    assert (
        plain_http.post(f"{secured.gateway_url}/v1/events", json=other, headers=B).status_code
        == 202
    )
    eventually(lambda: drained(secured.query_url, 1, A), what="acme's event")
    eventually(lambda: drained(secured.query_url, 1, B), what="globex's event")

    a = plain_http.get(f"{secured.query_url}/v1/events", headers=A).json()["events"]
    b = plain_http.get(f"{secured.query_url}/v1/events", headers=B).json()["events"]
    assert [e["text"] for e in a] == ["acme's secret plan"]
    assert [e["text"] for e in b] == ["globex's plan"]
    assert a[0]["tenant"] == "acme" and b[0]["tenant"] == "globex"
    one = plain_http.get(f"{secured.query_url}/v1/events/e-000001", headers=B).json()
    assert one["text"] == "globex's plan"


def test_a_tenant_sees_no_shared_consumer_counters(secured: Stack) -> None:
    """The consumers serve every tenant: their counts would show another tenant's traffic."""
    for headers in (A, B):
        status = plain_http.get(f"{secured.query_url}/v1/status", headers=headers).json()
        recorder = next(c for c in status["consumers"] if c["name"] == "recorder")
        assert recorder["exists"] and isinstance(recorder["caught_up"], bool)
        assert not {"pending", "ack_pending", "redelivered", "ack_floor", "delivered"} & set(
            recorder
        )
