"""What a search says it did: each tier's status, the notes of its fallbacks and refinements,
where the milliseconds went, the plan, and the time range it answered for."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from agent_memory_search.brainstem.planner import TIERS, Plan
from agent_memory_search.brainstem.tiers import TierRun
from agent_memory_search.brainstem.timeparse import TimeRange


def explain(
    plan: Plan,
    runs: Mapping[str, TierRun],
    notes: list[str],
    timings: dict[str, float],
    dropped: int,
) -> dict[str, Any]:
    """The explain block of an answer (``near_duplicates_dropped``: by the novelty gate)."""
    tiers: dict[str, dict[str, Any]] = {}
    for tier in TIERS:
        run = runs.get(tier)
        if run is not None and run.error is not None:
            tiers[tier] = {"status": "failed", "reason": run.error, "ms": run.ms}
        elif run is not None and run.skipped is not None:
            tiers[tier] = {"status": "skipped", "reason": run.skipped}
        elif run is not None:
            tiers[tier] = {"status": "used", "hits": len(run.hits), "ms": run.ms}
        elif tier in plan.skipped:
            status = "not requested" if plan.skipped[tier] == "not requested" else "unavailable"
            tiers[tier] = {"status": status, "reason": plan.skipped[tier]}
        else:
            tiers[tier] = {"status": "skipped", "reason": "not needed"}
    return {
        "tiers": tiers,
        "fallbacks": notes,
        "timings_ms": timings,
        "plan": {
            "types": list(plan.types),
            "weights": dict(plan.weights),
            "fetch": plan.fetch,
            "near_duplicates_dropped": dropped,
        },
    }


def _iso(ts: datetime | None) -> str | None:
    return ts.astimezone(UTC).isoformat().replace("+00:00", "Z") if ts else None


def range_json(
    used: TimeRange | None,
    from_query: TimeRange | None,
    explicit: TimeRange | None,
    relaxed: bool,
    period: TimeRange | None = None,
) -> dict[str, Any] | None:
    """``since``/``until``: the period asked about; ``window``: the wider span searched for the
    moments that tell of it (a question about a period, see ``EngineOptions``)."""
    if used is None and from_query is None:
        return None
    shown = explicit if relaxed else (period or used)
    source = "query+request" if from_query and explicit else "query" if from_query else "request"
    out: dict[str, Any] = {
        "since": _iso(shown.since if shown else None),
        "until": _iso(shown.until if shown else None),
        "expression": from_query.expression if from_query else None,
        "source": source,
    }
    if period is not None and not relaxed and used is not None:
        out["window"] = {"since": _iso(used.since), "until": _iso(used.until)}
    if relaxed:
        out["relaxed"] = True
        out["parsed"] = {"since": _iso(from_query.since), "until": _iso(from_query.until)}  # type: ignore[union-attr]
    return out
