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
from datetime import UTC, datetime
from typing import Any

from agent_memory_common.logs import get_logger
from agent_memory_query.brainstem.fusion import Candidate, lift, rrf
from agent_memory_query.brainstem.intent import GENERIC_WORDS, Intent, classify, content_words
from agent_memory_query.brainstem.planner import TIERS, Plan, TierState, fetch_depth, make_plan
from agent_memory_query.brainstem.ranking import RankingPolicy, apply_policy, novelty_gate
from agent_memory_query.brainstem.timeparse import TimeRange, parse_time
from agent_memory_retrieval.docs import Hit, SearchFilter
from agent_memory_retrieval.ports import Embedder, TextIndex, VectorIndex

log = get_logger(__name__)

TierSearch = Callable[[str, SearchFilter, int], Awaitable[list[Hit]]]
AccessLookup = Callable[[str, Sequence[str]], Awaitable[dict[str, int]]]
AccessRecord = Callable[[str, Sequence[str]], None]


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
    tier_timeout_s: float = 2.0
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


@dataclass
class SearchOutcome:
    intent: Intent
    time_range: dict[str, Any] | None
    results: list[Candidate]
    explain: dict[str, Any]


@dataclass
class _TierRun:
    tier: str
    hits: list[Hit] = field(default_factory=list)
    ms: float = 0.0
    embed_ms: float | None = None
    error: str | None = None
    skipped: str | None = None


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


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
        access_lookup: AccessLookup | None = None,
        access_record: AccessRecord | None = None,
        options: EngineOptions | None = None,
        embedder_missing_reason: str = "embedder not loaded",
    ) -> None:
        self.text_index = text_index
        self.vector_index = vector_index
        self.embedder = embedder
        self.toc_search = toc_search
        self.scan_search = scan_search
        self.access_lookup = access_lookup
        self.access_record = access_record
        self.options = options or EngineOptions()
        self.embedder_missing_reason = embedder_missing_reason
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

    async def _embed(self, text: str) -> list[float]:
        embedder = self.embedder
        assert embedder is not None
        vectors = await asyncio.to_thread(embedder.embed, [text])
        return vectors[0]

    async def _segments(self, text: str, flt: SearchFilter) -> _TierRun:
        """The segments that match ``text`` best, for ``lift``; asked of the BM25 index."""
        run = _TierRun("segments")
        start = time.perf_counter()
        seg_filter = replace(flt, types=("toc_node",), levels=("segment",), kinds=None)
        try:
            assert self.text_index is not None
            coro = self.text_index.search(text, seg_filter, self.options.lift_depth)
            run.hits = list(await asyncio.wait_for(coro, self.options.tier_timeout_s))
        except TimeoutError:
            run.error = f"timed out after {self.options.tier_timeout_s}s"
        except Exception as exc:  # lifting is a refinement: the search goes on without it
            run.error = f"{type(exc).__name__}: {exc}"
        run.ms = _ms(start)
        return run

    async def _run_tier(self, tier: str, text: str, flt: SearchFilter, fetch: int) -> _TierRun:
        run = _TierRun(tier)
        start = time.perf_counter()
        try:
            if tier == "vector":
                if not text.strip():
                    run.skipped = "no query words"
                    return run
                assert self.vector_index is not None
                t0 = time.perf_counter()
                vector = await asyncio.wait_for(self._embed(text), self.options.tier_timeout_s)
                run.embed_ms = _ms(t0)
                coro: Awaitable[list[Hit]] = self.vector_index.search(vector, flt, fetch)
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

    async def search(self, q: SearchQuery) -> SearchOutcome:
        t_start = time.perf_counter()
        now = q.now or datetime.now(UTC)
        parsed = parse_time(q.query, now)
        # "what did we do yesterday": once the period is out, the words are too generic to
        # rank by, so the tiers browse the period instead of matching "what did we do".
        generic = parsed.range is not None and not content_words(parsed.rest, GENERIC_WORDS)
        text = "" if generic else parsed.rest
        has_explicit = q.since is not None or q.until is not None
        explicit = TimeRange(q.since, q.until, None) if has_explicit else None
        query_range = parsed.range
        if explicit and query_range:
            time_range: TimeRange | None = query_range.intersect(explicit)
        else:
            time_range = query_range or explicit
        intent: Intent = q.intent or classify(q.query, parsed.rest, parsed.range is not None)
        timings: dict[str, float] = {"parse": _ms(t_start)}

        t0 = time.perf_counter()
        allowed = [t for t in TIERS if q.tiers is None or t in q.tiers]
        states = await self.tier_states(allowed)
        timings["health"] = _ms(t0)
        plan = make_plan(intent, q.limit, states, q.tiers, self.options.candidates)

        outcome = await self._execute(q, plan, text, time_range, timings)
        relaxed = False
        if not outcome[0] and query_range is not None:
            # The words named a period that holds nothing for this query (say "last year" in
            # a log that ended before it): answering from all time beats an empty answer, and
            # explain and time_range say that the range was dropped.
            relaxed = True
            outcome = await self._execute(q, plan, text, explicit, timings)
        fused, runs, notes = outcome
        if relaxed and query_range is not None:
            notes.insert(
                0,
                f"time range {query_range.expression!r} from the query matched nothing"
                " -> searched without it",
            )

        t0 = time.perf_counter()
        head = fused[: max(plan.fetch, q.limit * 3)]
        counts: dict[str, int] = {}
        if self.access_lookup is not None and head:
            try:
                counts = await self.access_lookup(q.tenant, [c.id for c in head])
            except Exception as exc:  # usage history is a refinement, not a requirement
                notes.append(f"access counts unavailable ({type(exc).__name__}): no usage penalty")
        timings["access"] = _ms(t0)
        t0 = time.perf_counter()
        ranked = apply_policy(head, access_counts=counts, now=now, policy=self.options.policy)
        kept, dropped = novelty_gate(ranked, q.limit, self.options.policy.novelty_jaccard)
        timings["rank"] = _ms(t0)
        if self.access_record is not None and kept:
            self.access_record(q.tenant, [c.id for c in kept])
        timings["total"] = _ms(t_start)

        explain = self._explain(plan, states, runs, notes, timings, len(dropped))
        return SearchOutcome(
            intent=intent,
            time_range=_range_json(time_range, query_range, explicit, relaxed),
            results=kept,
            explain=explain,
        )

    async def _execute(
        self,
        q: SearchQuery,
        plan: Plan,
        text: str,
        time_range: TimeRange | None,
        timings: dict[str, float],
    ) -> tuple[list[Candidate], dict[str, _TierRun], list[str]]:
        flt = SearchFilter(
            tenant=q.tenant,
            project_id=q.project_id,
            agent_id=q.agent_id,
            session_id=q.session_id,
            since=time_range.since if time_range else None,
            until=time_range.until if time_range else None,
            types=plan.types,
            kinds=q.kinds,
        )
        notes = list(plan.fallbacks)
        runs: dict[str, _TierRun] = {}
        lists: dict[str, list[Hit]] = {}
        if time_range is not None and time_range.empty:
            return [], runs, [*notes, "the time range is empty"]

        def depth(tier: str) -> int:
            if tier == "vector" and self.options.vector_candidates is not None:
                return fetch_depth(q.limit, self.options.vector_candidates)
            return plan.fetch

        async def stage(tiers: Sequence[str]) -> None:
            done = await asyncio.gather(*(self._run_tier(t, text, flt, depth(t)) for t in tiers))
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
            lifting = asyncio.create_task(self._segments(text, flt))
        await stage(plan.primary)
        segments: list[Hit] = []
        if lifting is not None:
            seg_run = await lifting
            timings["segments"] = seg_run.ms
            if seg_run.error is not None:
                notes.append(f"segment lift skipped ({seg_run.error})")
            segments = seg_run.hits

        def fuse() -> list[Candidate]:
            fused = rrf(lists, k=self.options.rrf_k, weights=plan.weights)
            if not segments:
                return fused
            used = sum(plan.weights.get(t, 1.0) for t, hits in lists.items() if hits)
            scale = (used or 1.0) / (self.options.rrf_k + 1)
            weight, k = self.options.lift_weight, self.options.lift_k
            return lift(fused, segments, weight=weight, k=k, scale=scale)

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
            asked_primary = True
            await stage([tier])
            if runs[tier].error is not None:
                notes.append(f"{tier} failed ({runs[tier].error})")
            t0 = time.perf_counter()
            fused = fuse()
            fuse_ms += _ms(t0)
        timings["fuse"] = fuse_ms
        return fused, runs, notes

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


def _iso(ts: datetime | None) -> str | None:
    return ts.astimezone(UTC).isoformat().replace("+00:00", "Z") if ts else None


def _range_json(
    used: TimeRange | None,
    from_query: TimeRange | None,
    explicit: TimeRange | None,
    relaxed: bool,
) -> dict[str, Any] | None:
    if used is None and from_query is None:
        return None
    shown = explicit if relaxed else used
    source = "query+request" if from_query and explicit else "query" if from_query else "request"
    out: dict[str, Any] = {
        "since": _iso(shown.since if shown else None),
        "until": _iso(shown.until if shown else None),
        "expression": from_query.expression if from_query else None,
        "source": source,
    }
    if relaxed:
        out["relaxed"] = True
        out["parsed"] = {"since": _iso(from_query.since), "until": _iso(from_query.until)}  # type: ignore[union-attr]
    return out
