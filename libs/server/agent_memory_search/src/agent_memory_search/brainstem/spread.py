"""Spread a long answer across conversations: after the best moments, one per session.

A question whose answer is scattered ("what pets does Nate have?", "which games has John
played?") is answered by a few words in each of several sessions. Fused moments cluster: the
session that matches best fills the list with its every turn, and the next sessions come
late. So once the first ``head`` moments are placed (they are the best, whatever their
session), the rest of the list gives each further session its best moment, sessions in the
order of a reciprocal rank fusion of three views of them:

- the moments: the rank at which a session first appears in the ranked moments;
- the segments: BM25 over every word said in a segment (its ``context``), which sees a
  stretch of conversation that the question's words are spread over;
- the vectors: the rank at which a session first appears in the vector tier's hits (a turn
  embedded with the turn before it).

Then come the moments not placed yet, in their order. A session that only the segments know
(no moment of it was a candidate) is given its segment: a pointer to the stretch where to
look. The weights and k were chosen on LoCoMo: session recall@10 0.929 -> 0.942 with turn
recall@10 unchanged (the head is not touched).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agent_memory_search.brainstem.fusion import Candidate, HitLike

SPREAD_WEIGHTS: Mapping[str, float] = {"moments": 1.0, "segments": 0.5, "vector": 0.75}


@dataclass(frozen=True)
class SpreadOptions:
    head: int = 10  # the first results stay as ranked
    k: int = 10  # small: only the first few sessions of each view should count
    weights: Mapping[str, float] = field(default_factory=lambda: dict(SPREAD_WEIGHTS))


def session_key(doc: object) -> str:
    """What one conversation is: its session, or the item itself when it spans sessions."""
    session = getattr(doc, "session_id", "") or ""
    return session or f"item:{getattr(doc, 'id', '')}"


def first_seen(docs: Sequence[object]) -> list[str]:
    return list(dict.fromkeys(session_key(d) for d in docs))


def session_order(views: Mapping[str, Sequence[str]], options: SpreadOptions) -> list[str]:
    """Sessions best first: ``sum(weight / (k + rank))`` over the views that rank them."""
    scores: dict[str, float] = {}
    for name, sessions in views.items():
        weight = options.weights.get(name, 0.0)
        if weight <= 0:
            continue
        for rank, key in enumerate(sessions, 1):
            scores[key] = scores.get(key, 0.0) + weight / (options.k + rank)
    return sorted(scores, key=lambda key: -scores[key])


@dataclass
class Spread:
    results: list[Candidate]
    moved: int  # moments placed ahead of where their score put them, plus segments added


def spread(
    ranked: Sequence[Candidate],
    *,
    segments: Sequence[HitLike] = (),
    vector: Sequence[HitLike] = (),
    options: SpreadOptions | None = None,
) -> Spread:
    """``ranked``: moments after the ranking policy, best first. Returns the new order."""
    options = options or SpreadOptions()
    if len(ranked) <= options.head and not segments:
        return Spread(list(ranked), 0)
    views = {
        "moments": first_seen([c.doc for c in ranked]),
        "segments": first_seen([h.doc for h in segments]),
        "vector": first_seen([h.doc for h in vector]),
    }
    best: dict[str, Candidate] = {}
    for moment in ranked:
        best.setdefault(session_key(moment.doc), moment)
    seg_of: dict[str, tuple[int, HitLike]] = {}
    for rank, hit in enumerate(segments, 1):
        seg_of.setdefault(session_key(hit.doc), (rank, hit))

    out = list(ranked[: options.head])
    placed = {c.id for c in out}
    shown = {session_key(c.doc) for c in out}
    moved = 0
    for key in session_order(views, options):
        if key in shown:
            continue
        cand = best.get(key)
        if cand is None and key in seg_of:
            rank, hit = seg_of[key]
            cand = Candidate(id=hit.id, doc=hit.doc, ranks={"segment": rank})
            cand.scores["segment"] = float(hit.score)
        if cand is None:
            continue  # known to the vector view only, with no candidate left: nothing to show
        shown.add(key)
        out.append(cand)
        placed.add(cand.id)
        moved += 1
    out.extend(c for c in ranked if c.id not in placed)
    return Spread(out, moved)
