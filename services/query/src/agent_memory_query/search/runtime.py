"""What search needs for the life of the process: the indexes, the embedder, the brainstem.

Opened once in the lifespan. Nothing here may stop the query service from starting: an index
that cannot be opened or a model that cannot be loaded only takes its tier out, and the
brainstem answers from the others (explain says so).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg_pool import AsyncConnectionPool

from agent_memory_common.core.logs import get_logger
from agent_memory_common.db.postgres import reading
from agent_memory_query.search import toc_tier
from agent_memory_query.settings import SearchOptions, Settings
from agent_memory_retrieval.adapters.factory import (
    load_embedder,
    open_text_index,
    open_vector_index,
)
from agent_memory_retrieval.docs import Hit, SearchFilter
from agent_memory_retrieval.ports import TextIndex, VectorIndex
from agent_memory_search import arc_store, descent_store, period, supersession_store
from agent_memory_search import store as search_store
from agent_memory_search.brainstem.descent import DescentOptions
from agent_memory_search.brainstem.engine import Brainstem
from agent_memory_search.brainstem.options import EngineOptions
from agent_memory_search.brainstem.ranking import RankingPolicy
from agent_memory_search.brainstem.supersede import Links

log = get_logger(__name__)


def engine_options(opts: SearchOptions) -> EngineOptions:
    return EngineOptions(
        rrf_k=opts.rrf_k,
        candidates=opts.candidates,
        vector_candidates=opts.vector_candidates,
        policy=RankingPolicy(
            usage_decay=opts.usage_decay,
            usage_boost=opts.usage_boost,
            stale_half_life_days=opts.stale_half_life_days,
            stale_floor=opts.stale_floor,
            novelty_jaccard=opts.novelty_jaccard,
            outside_period=opts.outside_period,
        ),
        min_similarity=opts.min_similarity,
        moment_lead_days=opts.moment_lead_days,
        moment_lag_days=opts.moment_lag_days,
        superseded_factor=opts.superseded_factor,
        resolution_factor=opts.resolution_factor,
        attempt_factor=opts.attempt_factor,
        artifact_factor=opts.artifact_factor,
        own_words_factor=opts.own_words_factor,
        fix_vector_weight=opts.fix_vector_weight,
        arc_sources=opts.arc_sources,
        arc_window=opts.arc_window,
        arc_follow=opts.arc_follow,
        weak_words_below=opts.weak_words_below,
        no_match_below=opts.no_match_below,
        tier_timeout_s=opts.tier_timeout_s,
        health_timeout_s=opts.health_timeout_s,
        health_ttl_s=opts.health_ttl_s,
        descent=DescentOptions(
            top=opts.descent_top, budget_ms=opts.descent_budget_ms, scope=opts.descent_project
        ),
    )


@dataclass
class SearchRuntime:
    brainstem: Brainstem
    access: search_store.AccessRecorder
    text_index: TextIndex | None
    vector_index: VectorIndex | None
    loader: asyncio.Task[None] | None = None

    async def close(self) -> None:
        if self.loader is not None and not self.loader.done():
            self.loader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.loader
        await self.access.close()
        for index in (self.text_index, self.vector_index):
            if index is not None:
                with contextlib.suppress(Exception):
                    await index.close()


async def _load_embedder(settings: Settings, brainstem: Brainstem) -> None:
    """Seconds of CPU (torch import, weights): in a thread, after the service is ready, so a
    restart is not held up and searches meanwhile fall back to BM25 (explain says why)."""
    try:
        embedder = await asyncio.to_thread(load_embedder, settings.query_embedding())
        # torch's first forward pass sets itself up (another ~15 ms): not in a user's search
        await asyncio.to_thread(embedder.embed, ["warm up"])
    except Exception as exc:
        brainstem.set_embedder(None, f"embedder failed to load: {exc}")
        log.error("search.embedder_unavailable", error=str(exc))
        return
    brainstem.set_embedder(embedder)
    log.info("search.embedder_loaded", dimension=embedder.dimension)


async def open_search(settings: Settings, pool: AsyncConnectionPool) -> SearchRuntime:
    opts = settings.query.search
    text_index: TextIndex | None = None
    vector_index: VectorIndex | None = None
    try:
        text_index = await open_text_index(settings, writer=False)
    except Exception as exc:  # the BM25 tier is lost, not the service
        log.error("search.text_index_unavailable", error=str(exc))
    try:
        vector_index = await open_vector_index(settings)
    except Exception as exc:
        log.error("search.vector_index_unavailable", error=str(exc))

    async def scan(query: str, flt: SearchFilter, limit: int) -> list[Hit]:
        async with reading(pool) as conn:
            return await search_store.scan_events(conn, query, flt, limit)

    async def toc(query: str, flt: SearchFilter, limit: int) -> list[Hit]:
        async with reading(pool) as conn:
            return await toc_tier.toc_hits(conn, query, flt, limit)

    async def fresh_scan(query: str, flt: SearchFilter, limit: int) -> list[Hit]:
        async with reading(pool) as conn:
            return await search_store.scan_events(conn, query, flt, limit, newest=opts.fresh_rows)

    async def fresh_toc(query: str, flt: SearchFilter, limit: int) -> list[Hit]:
        async with reading(pool) as conn:
            return await toc_tier.toc_hits(conn, query, flt, limit, newest=opts.fresh_rows)

    async def lookup(tenant: str, ids: Sequence[str]) -> dict[str, int]:
        # On every search's path: one SELECT needs no BEGIN and COMMIT round trips (0.6 ->
        # 0.3 ms); so do the other reads here (db.reading).
        async with reading(pool) as conn:
            return await search_store.access_counts(conn, tenant, ids)

    async def roles(tenant: str, event_ids: Sequence[str]) -> dict[str, str]:
        async with reading(pool) as conn:
            return await search_store.roles_of(conn, tenant, event_ids)

    async def links(tenant: str, event_ids: Sequence[str]) -> Links:
        async with reading(pool) as conn:
            return await supersession_store.links_of(conn, tenant, event_ids)

    async def browse(
        tenant: str,
        project_id: str | None,
        since: datetime,
        until: datetime,
        limit: int,
        newest_first: bool,
    ) -> list[Hit]:
        async with reading(pool) as conn:
            return await period.period_nodes(
                conn, tenant, project_id, since, until, limit, newest_first
            )

    async def last_day(
        tenant: str, project_id: str | None, now: datetime
    ) -> tuple[datetime, datetime] | None:
        async with reading(pool) as conn:
            return await period.last_worked_day(conn, tenant, project_id, now)

    async def follow(
        flt: SearchFilter, event_ids: Sequence[str], window: int
    ) -> dict[str, list[Hit]]:
        async with reading(pool) as conn:
            return await arc_store.following_messages(conn, flt, event_ids, window)

    async def edits(flt: SearchFilter, event_ids: Sequence[str], window: int) -> dict[str, Hit]:
        async with reading(pool) as conn:
            return await arc_store.edits_before(conn, flt, event_ids, window)

    async def descent(
        flt: SearchFilter,
        node_ids: Sequence[str],
        span: tuple[datetime, datetime] | None,
        cited: Sequence[str],
        query: str,
        limit: int,
        timeout_ms: int,
    ) -> list[tuple[str, Hit, bytes | None, str | None]]:
        async with reading(pool) as conn:
            return await descent_store.pruned_events(
                conn, flt, node_ids, span, cited, query, limit, timeout_ms
            )

    async def pruned(tenant: str, project_id: str | None) -> bool:
        async with reading(pool) as conn:
            return await descent_store.has_pruned(conn, tenant, project_id)

    access = search_store.AccessRecorder(pool, interval_s=opts.access_flush_s)
    access.start()
    brainstem = Brainstem(
        text_index=text_index,
        vector_index=vector_index,
        embedder=None,
        toc_search=toc,
        scan_search=scan,
        fresh_searches={"toc": fresh_toc, "scan": fresh_scan} if opts.fresh_rows > 0 else None,
        access_lookup=lookup,
        supersession_lookup=links,
        period_browse=browse,
        follow_lookup=follow,
        edit_lookup=edits,
        role_lookup=roles,
        last_worked_day=last_day,
        descent_lookup=descent,
        pruned_lookup=pruned,
        options=engine_options(opts),
        embedder_missing_reason=(
            "embedder loading"
            if opts.load_embedder
            else "embedder disabled (AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER=false)"
        ),
    )
    loader = None
    if opts.load_embedder:
        loader = asyncio.create_task(_load_embedder(settings, brainstem), name="load-embedder")
    return SearchRuntime(brainstem, access, text_index, vector_index, loader)
