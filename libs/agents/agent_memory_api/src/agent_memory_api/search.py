"""``/v1/search``: results with provenance, and the explanation of what the brainstem did."""

from __future__ import annotations

from typing import Literal, NotRequired

from pydantic import with_config
from typing_extensions import TypedDict

from agent_memory_api.common import CLOSED, Timestamp

Intent = Literal["explore", "answer", "locate", "time-boxed"]


@with_config(CLOSED)
class SupersessionRef(TypedDict):
    """The other side of a supersession link: a newer decision, constraint or preference on
    the same subject replaced an older one (detected by the summarizer, or ``explicit``: an
    event whose ``metadata.supersedes`` named it, ``note`` saying why)."""

    event_id: str
    ts: Timestamp
    text: str
    source: Literal["detected", "explicit"]
    note: str | None


@with_config(CLOSED)
class SearchResult(TypedDict):
    id: str
    type: str
    level: str
    title: str | None
    text: str
    ts: Timestamp
    project_id: str
    agent_id: str
    user_id: str | None  # the one user of its events (null: none or several)
    session_id: str | None
    score: float
    salience: float
    memory_kind: str
    event_ids: list[str]
    # what this result replaced (its history) / what replaced it (it is history itself)
    supersedes: NotRequired[list[SupersessionRef]]
    superseded_by: NotRequired[list[SupersessionRef]]


@with_config(CLOSED)
class TimeWindow(TypedDict):
    since: str | None
    until: str | None


@with_config(CLOSED)
class SearchTimeRange(TypedDict):
    """The period searched: from the query's words ("last week"), the request, or both;
    ``window``: the wider span searched for the moments that tell of it; ``relaxed``: the
    query's own range was dropped (``parsed``) because nothing was in it."""

    since: str | None
    until: str | None
    expression: str | None
    source: Literal["query+request", "query", "request"]
    window: NotRequired[TimeWindow]
    relaxed: NotRequired[bool]
    parsed: NotRequired[TimeWindow]


@with_config(CLOSED)
class TierExplain(TypedDict):
    status: Literal["used", "failed", "skipped", "not requested", "unavailable"]
    reason: NotRequired[str]
    hits: NotRequired[int]
    ms: NotRequired[float]


@with_config(CLOSED)
class SpreadExplain(TypedDict):
    after: int
    moved: int


@with_config(CLOSED)
class PlanExplain(TypedDict):
    types: list[str]
    weights: dict[str, float]  # the RRF weights used (vectors lead when the words found little)
    fetch: int
    near_duplicates_dropped: int
    spread: NotRequired[SpreadExplain]
    # the largest share of the query's content words one of the best BM25 hits holds
    words_coverage: NotRequired[float]


@with_config(CLOSED)
class RankingExplain(TypedDict):
    id: str
    fused: float
    ranks: dict[str, int]
    factors: dict[str, float]


@with_config(CLOSED)
class RetentionNote(TypedDict):
    """A result older than a tier still indexes (issue 15): it was found by another tier."""

    id: str
    level: str
    not_indexed_by: list[str]
    found_by: list[str]
    note: str


@with_config(CLOSED)
class DescentOpened(TypedDict):
    """A summary the descent opened (its document id, level and title)."""

    id: str
    level: str
    title: str


# An event the descent brought back: the summary it was found under ("from"; "period": the
# period asked about; "project": the project read when no period was named), its word score
# over the candidates read and its cosine, if any, and the ranks it was given in the BM25 and
# vector lists, as if the indexes had kept it ("as_if": its fused score comes from them). The
# functional form, as "from" is a keyword.
DescentReturned = TypedDict(
    "DescentReturned",
    {
        "id": str,
        "from": str,
        "words": float,
        "cosine": NotRequired[float],
        "as_if": dict[str, int],
    },
    closed=True,
)


@with_config(CLOSED)
class DescentExplain(TypedDict):
    """Descend when the indexes have forgotten (docs/lifecycle.md): the summaries opened, the
    pruned events read under them, how they were scored and what joined the answer."""

    opened: list[DescentOpened]
    period: bool  # the period the question named was read
    project: bool  # no period named: the whole project asked about was read too
    read: int
    scored_by: list[str]
    stored_vectors: int  # scored by the vector the pruner kept of them
    embedded: int  # scored by a vector computed during the search
    returned: list[DescentReturned]
    ms: float
    steps_ms: dict[str, float]  # where the time went: summaries, lookup, stored_vectors, embed
    note: NotRequired[str]
    best_cosine: NotRequired[float]


@with_config(CLOSED)
class SearchExplain(TypedDict):
    tiers: dict[str, TierExplain]
    fallbacks: list[str]
    timings_ms: dict[str, float]
    plan: PlanExplain
    ranking: list[RankingExplain]
    retention: NotRequired[list[RetentionNote]]
    descent: NotRequired[DescentExplain]


@with_config(CLOSED)
class SearchResponse(TypedDict):
    intent: Intent
    time_range: SearchTimeRange | None
    results: list[SearchResult]
    # True: nothing relevant is stored (the query's best cosine is below the calibrated
    # threshold, AGENT_MEMORY_QUERY__SEARCH__NO_MATCH_BELOW), so no results are returned
    no_match: NotRequired[bool]
    match_score: NotRequired[float | None]
    explain: SearchExplain
