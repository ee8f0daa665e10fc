"""The executor: run a plan against the tiers that are up, fall back, fuse, rank, explain.

Every tier is asked through a port with a time limit, and any failure (down, slow, broken) is
turned into a fallback note rather than an error: a search answers while Postgres is up,
whatever else is away. The explain block says which tiers ran, which did not and why, and
where the milliseconds went.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_memory_common.core.logs import get_logger
from agent_memory_retrieval.docs import Hit, SearchFilter
from agent_memory_retrieval.ports import Embedder, TextIndex, VectorIndex
from agent_memory_search.brainstem.arcs import (
    arc_sources,
    bring_fix_edits,
    bring_resolutions,
    fix_statements,
    is_fix_question,
    prefer_resolution,
)
from agent_memory_search.brainstem.artifacts import asked_artifacts, prefer_artifacts
from agent_memory_search.brainstem.frame import without_frame
from agent_memory_search.brainstem.fusion import Candidate, lift, rrf
from agent_memory_search.brainstem.intent import (
    GENERIC_WORDS,
    Intent,
    classify,
    content_words,
    resumes,
)
from agent_memory_search.brainstem.lexical import coverage, vectors_lead
from agent_memory_search.brainstem.own_words import (
    asks_own_words,
    event_ids_of,
    prefer_own_words,
)
from agent_memory_search.brainstem.planner import (
    MAX_CANDIDATES,
    TIERS,
    Plan,
    TierState,
    fetch_depth,
    make_plan,
)
from agent_memory_search.brainstem.ranking import (
    RankingPolicy,
    apply_policy,
    novelty_gate,
    words_of,
)
from agent_memory_search.brainstem.spread import SpreadOptions, spread
from agent_memory_search.brainstem.supersede import Links, SupersessionLookup, attach
from agent_memory_search.brainstem.timeparse import TimeRange, parse_time

log = get_logger(__name__)

MOMENT_INTENTS: frozenset[str] = frozenset({"answer", "locate"})


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


TierSearch = Callable[[str, SearchFilter, int], Awaitable[list[Hit]]]
AccessLookup = Callable[[str, Sequence[str]], Awaitable[dict[str, int]]]
AccessRecord = Callable[[str, Sequence[str]], None]
# (tenant, project, since, until, limit, newest first) -> the period's TOC nodes, coarsest
# level first, each level in time order or newest first (``search.period``)
PeriodBrowse = Callable[[str, str | None, datetime, datetime, int, bool], Awaitable[list[Hit]]]
# (tenant, project, now) -> [since, until) of the last day of work in scope before now
LastWorkedDay = Callable[[str, str | None, datetime], Awaitable[tuple[datetime, datetime] | None]]
# (scope, event ids, window) -> per event id, the messages after it that may state a fix
FollowLookup = Callable[[SearchFilter, Sequence[str], int], Awaitable[dict[str, list[Hit]]]]
# (scope, event ids, window) -> the edit made last before each (``arc_store.edits_before``)
EditLookup = Callable[[SearchFilter, Sequence[str], int], Awaitable[dict[str, Hit]]]
# (tenant, event ids) -> role per stored event
RoleLookup = Callable[[str, Sequence[str]], Awaitable[dict[str, str]]]


@dataclass(frozen=True)
class EngineOptions:
    rrf_k: int = 60
    candidates: int = 40  # asked from each tier (more when the limit asks for more)
    vector_candidates: int | None = None  # the vector tier's own depth; None: ``candidates``
    policy: RankingPolicy = field(default_factory=RankingPolicy)
    min_similarity: float = 0.3  # a vector hit at least this close is a "good" result
    # Moments inside the best-matching segments rise (``fusion.lift``). On LoCoMo (raw turns,
    # a session as the segment) turn recall@10 went from 0.672 to 0.698 with weight 0.05 and
    # k 5; weight 0.1 with k 1 lost 0.02: a segment must vouch, not outvote the words.
    lift_weight: float = 0.05
    lift_k: int = 5
    lift_depth: int = 10
    # A long answer (limit above ``spread.head``) is spread across sessions after its head
    # (see ``spread``); the segments and the vector tier are then asked deeper, for their
    # view of which sessions matter (LoCoMo: session recall@10 0.938 with 40 vector
    # candidates, 0.942 with 100).
    spread: SpreadOptions = field(default_factory=SpreadOptions)
    spread_segments: int = 40
    spread_vector_depth: int = 100
    # A question about a period ("what did Maria donate in December 2023?") asks when a thing
    # happened; a conversation tells of it afterwards ("yesterday I dropped off...") or plans
    # it before, so moments are searched from ``moment_lead_days`` before the period to
    # ``moment_lag_days`` after it, and the period itself ranks first (``RankingPolicy.
    # outside_period``). On LoCoMo's 211 questions naming a period, session recall@10 went from
    # 0.845 (the period as a filter) to 0.933, turn recall@10 from 0.68 to 0.72; 0.976 with a
    # long answer going on beyond the window (``search``).
    # Overviews (explore, time-boxed) browse the period itself: "last week" is last week.
    moment_lead_days: float = 7.0
    moment_lag_days: float = 14.0
    tier_timeout_s: float = 2.0
    # A superseded decision stays findable as history, below what replaced it (``supersede``).
    superseded_factor: float = 0.5
    # A fix question: the cause and the fix over the failed attempts (``arcs``).
    resolution_factor: float = 1.3
    # A question about a command run or an edit made: the commands and edits (``artifacts``).
    artifact_factor: float = 1.5
    # A question about what the user said: the user's own prompts (``own_words``).
    own_words_factor: float = 1.5
    attempt_factor: float = 0.75
    # ...and the vector tier's RRF weight for it: a fix asked in other words than the
    # session's ("what leaked?") shares few words with it; None: the intent's weight.
    fix_vector_weight: float | None = None
    # ...and the cause and fix said after the best ``arc_sources`` moments that report a
    # problem or an attempt, within the next ``arc_window`` events of their session (the
    # first ``arc_per_source`` of them), with the source's fused score times ``arc_follow``
    # (``arcs.bring_resolutions``). 0 sources: off.
    arc_sources: int = 5
    arc_window: int = 40
    arc_per_source: int = 2
    arc_follow: float = 0.9
    # When the best BM25 hits hold fewer than this share of the query's content words
    # (``lexical.coverage``), the words found nothing much: the vector tier takes BM25's weight
    # and BM25 (with the segments it lifts) the vector tier's. 0: never. 0.35: questions asked
    # in other words cover 0 to 0.29 on the coding benchmarks' and up to 0.43 on real sessions',
    # the others 0.33 or more, mostly 0.5 or more (docs/search.md, "Vectors lead ... again").
    weak_words_below: float = 0.35
    # No results, and ``no_match``, when the query's best cosine with anything in scope is
    # below this: nothing relevant is stored, and the nearest items would be junk. On
    # bench-coding the 62 answerable questions that embed score 0.295 to 0.916, the 72
    # unanswerable ones 0.087 to 0.422; 0.25 refuses 61 of those and none of these
    # (docs/search.md). 0 or less: never.
    no_match_below: float = 0.25
    health_timeout_s: float = 0.25
    health_ttl_s: float = 2.0


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
        return _range_json(self.time_range, self.query_range, self.explicit, False, self.period)


@dataclass
class SearchOutcome:
    intent: Intent
    time_range: dict[str, Any] | None
    results: list[Candidate]
    explain: dict[str, Any]
    no_match: bool = False
    match_score: float | None = None  # the best cosine of the query; None: no vector tier


@dataclass
class _TierRun:
    tier: str
    hits: list[Hit] = field(default_factory=list)
    ms: float = 0.0
    embed_ms: float | None = None
    error: str | None = None
    skipped: str | None = None


@dataclass
class _Execution:
    """One run of a plan over one time range: fused candidates and what each tier did."""

    fused: list[Candidate]
    runs: dict[str, _TierRun]
    notes: list[str]
    segments: list[Hit]  # the best-matching segments (for lift and spread), best first
    weights: Mapping[str, float] = field(default_factory=dict)  # the RRF weights used
    coverage: float | None = None  # of the query's words by the best BM25 hits

    def hits(self, tier: str) -> list[Hit]:
        run = self.runs.get(tier)
        return run.hits if run is not None and run.error is None else []


async def _nothing() -> dict[str, str]:
    return {}


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def _scope(
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


class Brainstem:
    """One per process; holds the ports and the tiers' health, cached for a moment."""

    def __init__(
        self,
        *,
        text_index: TextIndex | None,
        vector_index: VectorIndex | None,
        embedder: Embedder | None,
        toc_search: TierSearch | None,
        scan_search: TierSearch | None,
        fresh_searches: Mapping[str, TierSearch] | None = None,
        access_lookup: AccessLookup | None = None,
        access_record: AccessRecord | None = None,
        options: EngineOptions | None = None,
        embedder_missing_reason: str = "embedder not loaded",
        supersession_lookup: SupersessionLookup | None = None,
        period_browse: PeriodBrowse | None = None,
        follow_lookup: FollowLookup | None = None,
        edit_lookup: EditLookup | None = None,
        role_lookup: RoleLookup | None = None,
        last_worked_day: LastWorkedDay | None = None,
    ) -> None:
        self.text_index = text_index
        self.vector_index = vector_index
        self.embedder = embedder
        self.toc_search = toc_search
        self.scan_search = scan_search
        # per fallback tier ("toc", "scan"): its search of only the newest items, those BM25
        # may not hold yet, asked instead when BM25 answered (docs/search.md, step 5)
        self.fresh_searches = dict(fresh_searches or {})
        self.access_lookup = access_lookup
        self.access_record = access_record
        self.options = options or EngineOptions()
        self.embedder_missing_reason = embedder_missing_reason
        self.supersession_lookup = supersession_lookup
        self.period_browse = period_browse
        self.follow_lookup = follow_lookup
        self.edit_lookup = edit_lookup
        self.role_lookup = role_lookup
        self.last_worked_day = last_worked_day
        self._health: dict[str, tuple[float, TierState]] = {}

    def set_embedder(self, embedder: Embedder | None, reason: str = "embedder not loaded") -> None:
        """The model arrives after start (it loads in the background); re-probe at once."""
        self.embedder = embedder
        self.embedder_missing_reason = reason
        self._health.pop("vector", None)

    # --- tiers ------------------------------------------------------------------------------

    async def _probe(self, tier: str) -> TierState:
        index: TextIndex | VectorIndex | None
        if tier == "vector":
            if self.vector_index is None:
                return TierState(tier, False, "not configured")
            index = self.vector_index
        elif tier == "bm25":
            if self.text_index is None:
                return TierState(tier, False, "not configured")
            index = self.text_index
        elif tier == "toc":
            up = self.toc_search is not None
            return TierState(tier, up, None if up else "not configured")
        else:
            up = self.scan_search is not None
            return TierState(tier, up, None if up else "not configured")
        try:
            ok = await asyncio.wait_for(index.healthy(), self.options.health_timeout_s)
        except TimeoutError:
            limit = self.options.health_timeout_s
            return TierState(tier, False, f"health check timed out ({limit}s)")
        except Exception as exc:  # a health check must never fail the search
            return TierState(tier, False, f"health check failed: {exc}")
        if not ok:
            return TierState(tier, False, "index not healthy")
        if tier == "vector" and self.embedder is None:  # the index is fine, queries cannot be
            return TierState(tier, False, self.embedder_missing_reason)
        return TierState(tier, True)

    async def tier_states(self, tiers: Sequence[str] = TIERS) -> dict[str, TierState]:
        """Health of ``tiers``, from a cache refreshed every ``health_ttl_s``."""
        now = time.monotonic()
        stale = [t for t in tiers if t not in self._health or self._health[t][0] <= now]
        if stale:
            states = await asyncio.gather(*(self._probe(t) for t in stale))
            for state in states:
                self._health[state.name] = (now + self.options.health_ttl_s, state)
        return {t: self._health[t][1] for t in tiers}

    def mark_down(self, tier: str, reason: str) -> None:
        """A failed search says more than a health check: trust it until the cache expires."""
        self._health[tier] = (
            time.monotonic() + self.options.health_ttl_s,
            TierState(tier, False, reason),
        )

    def _embed_soon(self, text: str) -> asyncio.Future[list[list[float]]]:
        """The embedding of ``text``, handed to a worker thread now (not at the next turn of
        the event loop, as ``to_thread`` in a task would)."""
        embedder = self.embedder
        assert embedder is not None
        return asyncio.get_running_loop().run_in_executor(None, embedder.embed, [text])

    async def _segments(self, text: str, flt: SearchFilter, depth: int) -> _TierRun:
        """The segments that match ``text`` best, for ``lift`` and ``spread``; asked of BM25."""
        run = _TierRun("segments")
        start = time.perf_counter()
        seg_filter = replace(flt, types=("toc_node",), levels=("segment",), kinds=None)
        try:
            assert self.text_index is not None
            coro = self.text_index.search(text, seg_filter, depth)
            run.hits = list(await asyncio.wait_for(coro, self.options.tier_timeout_s))
        except TimeoutError:
            run.error = f"timed out after {self.options.tier_timeout_s}s"
        except Exception as exc:  # lifting is a refinement: the search goes on without it
            run.error = f"{type(exc).__name__}: {exc}"
        run.ms = _ms(start)
        return run

    async def _run_tier(
        self,
        tier: str,
        text: str,
        flt: SearchFilter,
        fetch: int,
        vector_of: QueryVector,
        bm25_answered: bool = False,
    ) -> _TierRun:
        run = _TierRun(tier)
        start = time.perf_counter()
        fresh = self.fresh_searches.get(tier) if bm25_answered else None
        try:
            if fresh is not None:
                # BM25 matches the same stemmed words over every item it has indexed: a search
                # of them all would mostly repeat it, at a cost that grows with the store
                coro: Awaitable[list[Hit]] = fresh(text, flt, fetch)
            elif tier == "vector":
                if not text.strip():
                    run.skipped = "no query words"
                    return run
                assert self.vector_index is not None
                t0 = time.perf_counter()
                vector = await asyncio.wait_for(vector_of.get(), self.options.tier_timeout_s)
                run.embed_ms = _ms(t0)
                coro = self.vector_index.search(vector, flt, fetch)
            elif tier == "bm25":
                assert self.text_index is not None
                coro = self.text_index.search(text, flt, fetch)
            elif tier == "toc":
                assert self.toc_search is not None
                coro = self.toc_search(text, flt, fetch)
            else:
                assert self.scan_search is not None
                coro = self.scan_search(text, flt, fetch)
            run.hits = list(await asyncio.wait_for(coro, self.options.tier_timeout_s))
        except TimeoutError:
            run.error = f"timed out after {self.options.tier_timeout_s}s"
        except Exception as exc:  # any failure of one tier is a fallback, never a 500
            run.error = f"{type(exc).__name__}: {exc}"
            log.warning("search.tier_failed", tier=tier, error=run.error)
        finally:
            run.ms = _ms(start)
        if run.error is not None:
            self.mark_down(tier, run.error)
        return run

    # --- search -----------------------------------------------------------------------------

    def _good(self, fused: Sequence[Candidate]) -> int:
        """Results that some tier vouches for: a term match, or a close enough vector."""
        good = 0
        for cand in fused:
            vector_score = cand.scores.get("vector")
            if any(t in cand.ranks for t in ("bm25", "toc", "scan")) or (
                vector_score is not None and vector_score >= self.options.min_similarity
            ):
                good += 1
        return good

    def understand(self, q: SearchQuery) -> Understanding:
        """What a search will look for, before any tier is asked: its words, intent and time.

        Cheap (no I/O), so that a caller can start work that depends on the intent (the
        topic tier of an explore question) while the search runs."""
        now = q.now or datetime.now(UTC)
        parsed = parse_time(q.query, now)
        # "what did we do yesterday": once the period is out, the words are too generic to
        # rank by, so the tiers browse the period instead of matching "what did we do".
        generic = parsed.range is not None and not content_words(parsed.rest, GENERIC_WORDS)
        has_explicit = q.since is not None or q.until is not None
        explicit = TimeRange(q.since, q.until, None) if has_explicit else None
        query_range = parsed.range
        if explicit and query_range:
            time_range: TimeRange | None = query_range.intersect(explicit)
        else:
            time_range = query_range or explicit
        resume = parsed.range is None and q.intent in (None, "time-boxed") and resumes(parsed.rest)
        intent: Intent = q.intent or (
            "time-boxed" if resume else classify(q.query, parsed.rest, parsed.range is not None)
        )
        period: TimeRange | None = None  # the query's period, when moments are searched around it
        window = self._moment_window(intent, query_range)
        if window is not None:
            period = time_range
            time_range = window.intersect(explicit) if explicit else window
        return Understanding(
            now=now,
            rest=parsed.rest,
            text="" if generic or resume else without_frame(parsed.rest),
            intent=intent,
            explicit=explicit,
            query_range=query_range,
            time_range=time_range,
            period=period,
            window=window,
            resume=resume,
        )

    async def _resume(self, q: SearchQuery, understood: Understanding) -> Understanding:
        """ "Where did we leave off?": the last day of work in scope becomes the question's
        period, so it is answered as "what did we do on <that day>?" (its TOC nodes first).
        Nothing summarized yet, or no lookup: the newest moments in scope, as before."""
        if not understood.resume or self.last_worked_day is None:
            return understood
        try:
            day = await self.last_worked_day(q.tenant, q.project_id, understood.now)
        except Exception as exc:  # the tiers still browse the newest moments
            log.warning("search.last_worked_day_failed", error=f"{type(exc).__name__}: {exc}")
            return understood
        if day is None:
            return understood
        since, until = day
        day_name = since.astimezone(understood.now.tzinfo or UTC).date().isoformat()
        found = TimeRange(since, until, f"the last day of work ({day_name})")
        explicit = understood.explicit
        return replace(
            understood,
            query_range=found,
            time_range=found.intersect(explicit) if explicit else found,
        )

    async def search(
        self, q: SearchQuery, understood: Understanding | None = None
    ) -> SearchOutcome:
        """``understood``: ``understand(q)`` when the caller has it already (read once)."""
        t_start = time.perf_counter()
        if understood is None:
            understood = self.understand(q)
        timings: dict[str, float] = {"parse": _ms(t_start)}
        if understood.resume:
            t0 = time.perf_counter()
            understood = await self._resume(q, understood)
            timings["last_day"] = _ms(t0)
        now, text, intent = understood.now, understood.text, understood.intent
        explicit, query_range = understood.explicit, understood.query_range
        time_range, period, window = understood.time_range, understood.period, understood.window

        t0 = time.perf_counter()
        allowed = [t for t in TIERS if q.tiers is None or t in q.tiers]
        states = await self.tier_states(allowed)
        timings["health"] = _ms(t0)
        plan = make_plan(intent, q.limit, states, q.tiers, self.options.candidates)
        fix_question = intent in MOMENT_INTENTS and is_fix_question(understood.rest)
        artifacts = asked_artifacts(understood.rest) if intent in MOMENT_INTENTS else frozenset()
        if fix_question and self.options.fix_vector_weight is not None:
            plan = replace(plan, weights={**plan.weights, "vector": self.options.fix_vector_weight})

        vector_of = QueryVector(lambda: self._embed_soon(text))
        if "vector" in plan.primary and text.strip() and self.embedder is not None:
            vector_of.start()
        first = asyncio.create_task(self._execute(q, plan, text, time_range, timings, vector_of))
        # A long answer to a question about a period: after the moments around the period,
        # where else in time the same thing was talked about (asked at the same time; it is
        # also the answer when the period holds nothing).
        beyond_timings: dict[str, float] = {}
        wide: asyncio.Task[_Execution] | None = None
        if window is not None and self._spreads(plan, q):
            wide = asyncio.create_task(
                self._execute(q, plan, text, explicit, beyond_timings, vector_of)
            )
        outcome = await first
        beyond: _Execution | None = None
        relaxed = False
        if not outcome.fused and query_range is not None:
            # The words named a period that holds nothing for this query (say "last year" in
            # a log that ended before it): answering from all time beats an empty answer, and
            # explain and time_range say that the range was dropped.
            relaxed = True
            outcome = (
                await wide
                if wide
                else await self._execute(q, plan, text, explicit, timings, vector_of)
            )
            timings.update(beyond_timings)
        elif wide is not None:
            beyond = await wide
            timings["beyond_period"] = round(sum(beyond_timings.values()), 2)
        notes = outcome.notes
        match_score = best_cosine([outcome] if beyond is None else [outcome, beyond])
        threshold = self.options.no_match_below
        no_match = match_score is not None and threshold > 0 and match_score < threshold
        if no_match:
            notes.append(
                f"no_match: the best cosine {match_score:.3f} is below {threshold:g}"
                " -> nothing relevant stored, no results"
            )
        if relaxed and query_range is not None:
            notes.insert(
                0,
                f"time range {query_range.expression!r} from the query matched nothing"
                " -> searched without it",
            )

        depth = max(plan.fetch, q.limit * 3)
        head = outcome.fused[:depth]
        if fix_question:
            t0 = time.perf_counter()
            scope = _scope(q, explicit if relaxed else time_range, plan.types)
            head = await self._follow_arcs(scope, head, notes, edits="edit" in artifacts)
            timings["arcs"] = _ms(t0)
        t0 = time.perf_counter()
        extra: list[Candidate] = []
        if beyond is not None:
            inside = {c.id for c in outcome.fused} | {c.id for c in head}
            extra = [c for c in beyond.fused if c.id not in inside][:depth]
        # usage counts, supersession links and (asked what I said) the events' roles are read
        # for the same candidates: one round trip's time for all (each is a refinement: a
        # failure is a note, not an error)
        own_words = asks_own_words(understood.rest)
        counts, found, roles = await asyncio.gather(
            self._access_counts(q.tenant, head + extra, notes),
            self._links(q.tenant, head + extra, notes),
            self._roles(q.tenant, head + extra, notes) if own_words else _nothing(),
        )
        timings["access"] = _ms(t0)
        t0 = time.perf_counter()
        if period is not None and relaxed:
            period = None
        elif period is not None:
            notes.append(
                f"moments told of {period.expression!r} searched from"
                f" {self.options.moment_lead_days:g} days before to"
                f" {self.options.moment_lag_days:g} days after it; the period itself ranks first"
                + ("; a long answer goes on beyond it" if beyond is not None else "")
            )

        query_words = words_of(q.query)

        def rank(cands: list[Candidate]) -> list[Candidate]:
            return apply_policy(
                cands,
                access_counts=counts,
                now=now,
                policy=self.options.policy,
                period=period,
                query_words=query_words,
            )

        ranked_head, ranked_extra = rank(head), rank(extra)
        if fix_question:
            opts = self.options
            ranked_head, ranked_extra = (
                prefer_resolution(
                    part, resolution=opts.resolution_factor, attempt=opts.attempt_factor
                )
                for part in (ranked_head, ranked_extra)
            )
        if artifacts:
            factor = self.options.artifact_factor
            ranked_head, ranked_extra = (
                prefer_artifacts(part, kinds=artifacts, factor=factor)
                for part in (ranked_head, ranked_extra)
            )
        if roles:
            factor = self.options.own_words_factor
            ranked_head, ranked_extra = (
                prefer_own_words(part, roles=roles, factor=factor)
                for part in (ranked_head, ranked_extra)
            )
        if found is not None:
            demote = self.options.superseded_factor
            ranked_head = attach(
                ranked_head, found, demote=demote, head=q.limit, vouched=self._answers(text)
            )
            ranked_extra = attach(ranked_extra, found, demote=demote, head=0)
        ranked = ranked_head + ranked_extra  # the window's moments first, then the rest of time
        if intent == "time-boxed" and not text.strip() and not relaxed:
            ranked = await self._period_first(q, time_range, ranked, notes, understood.resume)
        moved = 0
        if self._spreads(plan, q):
            views = [outcome] if beyond is None else [outcome, beyond]
            spreading = spread(
                ranked,
                segments=[h for ex in views for h in ex.segments] if q.kinds is None else (),
                vector=[h for ex in views for h in ex.hits("vector")],
                options=self.options.spread,
            )
            ranked, moved = spreading.results, spreading.moved
        kept, dropped = novelty_gate(ranked, q.limit, self.options.policy.novelty_jaccard)
        if no_match:
            kept = []
        timings["rank"] = _ms(t0)
        if self.access_record is not None and kept:
            self.access_record(q.tenant, [c.id for c in kept])
        timings["total"] = _ms(t_start)

        explain = self._explain(plan, states, outcome.runs, notes, timings, len(dropped))
        if outcome.weights:
            explain["plan"]["weights"] = dict(outcome.weights)
        if outcome.coverage is not None:
            explain["plan"]["words_coverage"] = round(outcome.coverage, 3)
        if moved:
            explain["plan"]["spread"] = {"after": self.options.spread.head, "moved": moved}
        return SearchOutcome(
            intent=intent,
            time_range=_range_json(time_range, query_range, explicit, relaxed, period),
            results=kept,
            explain=explain,
            no_match=no_match,
            match_score=None if match_score is None else round(match_score, 4),
        )

    async def _access_counts(
        self, tenant: str, cands: Sequence[Candidate], notes: list[str]
    ) -> dict[str, int]:
        if self.access_lookup is None or not cands:
            return {}
        try:
            return await self.access_lookup(tenant, [c.id for c in cands])
        except Exception as exc:  # usage history is a refinement, not a requirement
            notes.append(f"access counts unavailable ({type(exc).__name__}): no usage penalty")
            return {}

    async def _roles(
        self, tenant: str, cands: Sequence[Candidate], notes: list[str]
    ) -> dict[str, str]:
        """Who said the candidates' events (empty: no lookup, or it failed)."""
        ids = event_ids_of(cands)
        if self.role_lookup is None or not ids:
            return {}
        try:
            return await self.role_lookup(tenant, ids)
        except Exception as exc:  # a refinement: the answer stands without it
            notes.append(f"roles unavailable ({type(exc).__name__}): the user's words not weighed")
            return {}

    async def _links(
        self, tenant: str, cands: Sequence[Candidate], notes: list[str]
    ) -> Links | None:
        """Supersession links of the candidates' events (None: no lookup, or it failed)."""
        if self.supersession_lookup is None or not cands:
            return None
        try:
            return await self.supersession_lookup(
                tenant, [e for c in cands for e in (c.doc.event_ids or ())]
            )
        except Exception as exc:  # links are a refinement: the search goes on without them
            notes.append(f"supersession links unavailable ({type(exc).__name__})")
            return None

    async def _follow_arcs(
        self, scope: SearchFilter, head: list[Candidate], notes: list[str], *, edits: bool
    ) -> list[Candidate]:
        """A fix question: the causes and fixes said after its best problem reports
        (``arcs``), and with ``edits`` (it asks for the change) the edit made last before each
        fix; a failed lookup leaves the candidates as they were, with a note."""
        opts = self.options
        if opts.arc_sources <= 0 or scope.kinds is not None:
            return head
        sources = arc_sources(head, opts.arc_sources)
        if not sources or self.follow_lookup is None:
            return await self._edits_before_fixes(scope, head, notes) if edits else head
        try:
            following = await self.follow_lookup(
                scope, [e for c in sources for e in c.doc.event_ids], opts.arc_window
            )
        except Exception as exc:  # the arc is a refinement: the tiers' answer stands
            notes.append(f"fix arcs unavailable ({type(exc).__name__})")
            return head
        out, changed = bring_resolutions(
            head, sources, following, per_source=opts.arc_per_source, follow=opts.arc_follow
        )
        if changed:
            notes.append(
                f"fix question: {changed} cause(s) or fix(es) said after the best"
                f" {len(sources)} problem report(s) -> candidates"
            )
        if edits:
            out = await self._edits_before_fixes(scope, out, notes)
        return out

    async def _edits_before_fixes(
        self, scope: SearchFilter, head: list[Candidate], notes: list[str]
    ) -> list[Candidate]:
        """A fix question asking for the change: the edit made last before each of the best
        moments stating a fix (``arcs.bring_fix_edits``)."""
        opts = self.options
        if self.edit_lookup is None:
            return head
        fixes = fix_statements(head, opts.arc_sources)
        if not fixes:
            return head
        try:
            edits = await self.edit_lookup(
                scope, [e for c in fixes for e in c.doc.event_ids], opts.arc_window
            )
        except Exception as exc:  # a refinement: the tiers' answer stands
            notes.append(f"fix edits unavailable ({type(exc).__name__})")
            return head
        out, brought = bring_fix_edits(head, fixes, edits, follow=opts.arc_follow)
        if brought:
            notes.append(
                f"fix question asking for the change: the edit made last before {brought} of"
                f" the best {len(fixes)} stated fix(es) -> candidates"
            )
        return out

    async def _period_first(
        self,
        q: SearchQuery,
        period: TimeRange | None,
        ranked: list[Candidate],
        notes: list[str],
        resume: bool = False,
    ) -> list[Candidate]:
        """ "What did we do <period>": the period's TOC nodes (its own calendar node, then its
        days and segments; ``search.period``) before anything the tiers found. ``resume``
        ("where did we leave off?"): each level newest first."""
        if (
            self.period_browse is None
            or period is None
            or period.since is None
            or period.until is None
            or q.kinds is not None
            or q.session_id is not None
        ):
            return ranked
        try:
            hits = await self.period_browse(
                q.tenant, q.project_id, period.since, period.until, q.limit, resume
            )
        except Exception as exc:  # the tiers' answer stands
            notes.append(f"period overview unavailable ({type(exc).__name__})")
            return ranked
        if not hits:
            return ranked
        overview = [
            Candidate(id=h.id, doc=h.doc, fused=1.0, score=1.0, factors={"period": 1.0})
            for h in hits
        ]
        shown = {c.id for c in overview}
        notes.append(f"the period's {len(overview)} TOC node(s) first, then the tiers' results")
        return overview + [c for c in ranked if c.id not in shown]

    def _spreads(self, plan: Plan, q: SearchQuery) -> bool:
        """Only a moment answer longer than its head is spread across sessions."""
        return "toc_node" not in plan.types and q.limit > self.options.spread.head

    def _moment_window(self, intent: Intent, query_range: TimeRange | None) -> TimeRange | None:
        """The period named by a question, widened for the moments that tell of it."""
        lead, lag = self.options.moment_lead_days, self.options.moment_lag_days
        if query_range is None or intent not in MOMENT_INTENTS or (lead <= 0 and lag <= 0):
            return None
        since, until = query_range.since, query_range.until
        return TimeRange(
            since - timedelta(days=lead) if since is not None else None,
            until + timedelta(days=lag) if until is not None else None,
            query_range.expression,
        )

    async def _execute(
        self,
        q: SearchQuery,
        plan: Plan,
        text: str,
        time_range: TimeRange | None,
        timings: dict[str, float],
        vector_of: QueryVector,
    ) -> _Execution:
        flt = _scope(q, time_range, plan.types)
        notes = list(plan.fallbacks)
        runs: dict[str, _TierRun] = {}
        lists: dict[str, list[Hit]] = {}
        if time_range is not None and time_range.empty:
            return _Execution([], runs, [*notes, "the time range is empty"], [])
        spreads = self._spreads(plan, q)

        def depth(tier: str) -> int:
            return tier_depth(self.options, tier, plan.fetch, q.limit, spreads=spreads)

        async def stage(tiers: Sequence[str]) -> None:
            answered = "bm25" in lists
            done = await asyncio.gather(
                *(self._run_tier(t, text, flt, depth(t), vector_of, answered) for t in tiers)
            )
            for run in done:
                runs[run.tier] = run
                timings[run.tier] = run.ms
                if run.embed_ms is not None:
                    timings["embed"] = run.embed_ms
                if run.error is None and run.skipped is None:
                    lists[run.tier] = run.hits

        # Moments (answer, locate) are lifted by the segments around them, asked of BM25 while
        # the tiers run; overviews (explore, time-boxed) are segments themselves.
        lifting: asyncio.Task[_TierRun] | None = None
        if "toc_node" not in plan.types and "bm25" in plan.primary and text.strip():
            seg_depth = self.options.spread_segments if spreads else self.options.lift_depth
            lifting = asyncio.create_task(self._segments(text, flt, seg_depth))
        await stage(plan.primary)
        segments: list[Hit] = []
        if lifting is not None:
            seg_run = await lifting
            timings["segments"] = seg_run.ms
            if seg_run.error is not None:
                notes.append(f"segment lift skipped ({seg_run.error})")
            segments = seg_run.hits

        weights, lift_share, covered = self._weigh_words(plan, text, lists, notes)

        def fuse() -> list[Candidate]:
            fused = rrf(lists, k=self.options.rrf_k, weights=weights)
            if not segments:
                return fused
            used = sum(weights.get(t, 1.0) for t, hits in lists.items() if hits)
            scale = (used or 1.0) / (self.options.rrf_k + 1)
            weight, k = self.options.lift_weight * lift_share, self.options.lift_k
            parents = segments[: self.options.lift_depth]
            return lift(fused, parents, weight=weight, k=k, scale=scale)

        failed = [t for t in plan.primary if runs[t].error is not None]
        if failed:
            working = [t for t in plan.primary if t not in failed] or [
                t for t in plan.chain if t not in plan.skipped
            ][:1]
            notes.append(
                f"{' and '.join(failed)} failed ({'; '.join(str(runs[t].error) for t in failed)})"
                f" -> {' + '.join(working) or 'nothing'}"
            )
        t0 = time.perf_counter()
        fused = fuse()
        fuse_ms = _ms(t0)
        asked_primary = bool(plan.primary)
        for i, tier in enumerate(plan.chain):
            good = self._good(fused)
            if good >= plan.need:
                for rest in plan.chain[i:]:
                    if rest not in plan.skipped:
                        runs[rest] = _TierRun(rest, skipped=f"enough results ({good})")
                break
            if tier in plan.skipped:
                if asked_primary:
                    notes.append(f"{tier} {plan.skipped[tier]}")
                continue
            if asked_primary:
                notes.append(f"{good} good result(s) of {plan.need} wanted -> {tier}")
            if tier in self.fresh_searches and "bm25" in lists:
                notes.append(f"{tier}: only the newest items (BM25 answered for the rest)")
            asked_primary = True
            await stage([tier])
            if runs[tier].error is not None:
                notes.append(f"{tier} failed ({runs[tier].error})")
            t0 = time.perf_counter()
            fused = fuse()
            fuse_ms += _ms(t0)
        timings["fuse"] = fuse_ms
        return _Execution(fused, runs, notes, segments, weights, covered)

    def _answers(self, text: str) -> Callable[[Candidate], bool]:
        """Whether a candidate answers ``text`` on its own: a vector score of at least
        ``min_similarity``, or at least ``weak_words_below`` of the query's words in it."""
        opts = self.options

        def vouched(cand: Candidate) -> bool:
            vector = cand.scores.get("vector")
            if vector is not None and vector >= opts.min_similarity:
                return True
            share = coverage(text, [cand])
            return share is None or share >= opts.weak_words_below

        return vouched

    def _weigh_words(
        self, plan: Plan, text: str, lists: Mapping[str, list[Hit]], notes: list[str]
    ) -> tuple[Mapping[str, float], float, float | None]:
        """The RRF weights, the share of the segment lift kept, and the coverage of the query's
        words by the best BM25 hits. When that coverage is below ``weak_words_below`` and the
        vector tier found something, the vector tier takes BM25's weight and BM25 the vector
        tier's (the lift, BM25's too, shrinks alike): the words matched little, and ranks
        alone cannot say so (``lexical``)."""
        hits = lists.get("bm25")
        covered = coverage(text, hits) if hits else None
        below = self.options.weak_words_below
        led = vectors_lead(plan.weights, covered, below) if lists.get("vector") else None
        if led is None or covered is None:
            return plan.weights, 1.0, covered
        notes.append(
            f"the best word matches hold {covered:.0%} of the query's words -> vectors lead"
        )
        return led, led["bm25"] / plan.weights.get("bm25", 1.0), covered

    def _explain(
        self,
        plan: Plan,
        states: Mapping[str, TierState],
        runs: Mapping[str, _TierRun],
        notes: list[str],
        timings: dict[str, float],
        dropped: int,
    ) -> dict[str, Any]:
        tiers: dict[str, dict[str, Any]] = {}
        for tier in TIERS:
            run = runs.get(tier)
            if run is not None and run.error is not None:
                tiers[tier] = {"status": "failed", "reason": run.error, "ms": run.ms}
            elif run is not None and run.skipped is not None:
                tiers[tier] = {"status": "skipped", "reason": run.skipped}
            elif run is not None:
                tiers[tier] = {"status": "used", "hits": len(run.hits), "ms": run.ms}
            elif tier in plan.skipped:
                status = "not requested" if plan.skipped[tier] == "not requested" else "unavailable"
                tiers[tier] = {"status": status, "reason": plan.skipped[tier]}
            else:
                tiers[tier] = {"status": "skipped", "reason": "not needed"}
        return {
            "tiers": tiers,
            "fallbacks": notes,
            "timings_ms": timings,
            "plan": {
                "types": list(plan.types),
                "weights": dict(plan.weights),
                "fetch": plan.fetch,
                "near_duplicates_dropped": dropped,
            },
        }


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


