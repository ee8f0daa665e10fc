"""Small helpers shared by the end-to-end tests: polling with bounds, event factories, and
reading a service's Prometheus ``/metrics``."""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import nats
import orjson
import psycopg
import tantivy
from psycopg.rows import dict_row

from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.subjects import STREAM_RECORDED, recorded_subject
from tests import plain_http

T = TypeVar("T")


def eventually(check: Callable[[], T | None], timeout: float = 30.0, what: str = "condition") -> T:
    """Poll until ``check`` returns something truthy; fail with ``what`` after ``timeout``.

    The pause grows from 50 ms to half a second: a condition met at once is seen at once, and a
    drain of a minute is not asked about 600 times (a status answer costs the query service,
    Postgres and NATS some milliseconds of CPU each, taken from the pipeline being waited for).
    """
    deadline = time.monotonic() + timeout
    last: T | None = None
    pause = 0.05
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 1.5, 0.5)
    raise AssertionError(f"{what} not reached within {timeout}s (last: {last!r})")


def make_event(
    i: int, *, project: str = "proj", session: str = "s1", **over: Any
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "event_id": f"e-{i:06d}",
        "ts": 1_767_225_600_000 + i * 1000,
        "project_id": project,
        "agent_id": "claude-code",
        "session_id": session,
        "role": "user" if i % 2 == 0 else "assistant",
        "type": "message",
        "text": f"event number {i}: we decided the schema keeps events append-only",
    }
    event.update(over)
    return event


def drained(
    query_url: str,
    expected: int,
    headers: dict[str, str] | None = None,
    consumers: tuple[str, ...] = ("recorder",),
) -> bool:
    """True when ``expected`` events are stored and the named consumers have caught up.

    The status endpoint's own ``drained`` covers every pipeline stage; event-log tests run only
    the services they need, so they look at the consumers of those services.
    """
    try:
        status = plain_http.get(f"{query_url}/v1/status", headers=headers, timeout=5).json()
    except (httpx.HTTPError, ValueError):
        return False
    caught_up = all(
        c.get("exists") and c.get("caught_up")
        for c in status.get("consumers", [])
        if c.get("name") in consumers
    )
    return caught_up and status.get("events_stored") == expected


def stored_count(query_url: str, headers: dict[str, str] | None = None) -> int:
    status = plain_http.get(f"{query_url}/v1/status", headers=headers, timeout=5).json()
    return int(status["events_stored"])


def recorded_backlog(nats_url: str, durable: str) -> int:
    """Messages of RECORDED that ``durable`` has not yet acknowledged (pending + in flight)."""

    async def info() -> int:
        nc = await nats.connect(nats_url)
        try:
            ci = await nc.jetstream().consumer_info(STREAM_RECORDED, durable)
            return int(ci.num_pending or 0) + int(ci.num_ack_pending or 0)
        finally:
            await nc.close()

    return asyncio.run(info())


def republish_recorded(nats_url: str, pg_dsn: str) -> int:
    """Put every recorded event on RECORDED once more, under new message ids, as a recorder
    retry after a lost ack would; returns how many."""
    with psycopg.connect(pg_dsn, row_factory=dict_row) as conn:
        events = [Event.from_row(r) for r in conn.execute("SELECT * FROM events").fetchall()]

    async def publish() -> None:
        nc = await nats.connect(nats_url)
        try:
            js = nc.jetstream()
            for e in events:
                await js.publish(
                    recorded_subject(e.tenant, e.project_id),
                    e.to_wire(),
                    headers={"Nats-Msg-Id": f"again/{e.event_id}"},
                )
        finally:
            await nc.close()

    asyncio.run(publish())
    return len(events)


# --- Prometheus expositions (a service's /metrics) ---------------------------------------------

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$")


def metric_samples(text: str) -> dict[str, float]:
    """``name{labels}`` -> value, for every sample line of an exposition."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def value(found: dict[str, float], name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels`` (0 when none)."""
    want = [f'{k}="{v}"' for k, v in labels.items()]
    return sum(
        v
        for key, v in found.items()
        if key.split("{", 1)[0] == name and all(w in key for w in want)
    )


def scrape(url: str) -> dict[str, float]:
    """A service's ``/metrics`` as samples; fails the test unless it answers 200 text."""
    r = plain_http.get(f"{url}/metrics", timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    return metric_samples(r.text)


def tantivy_folder_ids(folder: Path) -> Counter[str]:
    """How many live documents carry each id in one Tantivy folder, read with Tantivy itself
    (no adapter in between): what an audit of the index trusts."""
    ids: Counter[str] = Counter()
    index = tantivy.Index.open(str(folder))
    index.reload()
    searcher = index.searcher()
    if searcher.num_docs == 0:
        return ids
    result = searcher.search(tantivy.Query.all_query(), searcher.num_docs)
    for _score, address in result.hits:
        source = searcher.doc(address).get_first("source")
        if isinstance(source, bytes):
            ids[str(orjson.loads(source)["id"])] += 1
    return ids
