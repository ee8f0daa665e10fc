"""What a search did, as Prometheus metrics: latency by intent, time per tier, fallbacks.

Read from the outcome's explain block (the brainstem's own account of each tier), so the
metrics and ``explain`` can never disagree.
"""

from __future__ import annotations

from typing import Any

from agent_memory_common.core.metrics import SEARCH_FALLBACKS, SEARCH_SECONDS, SEARCH_TIER_SECONDS


def observe_search(intent: str, explain: dict[str, Any], seconds: float) -> None:
    SEARCH_SECONDS.labels(intent).observe(seconds)
    tiers = explain.get("tiers")
    if not isinstance(tiers, dict):
        return
    for tier, run in tiers.items():
        if not isinstance(run, dict):
            continue
        status = run.get("status")
        ms = run.get("ms")
        if status in ("used", "failed") and isinstance(ms, int | float):
            SEARCH_TIER_SECONDS.labels(tier).observe(ms / 1000)
        if status == "failed" or (status == "skipped" and run.get("reason") != "not needed"):
            SEARCH_FALLBACKS.labels(tier).inc()