def best_cosine(executions: Sequence[_Execution]) -> float | None:
    """The best vector score of the runs (pgvector and Qdrant give cosine similarity)."""
    runs = [ex.runs["vector"] for ex in executions if "vector" in ex.runs]
    used = [r for r in runs if r.error is None and r.skipped is None]
    scores = [h.score for r in used for h in r.hits]
    # no vector tier, or nothing in its index for this scope (yet: the embedder may lag
    # behind BM25): no evidence either way, never a no_match
    return max(scores) if scores else None


def _iso(ts: datetime | None) -> str | None:
    return ts.astimezone(UTC).isoformat().replace("+00:00", "Z") if ts else None


def _range_json(
    used: TimeRange | None,
    from_query: TimeRange | None,
    explicit: TimeRange | None,
    relaxed: bool,
    period: TimeRange | None = None,
) -> dict[str, Any] | None:
    """``since``/``until``: the period asked about; ``window``: the wider span searched for the
    moments that tell of it (a question about a period, see ``EngineOptions``)."""
    if used is None and from_query is None:
        return None
    shown = explicit if relaxed else (period or used)
    source = "query+request" if from_query and explicit else "query" if from_query else "request"
    out: dict[str, Any] = {
        "since": _iso(shown.since if shown else None),
        "until": _iso(shown.until if shown else None),
        "expression": from_query.expression if from_query else None,
        "source": source,
    }
    if period is not None and not relaxed and used is not None:
        out["window"] = {"since": _iso(used.since), "until": _iso(used.until)}
    if relaxed:
        out["relaxed"] = True
        out["parsed"] = {"since": _iso(from_query.since), "until": _iso(from_query.until)}  # type: ignore[union-attr]
    return out
