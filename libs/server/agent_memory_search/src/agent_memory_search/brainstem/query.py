"""A search as asked (``SearchQuery``), as read before any tier runs (``Understanding``) and as
answered (``SearchOutcome``): the values that cross between the engine and its callers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_memory_retrieval.docs import SearchFilter
from agent_memory_search.brainstem.explain import range_json
from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.intent import Intent
from agent_memory_search.brainstem.timeparse import TimeRange


@dataclass(frozen=True)
class SearchQuery:
    query: str
    tenant: str
    limit: int = 10
    project_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    kinds: tuple[str, ...] | None = None
    intent: Intent | None = None  # None: classify
    now: datetime | None = None  # None: the current time
    tiers: tuple[str, ...] | None = None  # None: every tier


@dataclass(frozen=True)
class Understanding:
    """A query read before the search (``Brainstem.understand``)."""

    now: datetime
    rest: str  # the query without the words that named a period
    text: str  # what the tiers match: ``rest`` less its asking frame (``frame``), or nothing
    # when only generic words are left
    intent: Intent
    explicit: TimeRange | None  # the request's since/until
    query_range: TimeRange | None  # the period the words named
    time_range: TimeRange | None  # what the tiers are filtered by
    period: TimeRange | None  # the period asked about, when moments are searched around it
    window: TimeRange | None  # the span searched around ``period``
    resume: bool = False  # "where did we leave off?": the last day of work is the period

    def range_json(self) -> dict[str, Any] | None:
        """``time_range`` of the answer, as long as the search does not drop the period."""
        return range_json(self.time_range, self.query_range, self.explicit, False, self.period)


@dataclass
class SearchOutcome:
    intent: Intent
    time_range: dict[str, Any] | None
    results: list[Candidate]
    explain: dict[str, Any]
    no_match: bool = False
    match_score: float | None = None  # the best cosine of the query; None: no vector tier


def scope(
    q: SearchQuery, time_range: TimeRange | None, types: tuple[str, ...] | None
) -> SearchFilter:
    """What a search may return: the query's tenant, project, agent, session and kinds, the
    time range it is run over, the plan's types."""
    return SearchFilter(
        tenant=q.tenant,
        project_id=q.project_id,
        agent_id=q.agent_id,
        session_id=q.session_id,
        since=time_range.since if time_range else None,
        until=time_range.until if time_range else None,
        types=types,
        kinds=q.kinds,
    )
