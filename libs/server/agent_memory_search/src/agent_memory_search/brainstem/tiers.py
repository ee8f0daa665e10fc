"""What one run of a plan leaves behind: each tier's hits, time and failure (``TierRun``), the
fused candidates (``Execution``); and the query's vector, embedded once however many runs ask.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from agent_memory_retrieval.docs import Hit
from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.options import EngineOptions
from agent_memory_search.brainstem.planner import MAX_CANDIDATES, fetch_depth


class QueryVector:
    """The query's vector for one search: embedded once, however many runs of the plan ask
    (a question about a period runs it around the period and beyond it at the same time).

    ``make`` hands the work to a thread and returns its future at once: ``start`` calls it as
    soon as the plan says the vector tier runs, so the model already works while the event
    loop sends the other tiers' queries (the embedding is the longest step of a search)."""

    def __init__(self, make: Callable[[], asyncio.Future[list[list[float]]]]) -> None:
        self._make = make
        self._future: asyncio.Future[list[list[float]]] | None = None

    def start(self) -> None:
        if self._future is None:
            self._future = self._make()
            # a plan that never asks (an empty period) must not leave an unread error behind
            self._future.add_done_callback(lambda f: f.cancelled() or f.exception())

    async def get(self) -> list[float]:
        self.start()
        assert self._future is not None
        vectors = await asyncio.shield(self._future)  # one caller timing out leaves it to others
        return vectors[0]


@dataclass
class TierRun:
    tier: str
    hits: list[Hit] = field(default_factory=list)
    ms: float = 0.0
    embed_ms: float | None = None
    error: str | None = None
    skipped: str | None = None


@dataclass
class Execution:
    """One run of a plan over one time range: fused candidates and what each tier did."""

    fused: list[Candidate]
    runs: dict[str, TierRun]
    notes: list[str]
    segments: list[Hit]  # the best-matching segments (for lift and spread), best first
    weights: Mapping[str, float] = field(default_factory=dict)  # the RRF weights used
    coverage: float | None = None  # of the query's words by the best BM25 hits

    def hits(self, tier: str) -> list[Hit]:
        run = self.runs.get(tier)
        return run.hits if run is not None and run.error is None else []


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start`` (a ``time.perf_counter()``), as explain shows them."""
    return round((time.perf_counter() - start) * 1000, 2)


def tier_depth(options: EngineOptions, tier: str, fetch: int, limit: int, *, spreads: bool) -> int:
    """Candidates asked of ``tier``: the plan's ``fetch``, but the vector tier has its own
    depth (``vector_candidates``; a graph search costs more the more it must return), and a
    long answer spread across sessions asks it deeper."""
    if tier != "vector":
        return fetch
    if options.vector_candidates is not None:
        fetch = fetch_depth(limit, options.vector_candidates)
    if spreads:
        fetch = max(fetch, min(options.spread_vector_depth, MAX_CANDIDATES))
    return fetch


def best_cosine(executions: Sequence[Execution]) -> float | None:
    """The best vector score of the runs (pgvector and Qdrant give cosine similarity)."""
    runs = [ex.runs["vector"] for ex in executions if "vector" in ex.runs]
    used = [r for r in runs if r.error is None and r.skipped is None]
    scores = [h.score for r in used for h in r.hits]
    # no vector tier, or nothing in its index for this scope (yet: the embedder may lag
    # behind BM25): no evidence either way, never a no_match
    return max(scores) if scores else None
