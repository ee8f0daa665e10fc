"""The ranking policy applied after fusion: what deserves to be remembered first.

``score = fused * salience_factor * usage * staleness``

- salience factor ``0.55 + 0.45 * salience``: a salient moment (a decision, a constraint) beats
  chatter of equal relevance, but relevance still dominates (the factor never drops below 0.55).
- usage ``1 + boost * (1 - 1 / (1 + decay * times used))``: what agents *used* (opened by id,
  pinned; ``search_access``) rises a little, up to ``1 + boost``. Being returned is not being
  used and changes nothing, so two identical searches on an unchanged store rank alike (issue
  53: each answer used to lower the factor of what it returned, the results just outside an
  answer overtook those at its end, and near ties swapped between identical calls).
- staleness, observations only: "the build is red" decays with age (half-life, with a floor so
  an old observation is demoted, never hidden); decisions, constraints, definitions,
  procedures and preferences state how things are until replaced, so they never go stale.
  Nor, in a question about a fix, does a moment stating the cause or the fix (``arcs``).
- period: when a question names a period and moments are searched around it (see
  ``EngineOptions.moment_lead_days``), a moment outside the period itself weighs
  ``outside_period``: the period first, the days around it when they match better.
- speaker: a question that names who spoke ("what did Caroline research?") is about that
  person's own words, so a moment whose speaker (its title, ``metadata.speaker``) the query
  names weighs ``named_speaker``.
- novelty gate: a near-duplicate of a better-ranked result adds nothing, so it is dropped.
- ties break on the newer moment, then the id: the same candidates always rank alike.
- the answer's order is its scores' order (``settle``): a step that places a result by
  something else than its score (the period's overview first, the spread across sessions)
  lifts that result's score to the one below it, under the factor ``placed``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.timeparse import TimeRange

EVERGREEN_KINDS = frozenset({"decision", "constraint", "definition", "procedure", "preference"})
STALE_KINDS = frozenset({"observation", ""})  # an unclassified moment is an observation
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class RankingPolicy:
    salience_base: float = 0.55
    salience_weight: float = 0.45
    default_salience: float = 0.5
    usage_decay: float = 0.5
    usage_boost: float = 0.2
    stale_half_life_days: float = 30.0
    stale_floor: float = 0.6
    novelty_jaccard: float = 0.8
    outside_period: float = 0.67
    named_speaker: float = 1.3


def salience_factor(salience: float | None, policy: RankingPolicy) -> float:
    s = policy.default_salience if salience is None or math.isnan(salience) else float(salience)
    return policy.salience_base + policy.salience_weight * min(max(s, 0.0), 1.0)


def usage_factor(times_used: int, decay: float, boost: float) -> float:
    """1 for what was never used, rising with each use towards ``1 + boost``."""
    return 1.0 + boost * (1.0 - 1.0 / (1.0 + decay * max(times_used, 0)))


def staleness(kind: str | None, ts: datetime | None, now: datetime, policy: RankingPolicy) -> float:
    """1.0 for evergreen kinds and fresh observations, down to ``stale_floor`` with age."""
    if (kind or "") not in STALE_KINDS or ts is None:
        return 1.0
    age_days = max((now - ts).total_seconds(), 0.0) / 86_400.0
    decay: float = 0.5 ** (age_days / policy.stale_half_life_days)
    return policy.stale_floor + (1.0 - policy.stale_floor) * decay


def apply_policy(
    candidates: Iterable[Candidate],
    *,
    access_counts: Mapping[str, int],
    now: datetime,
    policy: RankingPolicy,
    period: TimeRange | None = None,
    query_words: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """Score every candidate and sort best first (ties: newer first, then id)."""
    out = list(candidates)
    for cand in out:
        doc = cand.doc
        kind, ts = getattr(doc, "kind", None), getattr(doc, "ts", None)
        factors = {
            "salience": salience_factor(getattr(doc, "salience", None), policy),
            "usage": usage_factor(
                access_counts.get(cand.id, 0), policy.usage_decay, policy.usage_boost
            ),
            "staleness": staleness(kind, ts, now, policy),
        }
        if period is not None:
            factors["period"] = 1.0 if in_period(ts, period) else policy.outside_period
        if query_words and speaker_named(doc, query_words):
            factors["speaker"] = policy.named_speaker
        cand.factors = factors
        cand.score = cand.fused
        for value in factors.values():
            cand.score *= value
    out.sort(key=best_first)
    return out


def best_first(cand: Candidate) -> tuple[float, float, str]:
    """The sort key of a ranking: the score, then the newer moment, then the id."""
    return (-cand.score, -_ts_key(cand), cand.id)


def settle(ranked: list[Candidate]) -> list[Candidate]:
    """Make the scores of a final order follow it: a result placed above one that scores more
    (by a step that orders by something else than the score) takes that score, and the factor
    ``placed`` says by how much it was lifted. The order itself is not changed."""
    below = -math.inf
    for cand in reversed(ranked):
        if cand.score < below:
            if cand.score > 0:  # (a score of 0 lifted has no finite factor: none is shown)
                cand.factors["placed"] = below / cand.score
            cand.score = below
        below = cand.score
    return ranked


def reweigh(cand: Candidate, name: str, factor: float, *, keeps_true: bool) -> None:
    """Multiply ``factor`` into a ranked candidate's score (``explain.ranking``: ``name``).
    ``keeps_true``: what it says does not go stale for this question (a fix, the command
    asked for), so a staleness factor below 1 is taken back out of its score."""
    cand.factors[name] = factor
    cand.score *= factor
    stale = cand.factors.get("staleness", 1.0)
    if keeps_true and 0.0 < stale < 1.0:
        cand.factors["staleness"] = 1.0
        cand.score /= stale


def reweigh_all(
    candidates: Iterable[Candidate],
    name: str,
    weigh: Callable[[Candidate], tuple[float, bool] | None],
) -> list[Candidate]:
    """``reweigh`` each candidate ``weigh`` gives a ``(factor, keeps_true)`` for (None: left
    as it is), under ``name``; best first. The question-specific preferences (``arcs``,
    ``artifacts``, ``own_words``) differ only in ``weigh``."""
    out = list(candidates)
    for cand in out:
        weight = weigh(cand)
        if weight is not None:
            reweigh(cand, name, weight[0], keeps_true=weight[1])
    out.sort(key=best_first)
    return out


def words_of(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def speaker_named(doc: object, query_words: frozenset[str]) -> bool:
    """An event whose speaker (its title) the query names, every word of it."""
    title = getattr(doc, "title", "") or ""
    if not title or getattr(doc, "type", "event") != "event":
        return False
    return words_of(title) <= query_words


def in_period(ts: datetime | None, period: TimeRange) -> bool:
    if ts is None:
        return False
    return (period.since is None or ts >= period.since) and (
        period.until is None or ts < period.until
    )


def _ts_key(cand: Candidate) -> float:
    ts = getattr(cand.doc, "ts", None)
    return ts.timestamp() if isinstance(ts, datetime) else 0.0


def _tokens(doc: object) -> frozenset[str]:
    text = getattr(doc, "text", "") or getattr(doc, "title", "") or ""
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) > 1)


def near_duplicate(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    if not a or not b:
        return a == b
    inter = len(a & b)
    return inter / len(a | b) >= threshold


MOMENT_TYPES = frozenset({"event", "grip"})


def novelty_gate(
    ranked: Iterable[Candidate], limit: int, threshold: float
) -> tuple[list[Candidate], list[Candidate]]:
    """Keep the best ``limit`` items, skipping any that adds nothing to those already kept.

    Returns (kept, dropped). Two ways to add nothing: nearly the same words (token-set Jaccard
    at or above ``threshold``: reworded copies, repeated tool output), or the same moments (a
    grip or event whose events are all among those of the moments already kept, such as a
    grip quoting an event shown above it). An overview (a TOC node) never makes a moment
    redundant: it points at many events without showing them.
    """
    kept: list[Candidate] = []
    kept_tokens: list[frozenset[str]] = []
    covered: set[str] = set()
    dropped: list[Candidate] = []
    for cand in ranked:
        if len(kept) >= limit:
            break
        tokens = _tokens(cand.doc)
        moment = getattr(cand.doc, "type", "event") in MOMENT_TYPES
        event_ids = set(getattr(cand.doc, "event_ids", ()) or ())
        same_moments = moment and bool(event_ids) and event_ids <= covered
        if same_moments or any(near_duplicate(tokens, seen, threshold) for seen in kept_tokens):
            dropped.append(cand)
            continue
        kept.append(cand)
        kept_tokens.append(tokens)
        if moment:
            covered |= event_ids
    return kept, dropped
