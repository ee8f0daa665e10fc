"""Small helpers shared by the end-to-end tests: polling with bounds, event factories."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

T = TypeVar("T")


def eventually(check: Callable[[], T | None], timeout: float = 30.0, what: str = "condition") -> T:
    """Poll until ``check`` returns something truthy; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.1)
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
        status = httpx.get(f"{query_url}/v1/status", headers=headers, timeout=5).json()
    except (httpx.HTTPError, ValueError):
        return False
    caught_up = all(
        c.get("exists") and c["pending"] == 0 and c["ack_pending"] == 0
        for c in status.get("consumers", [])
        if c.get("name") in consumers
    )
    return caught_up and status.get("events_stored") == expected


def stored_count(query_url: str, headers: dict[str, str] | None = None) -> int:
    status = httpx.get(f"{query_url}/v1/status", headers=headers, timeout=5).json()
    return int(status["events_stored"])
