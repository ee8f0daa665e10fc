"""From intent and the tiers that are up to a plan: what to ask, in which order, how deep.

Tiers, fastest and best first:
- ``vector`` and ``bm25``: the two "teleport" indexes, asked together and fused;
- ``toc``: term matching over the table of contents (no index needed, slower, coarser);
- ``scan``: full-text over the raw events table in Postgres (always there while Postgres is).

The chain is vector down -> BM25 -> TOC -> raw scan: later tiers run only when the earlier
ones are down or did not find enough good results. ``tiers`` in a request restricts the set
(ablations); the chain then only falls back within that set.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from agent_memory_search.brainstem.intent import Intent

TIERS: tuple[str, ...] = ("vector", "bm25", "toc", "scan")
PRIMARY: tuple[str, ...] = ("vector", "bm25")
FALLBACK: tuple[str, ...] = ("toc", "scan")

# Which kinds of item each intent wants, best first: moments answer questions, overviews
# answer "what happened" and topic surveys.
TYPES: dict[str, tuple[str, ...]] = {
    "answer": ("event", "grip"),
    "locate": ("event", "grip"),
    "explore": ("toc_node", "grip", "event"),
    "time-boxed": ("toc_node", "grip", "event"),
}
# RRF weight per tier and intent. For moments (answer, locate) the words lead: a question
# shares its rare words (names, places, things) with the turn that answers it, or with the turn
# before it (the BM25 context), while MiniLM ranks the small talk around them close too. On
# LoCoMo (raw turns, speaker titles, exact vectors) turn recall@10 was 0.646 for BM25 alone,
# 0.647 fused at equal weights, 0.672 with vectors at 0.3 and 0.658 at 0.5: the vector tier
# adds the paraphrases BM25 misses without pushing word matches out of the first ten.
# The fallback tiers (coarse term matching) stay below the weakest teleport tier: when BM25 is
# down they fill in behind the vectors, never in front of them.
WEIGHTS: dict[str, dict[str, float]] = {
    "answer": {"vector": 0.3, "bm25": 1.0, "toc": 0.15, "scan": 0.15},
    "locate": {"vector": 0.3, "bm25": 1.0, "toc": 0.15, "scan": 0.25},
    "explore": {"vector": 1.0, "bm25": 0.8, "toc": 0.7, "scan": 0.5},
    "time-boxed": {"vector": 1.0, "bm25": 1.0, "toc": 0.7, "scan": 0.7},
}


@dataclass(frozen=True)
class TierState:
    name: str
    up: bool
    reason: str | None = None  # why not up: "not configured", "timeout", the error...


@dataclass(frozen=True)
class Plan:
    intent: Intent
    primary: tuple[str, ...]  # asked together, fused
    chain: tuple[str, ...]  # asked one by one while results are not enough (skipping down ones)
    types: tuple[str, ...]
    weights: Mapping[str, float]
    fetch: int  # candidates asked from each tier
    need: int  # good results that end the search early
    skipped: Mapping[str, str] = field(default_factory=dict)  # tier -> why it will not run
    fallbacks: tuple[str, ...] = ()  # human-readable notes for explain


DEFAULT_CANDIDATES = 40
MAX_CANDIDATES = 300


def fetch_depth(limit: int, candidates: int = DEFAULT_CANDIDATES) -> int:
    """Candidates asked from each tier: deep enough that an item ranked low by one tier and
    high by the other is seen by both (RRF needs the overlap), bounded for latency.

    The trade-off, measured: on LoCoMo (before speaker titles and BM25 context) turn
    recall@10 was 0.501 with 40 candidates and 0.538 with 100; with them, the offline study
    found 0.698 against 0.702, too little to pay for. A graph (HNSW) search over a wide scope
    at 100,000 vectors takes about 10 ms for 40 and 21 ms for 100; a narrow scope (one
    project) is searched exactly and costs about the same either way. The depth grows only
    with a limit above ``candidates``, so a larger limit up to it just appends to the same
    first ten.
    """
    return min(max(candidates, limit), MAX_CANDIDATES)


def make_plan(
    intent: Intent,
    limit: int,
    states: Mapping[str, TierState],
    requested: Collection[str] | None = None,
    candidates: int = DEFAULT_CANDIDATES,
) -> Plan:
    allowed = [t for t in TIERS if requested is None or t in requested]
    skipped: dict[str, str] = {}
    for tier in TIERS:
        if tier not in allowed:
            skipped[tier] = "not requested"
    down = {t: states[t] for t in allowed if t in states and not states[t].up}
    for tier, state in down.items():
        skipped[tier] = f"unavailable: {state.reason or 'down'}"
    primary = tuple(t for t in PRIMARY if t in allowed and t not in down)
    # down fallback tiers stay in the chain, so that the executor can say it passed them
    chain = tuple(t for t in FALLBACK if t in allowed)
    notes: list[str] = []
    lost = [t for t in PRIMARY if t in down]
    if lost:
        instead = primary or tuple(t for t in chain if t not in down)[:1] or ("nothing",)
        reasons = "; ".join(down[t].reason or "down" for t in lost)
        notes.append(f"{' and '.join(lost)} unavailable ({reasons}) -> {' + '.join(instead)}")
    return Plan(
        intent=intent,
        primary=primary,
        chain=chain,
        types=TYPES[intent],
        weights=WEIGHTS[intent],
        fetch=fetch_depth(limit, candidates),
        need=limit,
        skipped=skipped,
        fallbacks=tuple(notes),
    )
