"""The executor: run a plan against the tiers that are up, fall back, fuse, rank, explain.

Every tier is asked through a port with a time limit, and a tier that is down, slow or not
built yet (``failures.SURVIVABLE``) is turned into a fallback note rather than an error: a
search answers while Postgres is up, whatever else is away. The explain block says which tiers
ran, which did not and why, and where the milliseconds went. A failure of another kind is a bug
and propagates.

``Brainstem.search`` is its steps in order, each a method named after what it does: read the
question (``understand``, ``_resume``), plan (``_plan``), find (``_find``: the tiers, fused),
refuse (``_refuse``), gather the candidates (``_follow_arcs``, ``_beyond``) and what ranks them
(``_refinements``), rank (``_rank``), then each refinement (``_prefer_fixes``,
``_prefer_artifacts``, ``_prefer_own_words``, ``_attach_links``), lead with the period
(``_period_first``), spread (``_spread``), gate, explain (``_outcome``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

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
from agent_memory_search.brainstem.artifacts import Kind, asked_artifacts, prefer_artifacts
from agent_memory_search.brainstem.descent import (
    SUMMARY_LEVELS,
    SURVIVES,
    Descender,
    Descent,
    DescentLookup,
    Lift,
    PrunedLookup,
)
from agent_memory_search.brainstem.explain import explain, range_json
from agent_memory_search.brainstem.failures import SURVIVABLE
from agent_memory_search.brainstem.frame import without_frame
from agent_memory_search.brainstem.fusion import Candidate, lift, rrf
from agent_memory_search.brainstem.intent import (
    GENERIC_WORDS,
    Intent,
    classify,
    content_words,
    resumes,
)
from agent_memory_search.brainstem.lexical import COVERAGE_DEPTH, coverage, vectors_lead
from agent_memory_search.brainstem.options import EngineOptions
from agent_memory_search.brainstem.own_words import (
    asks_own_words,
    event_ids_of,
    prefer_own_words,
)
from agent_memory_search.brainstem.planner import TIERS, Plan, TierState, make_plan
from agent_memory_search.brainstem.ports import (
    AccessLookup,
    EditLookup,
    FollowLookup,
    LastWorkedDay,
    PeriodBrowse,
    RoleLookup,
    TierSearch,
)
from agent_memory_search.brainstem.query import SearchOutcome, SearchQuery, Understanding, scope
from agent_memory_search.brainstem.ranking import apply_policy, novelty_gate, settle, words_of
from agent_memory_search.brainstem.spread import spread
from agent_memory_search.brainstem.supersede import Links, SupersessionLookup, attach
from agent_memory_search.brainstem.tiers import (
    Execution,
    QueryVector,
    TierRun,
    best_cosine,
    elapsed_ms,
    tier_depth,
)
from agent_memory_search.brainstem.timeparse import TimeRange, parse_time

log = get_logger(__name__)

MOMENT_INTENTS: frozenset[str] = frozenset({"answer", "locate"})

# The candidates of an answer in two parts, each ranked on its own: the moments of the time
# range searched, then (a long answer about a period) the rest of time.
Parts = tuple[list[Candidate], list[Candidate]]


def _each(parts: Parts, refine: Callable[[list[Candidate]], list[Candidate]]) -> Parts:
    head, extra = parts
    return refine(head), refine(extra)


@dataclass(frozen=True)
class _Asked:
    """What a question asks for beyond its words, read from them once."""

    fix: bool  # the cause and the fix of a problem (``arcs``)
    artifacts: frozenset[Kind]  # the commands run or edits made (``artifacts``)
    own_words: bool  # what the user said (``own_words``)


@dataclass
class _Found:
    """What the tiers found for a question."""

    outcome: Execution  # over the question's time range (or all of time, when ``relaxed``)
    beyond: Execution | None  # a long answer about a period: the rest of time
    relaxed: bool  # the period the words named held nothing: searched without it
    vector_of: QueryVector | None = None  # the query's vector, embedded once


@dataclass
class _Refinements:
    """What is read about the candidates to rank them (each empty when its lookup failed)."""

    counts: dict[str, int]  # how often agents used each (the usage factor)
    links: Links | None  # the supersession links of their events
    roles: dict[str, str]  # who said their events (asked what the user said)


async def _nothing() -> dict[str, str]:
    return {}


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
        options: EngineOptions | None = None,
        embedder_missing_reason: str = "embedder not loaded",
        supersession_lookup: SupersessionLookup | None = None,
        period_browse: PeriodBrowse | None = None,
        follow_lookup: FollowLookup | None = None,
        edit_lookup: EditLookup | None = None,
        role_lookup: RoleLookup | None = None,
        last_worked_day: LastWorkedDay | None = None,
        descent_lookup: DescentLookup | None = None,
        pruned_lookup: PrunedLookup | None = None,
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
        self.options = options or EngineOptions()
        self.embedder_missing_reason = embedder_missing_reason
        self.supersession_lookup = supersession_lookup
        self.period_browse = period_browse
        self.follow_lookup = follow_lookup
        self.edit_lookup = edit_lookup
        self.role_lookup = role_lookup
        self.last_worked_day = last_worked_day
        self.descender = (
            Descender(descent_lookup, pruned_lookup, self.options.descent)
            if descent_lookup is not None and pruned_lookup is not None
            else None
        )
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
        except SURVIVABLE as exc:  # ``healthy()`` should not raise; if it does, the tier is down
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

    async def _segments(self, text: str, flt: SearchFilter, depth: int) -> TierRun:
        """The segments that match ``text`` best, for ``lift`` and ``spread``; asked of BM25."""
        run = TierRun("segments")
        start = time.perf_counter()
        seg_filter = replace(flt, types=("toc_node",), levels=("segment",), kinds=None)
        try:
            assert self.text_index is not None
            coro = self.text_index.search(text, seg_filter, depth)
            run.hits = list(await asyncio.wait_for(coro, self.options.tier_timeout_s))
        except TimeoutError:
            run.error = f"timed out after {self.options.tier_timeout_s}s"
        except SURVIVABLE as exc:  # lifting is a refinement: the search goes on without it
            run.error = f"{type(exc).__name__}: {exc}"
        run.ms = elapsed_ms(start)
        return run

    async def _run_tier(
        self,
        tier: str,
        text: str,
        flt: SearchFilter,
        fetch: int,
        vector_of: QueryVector,
        bm25_answered: bool = False,
    ) -> TierRun:
        run = TierRun(tier)
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
                run.embed_ms = elapsed_ms(t0)
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
        except SURVIVABLE as exc:  # one tier down is a fallback, never a 500
            run.error = f"{type(exc).__name__}: {exc}"
            log.warning("search.tier_failed", tier=tier, error=run.error)
        finally:
            run.ms = elapsed_ms(start)
        if run.error is not None:
            self.mark_down(tier, run.error)
        return run

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
    ) -> Execution:
        flt = scope(q, time_range, plan.types)
        notes = list(plan.fallbacks)
        runs: dict[str, TierRun] = {}
        lists: dict[str, list[Hit]] = {}
        if time_range is not None and time_range.empty:
            return Execution([], runs, [*notes, "the time range is empty"], [])
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
        lifting: asyncio.Task[TierRun] | None = None
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
        fuse_ms = elapsed_ms(t0)
        asked_primary = bool(plan.primary)
        for i, tier in enumerate(plan.chain):
            good = self._good(fused)
            if good >= plan.need:
                for rest in plan.chain[i:]:
                    if rest not in plan.skipped:
                        runs[rest] = TierRun(rest, skipped=f"enough results ({good})")
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
            fuse_ms += elapsed_ms(t0)
        timings["fuse"] = fuse_ms
        return Execution(fused, runs, notes, segments, weights, covered)

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

    # --- reading the question ---------------------------------------------------------------

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
        except SURVIVABLE as exc:  # the tiers still browse the newest moments
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

    # --- the search, step by step -------------------------------------------------------------

    async def search(
        self, q: SearchQuery, understood: Understanding | None = None
    ) -> SearchOutcome:
        """``understood``: ``understand(q)`` when the caller has it already (read once)."""
        t_start = time.perf_counter()
        if understood is None:
            understood = self.understand(q)
        timings: dict[str, float] = {"parse": elapsed_ms(t_start)}
        if understood.resume:
            t0 = time.perf_counter()
            understood = await self._resume(q, understood)
            timings["last_day"] = elapsed_ms(t0)
        plan, asked = await self._plan(q, understood, timings)
        found = await self._find(q, plan, understood, timings)
        notes = found.outcome.notes
        match_score, no_match = self._refuse(found, notes)
        if found.relaxed and understood.query_range is not None:
            notes.insert(
                0,
                f"time range {understood.query_range.expression!r} from the query matched"
                " nothing -> searched without it",
            )

        depth = max(plan.fetch, q.limit * 3)
        head = found.outcome.fused[:depth]
        # the events the indexes forgot first, so that a fix question follows their arcs too
        head, descent = await self._descend(q, plan, understood, found, head, notes, timings)
        if asked.fix:
            t0 = time.perf_counter()
            searched = understood.explicit if found.relaxed else understood.time_range
            flt = scope(q, searched, plan.types)
            head = await self._follow_arcs(flt, head, notes, edits="edit" in asked.artifacts)
            timings["arcs"] = elapsed_ms(t0)
        if no_match and descent is not None and descent.returned:
            # the vector index no longer holds the detail: an event under a summary that is
            # close enough, or holds enough of the query's words (``_answers``), is evidence
            close = (descent.best_cosine or -1.0) >= self.options.no_match_below
            if close or descent.best_words >= self.options.weak_words_below:
                no_match = False
                notes.append("no_match lifted: an event under a summary answers the query")
        if no_match and await self._forgotten(q):
            no_match = not await self._words_found(q, plan, understood.text, found, notes)
        t0 = time.perf_counter()
        extra = self._beyond(found, head, depth)
        refinements = await self._refinements(q.tenant, head + extra, asked, notes)
        timings["access"] = elapsed_ms(t0)

        t0 = time.perf_counter()
        period = self._ranked_period(understood, found, notes)
        parts = self._rank(q, understood.now, period, (head, extra), refinements.counts)
        if asked.fix:
            parts = self._prefer_fixes(parts)
        if asked.artifacts:
            parts = self._prefer_artifacts(parts, asked.artifacts)
        if refinements.roles:
            parts = self._prefer_own_words(parts, refinements.roles)
        if refinements.links is not None:
            parts = self._attach_links(parts, refinements.links, q.limit, understood.text)
        ranked = parts[0] + parts[1]  # the window's moments first, then the rest of time
        text = understood.text
        if understood.intent == "time-boxed" and not text.strip() and not found.relaxed:
            ranked = await self._period_first(
                q, understood.time_range, ranked, notes, understood.resume
            )
        ranked, moved = self._spread(plan, q, found, ranked)
        kept, dropped = novelty_gate(ranked, q.limit, self.options.policy.novelty_jaccard)
        kept = settle(kept)  # the scores shown follow the order shown
        if no_match:
            kept = []
        timings["rank"] = elapsed_ms(t0)
        timings["total"] = elapsed_ms(t_start)
        outcome = self._outcome(
            plan, understood, found, kept, len(dropped), moved, timings, match_score, no_match
        )
        if descent is not None:
            outcome.explain["descent"] = descent.explain()
        return outcome

    async def _descend(
        self,
        q: SearchQuery,
        plan: Plan,
        understood: Understanding,
        found: _Found,
        head: list[Candidate],
        notes: list[str],
        timings: dict[str, float],
    ) -> tuple[list[Candidate], Descent | None]:
        """Descend when the indexes have forgotten (``descent``): the exact events under the
        summaries the answer leads with, or under the period asked about, that the pruner
        took out of the indexes. Survivable: over its budget or with Postgres away, the
        tiers' answer stands with a note. A request that names its tiers (``tiers``) or kinds
        is answered by them alone: the descent is no tier, and since it reads the whole
        project, a vector-only search of what the index forgot would find it again by words."""
        descender = self.descender
        text = understood.text
        restricted = q.kinds is not None or q.tiers is not None
        if descender is None or descender.options.top <= 0 or restricted:
            return head, None
        if not text.strip():
            return head, None
        t0 = time.perf_counter()
        searched = understood.explicit if found.relaxed else understood.time_range
        asked = understood.period if not found.relaxed else None
        if asked is None and understood.intent == "time-boxed":
            asked = understood.time_range
        period = (
            (asked.since, asked.until)
            if asked is not None and asked.since is not None and asked.until is not None
            else None
        )
        # the step keeps to its budget itself (the embeddings are left out when they would
        # not fit); this is the hard stop, for a lookup that does not return in time
        budget = descender.options.budget_ms / 1000 * 1.5
        try:
            head, done = await asyncio.wait_for(
                descender.run(
                    text_index=self.text_index,
                    vector_index=self.vector_index if self.embedder is not None else None,
                    embedder=self.embedder,
                    query_vector=found.vector_of if self.embedder is not None else None,
                    flt=scope(q, None, None),
                    searched=scope(q, searched, plan.types),
                    text=text,
                    head=head,
                    period=period,
                    weights=self._answered_weights(plan, found),
                    rrf_k=self.options.rrf_k,
                    min_similarity=self.options.min_similarity,
                    lift=self._lift(plan, found),
                ),
                budget,
            )
        except SURVIVES as exc:  # a refinement: the tiers' answer stands
            why = "over its budget" if isinstance(exc, TimeoutError) else type(exc).__name__
            notes.append(f"descent skipped ({why}, {descender.options.budget_ms:g} ms budget)")
            timings["descent"] = elapsed_ms(t0)
            return head, None
        timings["descent"] = elapsed_ms(t0)
        if done is not None and done.returned:
            notes.append(
                f"descent: {len(done.returned)} event(s) beyond the indexes' retention under"
                f" {len(done.opened)} summar{'y' if len(done.opened) == 1 else 'ies'}"
                + (" and the period asked about" if done.period else "")
                + " -> candidates"
            )
        return head, done

    def _lift(self, plan: Plan, found: _Found) -> Lift | None:
        """The segment lift as the tiers applied it (``_execute``: its weight shrinks with
        BM25's when the vectors lead), for the descent's own segments; None for an overview
        (its answer is segments, not lifted moments)."""
        if "toc_node" in plan.types or "bm25" not in plan.primary:
            return None
        used = (found.outcome.weights or plan.weights).get("bm25", 0.0)
        planned = plan.weights.get("bm25", 0.0)
        share = used / planned if planned else 1.0
        opts = self.options
        return Lift(weight=opts.lift_weight * share, k=opts.lift_k, depth=opts.lift_depth)

    @staticmethod
    def _answered_weights(plan: Plan, found: _Found) -> dict[str, float]:
        """The fusion's weights of the tiers that ran (asked, not failed nor skipped): the
        lists the descent places its events in (a question asked of the vector tier alone
        gets no BM25 list from it)."""
        weights = found.outcome.weights or plan.weights
        runs = found.outcome.runs
        return {
            tier: weight
            for tier, weight in weights.items()
            if tier in runs and runs[tier].error is None and runs[tier].skipped is None
        }

    async def _plan(
        self, q: SearchQuery, understood: Understanding, timings: dict[str, float]
    ) -> tuple[Plan, _Asked]:
        """Which tiers to ask, how deep and with what weights, from the intent and the tiers
        that are up; and what the question asks for beyond its words."""
        t0 = time.perf_counter()
        allowed = [t for t in TIERS if q.tiers is None or t in q.tiers]
        states = await self.tier_states(allowed)
        timings["health"] = elapsed_ms(t0)
        intent = understood.intent
        plan = make_plan(intent, q.limit, states, q.tiers, self.options.candidates)
        fix_question = intent in MOMENT_INTENTS and is_fix_question(understood.rest)
        artifacts = asked_artifacts(understood.rest) if intent in MOMENT_INTENTS else frozenset()
        if fix_question and self.options.fix_vector_weight is not None:
            plan = replace(plan, weights={**plan.weights, "vector": self.options.fix_vector_weight})
        asked = _Asked(fix_question, artifacts, asks_own_words(understood.rest))
        return plan, asked

    async def _find(
        self, q: SearchQuery, plan: Plan, understood: Understanding, timings: dict[str, float]
    ) -> _Found:
        """The plan run over the question's time range. A long answer to a question about a
        period is also run beyond it, at the same time: after the moments around the period,
        where else in time the same thing was talked about (it is also the answer when the
        period holds nothing). A period named by the words that holds nothing for this query
        (say "last year" in a log that ended before it) is dropped: answering from all time
        beats an empty answer, and explain and time_range say so."""
        text, explicit = understood.text, understood.explicit
        vector_of = QueryVector(lambda: self._embed_soon(text))
        if "vector" in plan.primary and text.strip() and self.embedder is not None:
            vector_of.start()
        first = asyncio.create_task(
            self._execute(q, plan, text, understood.time_range, timings, vector_of)
        )
        beyond_timings: dict[str, float] = {}
        wide: asyncio.Task[Execution] | None = None
        if understood.window is not None and self._spreads(plan, q):
            wide = asyncio.create_task(
                self._execute(q, plan, text, explicit, beyond_timings, vector_of)
            )
        outcome = await first
        if not outcome.fused and understood.query_range is not None:
            outcome = (
                await wide
                if wide
                else await self._execute(q, plan, text, explicit, timings, vector_of)
            )
            timings.update(beyond_timings)
            return _Found(outcome, None, relaxed=True, vector_of=vector_of)
        beyond: Execution | None = None
        if wide is not None:
            beyond = await wide
            timings["beyond_period"] = round(sum(beyond_timings.values()), 2)
        return _Found(outcome, beyond, relaxed=False, vector_of=vector_of)

    def _refuse(self, found: _Found, notes: list[str]) -> tuple[float | None, bool]:
        """The query's best cosine with anything in scope, and whether it is too low for
        anything relevant to be stored (``no_match``: no results)."""
        runs = [found.outcome] if found.beyond is None else [found.outcome, found.beyond]
        match_score = best_cosine(runs)
        threshold = self.options.no_match_below
        no_match = match_score is not None and threshold > 0 and match_score < threshold
        if no_match:
            notes.append(
                f"no_match: the best cosine {match_score:.3f} is below {threshold:g}"
                " -> nothing relevant stored, no results"
            )
        return match_score, no_match

    async def _forgotten(self, q: SearchQuery) -> bool:
        """Whether the pruner took detail of the question's project out of the indexes (the
        descender's cached check): then a low best cosine is no evidence of absence."""
        descender = self.descender
        if descender is None:
            return False
        try:
            return await descender.has_pruned(q.tenant, q.project_id)
        except SURVIVES:
            return False

    async def _words_found(
        self, q: SearchQuery, plan: Plan, text: str, found: _Found, notes: list[str]
    ) -> bool:
        """Whether the query's words are still in the indexes, where they have forgotten and
        the descent did not lift ``no_match`` (skipped, over its budget, or nothing close):
        the vector index holds only summaries and the memories that never go stale, so the
        query's best cosine is low for most answerable questions (bench-real aged: 81 of 139
        dev questions refused). The words decide instead: the tiers' best BM25 hits, else the
        best summaries (segment to year, the levels a plan may not have asked for), holding
        at least ``weak_words_below`` of the query's words say something relevant is stored.
        """
        covered = found.outcome.coverage
        below = self.options.weak_words_below
        if (covered is None or covered < below) and self.text_index is not None:
            wanted = replace(scope(q, None, plan.types), types=("toc_node",), levels=SUMMARY_LEVELS)
            try:
                hits = await self.text_index.search(text, wanted, COVERAGE_DEPTH)
            except SURVIVES:
                hits = []
            covered = max(covered or 0.0, coverage(text, hits) or 0.0)
        if covered is not None and covered >= below:
            notes.append(
                f"no_match lifted: detail beyond retention, and the indexes still hold"
                f" {covered:.0%} of the query's words"
            )
            return True
        return False

    def _beyond(self, found: _Found, head: list[Candidate], depth: int) -> list[Candidate]:
        """A long answer about a period: what the run beyond it found that is not in the
        answer already, to follow the window's moments."""
        if found.beyond is None:
            return []
        inside = {c.id for c in found.outcome.fused} | {c.id for c in head}
        return [c for c in found.beyond.fused if c.id not in inside][:depth]

    async def _refinements(
        self, tenant: str, cands: list[Candidate], asked: _Asked, notes: list[str]
    ) -> _Refinements:
        """Usage counts, supersession links and (asked what the user said) the events' roles,
        read for the same candidates: one round trip's time for all (each is a refinement: a
        failure is a note, not an error)."""
        counts, links, roles = await asyncio.gather(
            self._access_counts(tenant, cands, notes),
            self._links(tenant, cands, notes),
            self._roles(tenant, cands, notes) if asked.own_words else _nothing(),
        )
        return _Refinements(counts, links, roles)

    def _ranked_period(
        self, understood: Understanding, found: _Found, notes: list[str]
    ) -> TimeRange | None:
        """The period asked about that ranks first among the moments searched around it (none
        when the search dropped it)."""
        period = understood.period
        if period is None or found.relaxed:
            return None
        notes.append(
            f"moments told of {period.expression!r} searched from"
            f" {self.options.moment_lead_days:g} days before to"
            f" {self.options.moment_lag_days:g} days after it; the period itself ranks first"
            + ("; a long answer goes on beyond it" if found.beyond is not None else "")
        )
        return period

    def _rank(
        self,
        q: SearchQuery,
        now: datetime,
        period: TimeRange | None,
        parts: Parts,
        counts: Mapping[str, int],
    ) -> Parts:
        """The ranking policy (``ranking.apply_policy``) over each part."""
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

        return _each(parts, rank)

    def _prefer_fixes(self, parts: Parts) -> Parts:
        """A fix question: the cause and the fix over the failed attempts (``arcs``)."""
        opts = self.options
        return _each(
            parts,
            lambda part: prefer_resolution(
                part, resolution=opts.resolution_factor, attempt=opts.attempt_factor
            ),
        )

    def _prefer_artifacts(self, parts: Parts, kinds: frozenset[Kind]) -> Parts:
        """Asked about a command run or an edit made: the commands or edits (``artifacts``)."""
        factor = self.options.artifact_factor
        return _each(parts, lambda part: prefer_artifacts(part, kinds=kinds, factor=factor))

    def _prefer_own_words(self, parts: Parts, roles: Mapping[str, str]) -> Parts:
        """Asked what the user said: the user's own prompts (``own_words``)."""
        factor = self.options.own_words_factor
        return _each(parts, lambda part: prefer_own_words(part, roles=roles, factor=factor))

    def _attach_links(self, parts: Parts, links: Links, limit: int, text: str) -> Parts:
        """Supersession: what replaced a superseded moment joins the answer above it, and the
        superseded one is demoted (``supersede.attach``)."""
        demote = self.options.superseded_factor
        head, extra = parts
        return (
            attach(head, links, demote=demote, head=limit, vouched=self._answers(text)),
            attach(extra, links, demote=demote, head=0),
        )

    def _spread(
        self, plan: Plan, q: SearchQuery, found: _Found, ranked: list[Candidate]
    ) -> tuple[list[Candidate], int]:
        """A long answer spread across the sessions that matter after its head (``spread``);
        how many results moved."""
        if not self._spreads(plan, q):
            return ranked, 0
        views = [found.outcome] if found.beyond is None else [found.outcome, found.beyond]
        spreading = spread(
            ranked,
            segments=[h for ex in views for h in ex.segments] if q.kinds is None else (),
            vector=[h for ex in views for h in ex.hits("vector")],
            options=self.options.spread,
        )
        return spreading.results, spreading.moved

    def _outcome(
        self,
        plan: Plan,
        understood: Understanding,
        found: _Found,
        kept: list[Candidate],
        dropped: int,
        moved: int,
        timings: dict[str, float],
        match_score: float | None,
        no_match: bool,
    ) -> SearchOutcome:
        """The answer and its explain block."""
        outcome = found.outcome
        block = explain(plan, outcome.runs, outcome.notes, timings, dropped)
        if outcome.weights:
            block["plan"]["weights"] = dict(outcome.weights)
        if outcome.coverage is not None:
            block["plan"]["words_coverage"] = round(outcome.coverage, 3)
        if moved:
            block["plan"]["spread"] = {"after": self.options.spread.head, "moved": moved}
        period = None if found.relaxed else understood.period
        return SearchOutcome(
            intent=understood.intent,
            time_range=range_json(
                understood.time_range,
                understood.query_range,
                understood.explicit,
                found.relaxed,
                period,
            ),
            results=kept,
            explain=block,
            no_match=no_match,
            match_score=None if match_score is None else round(match_score, 4),
        )

    # --- the refinements' lookups: each failure is a note, the tiers' answer stands ---------

    async def _access_counts(
        self, tenant: str, cands: Sequence[Candidate], notes: list[str]
    ) -> dict[str, int]:
        if self.access_lookup is None or not cands:
            return {}
        try:
            return await self.access_lookup(tenant, [c.id for c in cands])
        except SURVIVABLE as exc:  # usage history is a refinement, not a requirement
            notes.append(f"access counts unavailable ({type(exc).__name__}): no usage factor")
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
        except SURVIVABLE as exc:  # a refinement: the answer stands without it
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
        except SURVIVABLE as exc:  # links are a refinement: the search goes on without them
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
        except SURVIVABLE as exc:  # the arc is a refinement: the tiers' answer stands
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
        except SURVIVABLE as exc:  # a refinement: the tiers' answer stands
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
        except SURVIVABLE as exc:  # the tiers' answer stands
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
