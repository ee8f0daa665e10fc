"""The retention matrix: how long each index keeps the entries of each level (pure, no I/O).

Raw events and TOC nodes are kept forever; the *indexes* forget detail as it ages, so old
moments stop being found by similarity or by their words while the summaries above them stay
searchable (issue 15). The defaults follow the issue:

============  =======  =======
level         vector   bm25
============  =======  =======
event         30d      30d
segment       30d      30d
grip          30d      30d
day           365d     180d
week          5y       5y
month         forever  forever
year          forever  forever
============  =======  =======

The issue names segments and grips; single events are finer detail than a segment, so they go
with it (and BM25 grips with BM25 segments). Durable kinds (``DURABLE_KINDS``: decisions,
constraints, preferences, procedures, definitions) are kept at the event and grip levels
whatever the matrix says. A project overrides any cell with
``PUT /v1/projects/{project_id}/retention``; the overrides are stored as written
(``retention_policies``) and merged over these defaults when read.

Age is the entry's ``ts`` (an event's time, a node's or grip's start): a day node is pruned
once its day began longer ago than the day's retention.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field

INDEXES: tuple[str, ...] = ("vector", "bm25")
RETAINED_LEVELS: tuple[str, ...] = ("event", "segment", "grip", "day", "week", "month", "year")
FOREVER = "forever"

DEFAULT_MATRIX: dict[str, dict[str, str]] = {
    "vector": {
        "event": "30d",
        "segment": "30d",
        "grip": "30d",
        "day": "365d",
        "week": "5y",
        "month": FOREVER,
        "year": FOREVER,
    },
    "bm25": {
        "event": "30d",
        "segment": "30d",
        "grip": "30d",
        "day": "180d",
        "week": "5y",
        "month": FOREVER,
        "year": FOREVER,
    },
}

# What never goes stale: entries of these kinds are kept by both indexes at any age, whatever
# the matrix says. The product ranks constraints, decisions, preferences, procedures and
# definitions above chatter because they stay true until replaced (supersession links the
# replacement, and search ranks the replaced one below it); pruning them after 30 days would
# leave "what did we decide about X?" to find only what was said in the last month. The kind
# of a grip is the summarizer's; an event's only when it was noted so explicitly
# (``metadata.memory_kind``, e.g. ``memory_note``). Segments and calendar nodes age as usual:
# their summaries mix kinds, and the grips under them are what a question needs.
DURABLE_KINDS: tuple[str, ...] = ("decision", "constraint", "preference", "procedure", "definition")
DURABLE_LEVELS: tuple[str, ...] = ("event", "grip")

_DURATION = re.compile(r"^(\d{1,6})([dwy])$")
_UNIT_DAYS = {"d": 1, "w": 7, "y": 365}
MAX_DAYS = 365 * 1000


def parse_duration(text: str) -> timedelta | None:
    """``'30d'``, ``'26w'``, ``'5y'`` (365 days a year) or ``'forever'`` (``None``).

    Raises ``ValueError`` with a sentence a caller can show as it is.
    """
    value = text.strip().lower()
    if value == FOREVER:
        return None
    match = _DURATION.match(value)
    if match is None:
        raise ValueError(
            f"{text!r} is not a duration: use a number of days, weeks or years "
            "('30d', '26w', '5y') or 'forever'"
        )
    days = int(match.group(1)) * _UNIT_DAYS[match.group(2)]
    if days < 1:
        raise ValueError(f"{text!r}: a retention must be at least one day (or 'forever')")
    if days > MAX_DAYS:
        raise ValueError(f"{text!r}: longer than 1000 years; use 'forever'")
    return timedelta(days=days)


def check_overrides(raw: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Validate overrides ``{index: {level: duration}}``; returns them normalised (lower case).

    Raises ``ValueError`` whose message starts with the path of the field at fault
    (``vector.segment: ...``), for the 422 of the route.
    """
    clean: dict[str, dict[str, str]] = {}
    for index, cells in raw.items():
        if index not in INDEXES:
            raise ValueError(f"{index}: unknown index; expected one of {', '.join(INDEXES)}")
        if not isinstance(cells, Mapping):
            raise ValueError(f"{index}: expected an object of level -> duration")
        for level, duration in cells.items():
            path = f"{index}.{level}"
            if level not in RETAINED_LEVELS:
                raise ValueError(
                    f"{path}: unknown level; expected one of {', '.join(RETAINED_LEVELS)}"
                )
            if not isinstance(duration, str):
                raise ValueError(f"{path}: expected a string such as '30d', '5y' or 'forever'")
            try:
                parse_duration(duration)
            except ValueError as exc:
                raise ValueError(f"{path}: {exc}") from None
            clean.setdefault(index, {})[level] = duration.strip().lower()
    return clean


