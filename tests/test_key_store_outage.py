"""Ingest with an API key goes on while Postgres is frozen (issue 55), on the real stack.

Postgres (the session's, every one of its processes) is stopped with SIGSTOP: connections stay
open and nothing answers, the worst case of an outage. Before the bounded lookup, a request with
an API key whose cache entry had expired waited on Postgres as long as it was frozen (18 s of a
20 s freeze) while bootstrap tokens kept getting 202. Now a key the gateway confirmed recently
is served from its cache after ``AGENT_MEMORY_KEY_LOOKUP_TIMEOUT_S``, an unknown key is a quick
503 with ``Retry-After``, and the events accepted during the freeze are stored once Postgres
runs again.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import drained, eventually, make_event
from tests.stack import Stack, module_stack

BOOT = {"authorization": "Bearer boot-token"}
LOOKUP_TIMEOUT_S = 1.0
CLIENT_TIMEOUT_S = 6.0  # a request still waiting on the frozen Postgres fails here


@pytest.fixture(scope="module")
def stack(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        AGENT_MEMORY_TOKENS="boot-token:acme",
        AGENT_MEMORY_KEY_CACHE_S="1",  # the key's entry is stale by the time Postgres freezes
        AGENT_MEMORY_KEY_LOOKUP_TIMEOUT_S=str(LOOKUP_TIMEOUT_S),
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    ) as s:
        yield s


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Postgres' backends and workers), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            # pid (comm) state ppid ...: comm may hold spaces, so split after its ')'
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@contextlib.contextmanager
def frozen(server: PostgresServer) -> Iterator[None]:
    """Every Postgres process stopped (the postmaster first: no new backend), then resumed."""
    assert server.pid is not None
    stopped = [server.pid]
    os.kill(server.pid, signal.SIGSTOP)
    try:
        for child in _children(server.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGSTOP)
                stopped.append(child)
        yield
    finally:
        for pid in reversed(stopped):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def _post(stack: Stack, event: dict[str, object], key: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    r = plain_http.post(
        f"{stack.gateway_url}/v1/events",
        json=event,
        headers={"authorization": f"Bearer {key}"},
        timeout=CLIENT_TIMEOUT_S,
    )
    return r, time.monotonic() - started


def test_a_known_key_keeps_ingesting_and_an_unknown_one_is_a_quick_503(
    stack: Stack, pg_server: PostgresServer
) -> None:
    issued = plain_http.post(
        f"{stack.query_url}/v1/keys", json={"role": "writer"}, headers=BOOT, timeout=30
    )
    assert issued.status_code == 201, issued.text
    key = issued.json()["secret"]
    never_seen = plain_http.post(
        f"{stack.query_url}/v1/keys", json={"role": "writer"}, headers=BOOT, timeout=30
    ).json()["secret"]  # a valid key, but the gateway has never checked it
    first, _ = _post(stack, make_event(1, session="outage"), key)
    assert first.status_code == 202, first.text  # checked once: in the gateway's cache
    time.sleep(1.5)  # past AGENT_MEMORY_KEY_CACHE_S: the next request must ask Postgres

    with frozen(pg_server):
        answers = [_post(stack, make_event(i, session="outage"), key) for i in (2, 3, 4)]
        unknown, unknown_took = _post(stack, make_event(9, session="outage"), never_seen)

    for r, took in answers:
        assert r.status_code == 202, r.text
        assert took < LOOKUP_TIMEOUT_S + 2.5, took  # one lookup's wait at most, never a hang
    assert unknown.status_code == 503, unknown.text
    assert unknown.headers["retry-after"] and unknown.json()["error"] == "unavailable"
    assert unknown_took < LOOKUP_TIMEOUT_S + 2.5, unknown_took

    # Postgres runs again: what was accepted during the freeze is stored, and the key that was
    # refused then works now
    eventually(lambda: drained(stack.query_url, 4, BOOT), timeout=60, what="4 events stored")
    again, _ = _post(stack, make_event(9, session="outage"), never_seen)
    assert again.status_code == 202, again.text
