"""POST events to the gateway within a deadline, with the standard library only (``wire``).

The outcome is one of three, which is all a caller needs to decide: stored, retry later (spool
it), or refused for good (the event itself is wrong and retrying cannot help).
"""

from __future__ import annotations

from agent_memory_hooks import lite
from agent_memory_hooks.wire import exchange

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

OK = "ok"
RETRY = "retry"
REJECTED = "rejected"

# Statuses that condemn the events themselves; anything else (401, 429, 5xx, no answer) may
# succeed later, so those events are kept.
_POISON = frozenset({400, 413, 422})


class PostResult:
    def __init__(self, outcome: str, status: int | None, detail: str) -> None:
        self.outcome = outcome
        self.status = status
        self.detail = detail

    def __repr__(self) -> str:
        return f"PostResult({self.outcome!r}, {self.status!r}, {self.detail[:80]!r})"

    @property
    def ok(self) -> bool:
        return self.outcome == OK


def classify(status: int | None, detail: str) -> PostResult:
    if status is not None and 200 <= status < 300:
        return PostResult(OK, status, detail)
    if status in _POISON:
        return PostResult(REJECTED, status, detail)
    return PostResult(RETRY, status, detail)


def encode_events(events: list[dict[str, Any]]) -> bytes:
    return lite.dumps({"events": events}).encode()


def post_events(
    base_url: str, events: list[dict[str, Any]], *, token: str | None, deadline: float
) -> PostResult:
    """One ``POST /v1/events`` carrying ``events``; never raises, never outlives ``deadline``."""
    body = encode_events(events)
    try:
        status, answer = exchange(base_url + "/v1/events", body, token, deadline)
    except (OSError, ValueError, TimeoutError) as exc:
        return PostResult(RETRY, None, f"{type(exc).__name__}: {exc}")
    return classify(status, answer[:500].decode("utf-8", errors="replace"))