@dataclass(frozen=True)
class RetentionPolicy:
    """The effective matrix of one project: the defaults with its overrides on top."""

    overrides: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def matrix(self) -> dict[str, dict[str, str]]:
        merged = {index: dict(cells) for index, cells in DEFAULT_MATRIX.items()}
        for index, cells in self.overrides.items():
            merged.setdefault(index, {}).update(cells)
        return merged

    def keep(self, index: str, level: str) -> timedelta | None:
        """How long ``index`` keeps entries of ``level``; ``None``: forever."""
        duration = self.matrix.get(index, {}).get(level)
        return None if duration is None else parse_duration(duration)

    def cutoff(self, index: str, level: str, now: datetime) -> datetime | None:
        """Entries with ``ts`` before this are beyond retention; ``None``: none are."""
        keep = self.keep(index, level)
        return None if keep is None else now - keep

    def beyond(
        self, index: str, level: str, ts: datetime, now: datetime, kind: str | None = None
    ) -> bool:
        """Whether ``index`` no longer keeps this entry (``kind``: its memory kind)."""
        if is_durable(level, kind):
            return False
        cut = self.cutoff(index, level, now)
        return cut is not None and ts < cut


def is_durable(level: str, kind: str | None) -> bool:
    """An entry no retention cell prunes (``DURABLE_KINDS``)."""
    return level in DURABLE_LEVELS and kind in DURABLE_KINDS


DEFAULT_POLICY = RetentionPolicy()


@dataclass(frozen=True)
class EpisodeValueRule:
    """Which finished episodes stop being matched by "similar" (the seed's value rule).

    ``score = value x outcome weight x 0.5 ** (age_days / half_life_days)``, where ``value`` is the
    episode's own worth in [0, 1] (the client's, else the default from its outcome) and age counts
    from its completion. Below ``min_score`` and older than ``min_age_days`` it is pruned: a fresh
    episode is never pruned whatever its score.
    """

    min_score: float = 0.05
    half_life_days: float = 90.0
    min_age_days: float = 30.0
    outcome_weights: Mapping[str, float] = field(
        default_factory=lambda: {"success": 1.0, "partial": 0.7, "failure": 0.5}
    )

    def score(self, value: float | None, outcome: str, age_days: float) -> float:
        worth = 0.5 if value is None else value
        recency = 0.5 ** (max(age_days, 0.0) / self.half_life_days)
        weight = float(self.outcome_weights.get(outcome, 0.5))
        return float(worth * weight * recency)

    def prunable(self, value: float | None, outcome: str, age_days: float) -> bool:
        if age_days < self.min_age_days:
            return False
        return self.score(value, outcome, age_days) < self.min_score


class EpisodeOptions(BaseModel):
    """The episode rule's settings, under ``AGENT_MEMORY_PRUNER__EPISODE_*``: read by the pruner
    service and by ``agent-memory admin cleanup`` alike."""

    episode_min_score: float = Field(
        default=0.05, ge=0, le=1, description="Episodes below this value score are pruned."
    )
    episode_half_life_days: float = Field(
        default=90.0, gt=0, description="Age at which an episode's recency factor is 0.5."
    )
    episode_min_age_days: float = Field(
        default=30.0, ge=0, description="Episodes younger than this are never pruned."
    )

    def episode_rule(self) -> EpisodeValueRule:
        return EpisodeValueRule(
            min_score=self.episode_min_score,
            half_life_days=self.episode_half_life_days,
            min_age_days=self.episode_min_age_days,
        )
