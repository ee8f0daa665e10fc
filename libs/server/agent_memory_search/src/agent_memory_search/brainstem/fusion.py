"""Reciprocal rank fusion: combine ranked lists whose scores are not comparable.

BM25 scores are unbounded and depend on the corpus; cosine similarities live in [-1, 1]. RRF
uses ranks only (score = sum over lists of weight / (k + rank)), which needs no calibration and
is robust to one list being poor, the usual case when one index is stale or down. k = 60 is the
value from Cormack et al. (2009) that damps the gap between the first few ranks.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

RRF_K = 60
# Tiers whose scores are the engine's relevance: hits of one score are a tie, and the order an
# engine returns ties in is its own (Tantivy's: where each document sits in its segments). Two
# deployments holding the same documents, indexed in another order, fused the same two identical
# events at swapped ranks and answered one question differently. Ties of these tiers are put in
# id order before they are ranked: the same store answers alike wherever it was built. The
# other tiers' scores are placeholders (a period's moments, an arc's) and their order is their
# meaning: ranked as listed.
SCORED_TIERS: frozenset[str] = frozenset({"bm25", "vector"})


class HitLike(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def doc(self) -> Any: ...


@dataclass
class Candidate:
    """One item seen by one or more tiers, with its rank in each."""

    id: str
    doc: Any
    ranks: dict[str, int] = field(default_factory=dict)  # tier -> 1-based rank
    scores: dict[str, float] = field(default_factory=dict)  # tier -> the tier's own score
    fused: float = 0.0  # normalised RRF: 1.0 = first in every list, all weights counted
    score: float = 0.0  # after the ranking policy
    factors: dict[str, float] = field(default_factory=dict)
    # "supersedes" / "superseded_by" -> the linked moments (``supersede.attach``)
    links: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def rrf(
    lists: Mapping[str, Sequence[HitLike]],
    *,
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
    scored: Collection[str] = SCORED_TIERS,
) -> list[Candidate]:
    """Fuse ``{tier: hits best first}``; the result is best first, ties broken by id. In a
    ``scored`` tier, hits of equal score are ranked in id order (``SCORED_TIERS``).

    The fused score is divided by the best possible one (sum of weights / (k + 1)), so 1.0
    means "ranked first by every tier" whatever k and the weights are.
    """
    weights = weights or {}
    by_id: dict[str, Candidate] = {}
    total_weight = 0.0
    for tier, hits in lists.items():
        weight = weights.get(tier, 1.0)
        if not hits or weight <= 0:
            continue
        total_weight += weight
        if tier in scored:  # best first already: only the ties move
            hits = sorted(hits, key=lambda h: (-float(h.score), h.id))
        rank = 0
        for hit in hits:
            cand = by_id.get(hit.id)
            if cand is None:
                cand = by_id[hit.id] = Candidate(id=hit.id, doc=hit.doc)
            if tier in cand.ranks:  # a tier repeating an id counts once, at its best rank
                continue
            rank += 1
            cand.ranks[tier] = rank
            cand.scores[tier] = float(hit.score)
            cand.fused += weight / (k + rank)
    best = total_weight / (k + 1) if total_weight else 1.0
    for cand in by_id.values():
        cand.fused /= best
    return sorted(by_id.values(), key=lambda c: (-c.fused, c.id))


def lift(
    fused: Sequence[Candidate],
    parents: Sequence[HitLike],
    *,
    weight: float,
    k: int,
    scale: float,
) -> list[Candidate]:
    """Moments inside a matching stretch of conversation rise: ``weight / (k + parent rank)``.

    A question often shares a few words with the turn that answers it and more with the
    conversation around it; a segment matched by all its words (its events' text is its BM25
    context) vouches for the moments it holds. ``scale`` is the fused scores' normaliser, so
    the bonus is on the same scale as the tiers'. A moment under several parents takes its
    best parent's rank. Returns the candidates re-sorted.
    """
    best_rank: dict[str, int] = {}
    for rank, hit in enumerate(parents, 1):
        for event_id in getattr(hit.doc, "event_ids", ()) or ():
            best_rank.setdefault(event_id, rank)
    out = list(fused)
    if best_rank and weight > 0:
        for cand in out:
            event_ids = getattr(cand.doc, "event_ids", ()) or ()
            ranks = [best_rank[e] for e in event_ids if e in best_rank]
            if ranks:
                cand.ranks["segment"] = min(ranks)
                cand.fused += weight / (k + min(ranks)) / scale
    return sorted(out, key=lambda c: (-c.fused, c.id))
