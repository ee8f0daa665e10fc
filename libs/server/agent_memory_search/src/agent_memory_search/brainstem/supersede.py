"""Supersession in the answer: the current decision first, the one it replaced as history.

The summarizer links a newer decision, constraint or preference to the older one it replaces
(``memory_supersessions``, by event id; see the summarizer's ``supersession`` module). Search
reads the links of its candidates and

- attaches them both ways: ``supersedes`` on the newer moment (its predecessor, with its
  words, so "what did we decide about X" answers with the current decision and what it
  replaced), ``superseded_by`` on the older one;
- demotes a moment that was superseded (factor ``demote``, shown in ``explain.ranking`` as
  ``superseded``): it stays findable, as history, below what replaced it;
- brings the successor in when only the superseded moment was found (a question in the old
  decision's words: "do we still publish to RabbitMQ?"): it takes the place the older one had
  (factor ``successor``), and the older one follows it.

Only moments (events and grips) are demoted; an overview (a TOC node) cites many events and
is never history as a whole, but it carries the links of the events it cites.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_memory_search.brainstem.fusion import Candidate

MOMENTS = frozenset({"event", "grip"})
SHOWN_CHARS = 400
# Links shown each way per item: the newest successors, the best predecessors. A rule
# repeated across hundreds of sessions has as many links; an answer carries the few that
# say what is current, and each of them has its own links to follow.
SHOWN_LINKS = 3


@dataclass(frozen=True)
class Link:
    older_event_id: str
    newer_event_id: str
    source: str
    score: float
    note: str | None
    older_ts: datetime
    older_text: str
    newer_ts: datetime
    newer_text: str


@dataclass(frozen=True)
class Links:
    links: list[Link]
    successors: Mapping[str, Any]  # newer event id -> its index document


SupersessionLookup = Callable[[str, Sequence[str]], Awaitable[Links]]


def _ref(event_id: str, ts: datetime, text: str, link: Link) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "ts": ts,
        "text": text[:SHOWN_CHARS],
        "source": link.source,
        "note": link.note,
    }


def successors_shown(links: Sequence[Link]) -> list[Link]:
    """The newest ``SHOWN_LINKS`` successors among ``links``, one per newer event (the order
    of ``links_of``: newest first, then by id)."""
    unique = {lk.newer_event_id: lk for lk in sorted(links, key=lambda lk: lk.older_event_id)}
    by_id = sorted(unique.values(), key=lambda lk: lk.newer_event_id)
    return sorted(by_id, key=lambda lk: lk.newer_ts, reverse=True)[:SHOWN_LINKS]


def predecessors_shown(links: Sequence[Link]) -> list[Link]:
    """The best ``SHOWN_LINKS`` predecessors among ``links``, one per older event (the order
    of ``links_of``: explicit ones first, then by score, the most recent, the id)."""
    unique = {lk.older_event_id: lk for lk in sorted(links, key=lambda lk: lk.newer_event_id)}
    by_id = sorted(unique.values(), key=lambda lk: lk.older_event_id)
    ranked = sorted(
        by_id, key=lambda lk: (lk.source == "explicit", lk.score, lk.older_ts), reverse=True
    )
    return ranked[:SHOWN_LINKS]


def _shown_refs(earlier: Sequence[Link], later: Sequence[Link]) -> dict[str, list[dict[str, Any]]]:
    """``supersedes`` (the best of the ``earlier`` links) and ``superseded_by`` (the newest of
    the ``later`` ones) of one item, only the keys that have links."""
    out: dict[str, list[dict[str, Any]]] = {}
    if shown := predecessors_shown(earlier):
        out["supersedes"] = [
            _ref(lk.older_event_id, lk.older_ts, lk.older_text, lk) for lk in shown
        ]
    if shown := successors_shown(later):
        out["superseded_by"] = [
            _ref(lk.newer_event_id, lk.newer_ts, lk.newer_text, lk) for lk in shown
        ]
    return out


def refs_for(event_ids: Sequence[str], links: Sequence[Link]) -> dict[str, list[dict[str, Any]]]:
    """``supersedes`` / ``superseded_by`` of an item citing ``event_ids`` (a TOC bullet),
    only the keys that have links."""
    wanted = set(event_ids)
    return _shown_refs(
        [lk for lk in links if lk.newer_event_id in wanted],
        [lk for lk in links if lk.older_event_id in wanted],
    )


def attach(
    ranked: Sequence[Candidate],
    found: Links,
    *,
    demote: float,
    head: int,
    vouched: Callable[[Candidate], bool] | None = None,
) -> list[Candidate]:
    """Links on every candidate, superseded moments demoted, missing successors brought in
    for the superseded moments among the first ``head`` that answer the query (``vouched``:
    a close vector or the query's words; None: all); returns the list re-sorted. A successor
    takes the place of the moment it replaced, so one brought in for a moment that only
    shared a common word with the question would lead an answer about something else."""
    by_older: dict[str, list[Link]] = defaultdict(list)
    by_newer: dict[str, list[Link]] = defaultdict(list)
    for link in found.links:
        by_older[link.older_event_id].append(link)
        by_newer[link.newer_event_id].append(link)
    present = {e for c in ranked for e in (getattr(c.doc, "event_ids", ()) or ())}
    out = list(ranked)
    added: list[Candidate] = []
    for position, cand in enumerate(ranked):
        event_ids = tuple(getattr(cand.doc, "event_ids", ()) or ())
        older = [(e, link) for e in event_ids for link in by_older.get(e, ())]
        newer = [(e, link) for e in event_ids for link in by_newer.get(e, ())]
        cand.links.update(_shown_refs([lk for _, lk in newer], [lk for _, lk in older]))
        if not older or newer or getattr(cand.doc, "type", "event") not in MOMENTS:
            continue
        before = cand.score
        cand.factors["superseded"] = demote
        cand.score *= demote
        if position >= head or (vouched is not None and not vouched(cand)):
            continue
        for _, link in older:
            doc = found.successors.get(link.newer_event_id)
            if doc is None or link.newer_event_id in present:
                continue
            present.add(link.newer_event_id)
            successor = Candidate(id=doc.id, doc=doc, fused=cand.fused, score=before)
            successor.factors = {"successor": 1.0}
            successor.links["supersedes"] = [
                _ref(link.older_event_id, link.older_ts, link.older_text, link)
            ]
            added.append(successor)
    out.extend(added)
    out.sort(key=lambda c: -c.score)  # stable: ties keep the policy's order
    return out
