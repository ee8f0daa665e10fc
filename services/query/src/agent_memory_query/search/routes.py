"""``/v1/search``: plain words in, the right moments out, with provenance and an explanation.

POST takes a JSON body; GET takes the same fields as query parameters (``q`` for the query,
comma-separated lists) so that a search is one curl away.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

import orjson
import pydantic
from fastapi import APIRouter, Query, Request
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.auth import READ, Principal
from agent_memory_common.http import ApiError, error_responses, validation_details
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.retention.explain import notes_with, retention_notes
from agent_memory_query.retention.store import policies_of
from agent_memory_query.search.brainstem.engine import SearchOutcome
from agent_memory_query.search.brainstem.fusion import Candidate
from agent_memory_query.search.metrics import observe_search
from agent_memory_query.search.schemas import SearchRequest, SearchResponse
from agent_memory_query.search.topic_tier import add_topic_tier
from agent_memory_query.sharing.policy import (
    Visibility,
    attribute,
    attribute_with,
    read_visibility,
    scoped_agent,
    scoped_project,
)
from agent_memory_retrieval.retention import RetentionPolicy

router = APIRouter(tags=["search"])


def result_json(cand: Candidate) -> dict[str, Any]:
    doc = cand.doc
    return {
        "id": doc.id,
        "type": doc.type,
        "level": doc.level,
        "title": doc.title or None,
        "text": doc.text,
        "ts": doc.ts,
        "project_id": doc.project_id,
        "agent_id": doc.agent_id,
        "session_id": doc.session_id or None,
        "score": round(cand.score, 6),
        "salience": round(float(doc.salience), 4),
        "memory_kind": doc.kind,
        "event_ids": list(doc.event_ids),
        **cand.links,  # supersedes / superseded_by, only when linked
    }


def answer_json(outcome: SearchOutcome) -> dict[str, Any]:
    explain = dict(outcome.explain)
    explain["ranking"] = [
        {
            "id": c.id,
            "fused": round(c.fused, 6),
            "ranks": c.ranks,
            "factors": {k: round(v, 4) for k, v in c.factors.items()},
        }
        for c in outcome.results
    ]
    return {
        "intent": outcome.intent,
        "time_range": outcome.time_range,
        "results": [result_json(c) for c in outcome.results],
        "no_match": outcome.no_match,
        "match_score": outcome.match_score,
        "explain": explain,
    }


async def run_search(ctx: Ctx, principal: Principal, body: SearchRequest) -> dict[str, Any]:
    """Search within what the caller's key and the projects' sharing strategies allow."""
    if ctx.search is None:
        raise ApiError(503, "unavailable", "search is not ready", headers={"Retry-After": "2"})
    begun = time.perf_counter()
    project_id = scoped_project(principal, body.project_id)
    async with ctx.pool.connection() as conn:
        agent_id = await scoped_agent(conn, principal, project_id, body.agent_id)
    scope_ms = _ms(begun)
    deeper = body.user_id is not None or principal.agent_id is not None
    asked = body.model_copy(
        update={
            "project_id": project_id,
            "agent_id": agent_id,
            "limit": min(100, body.limit * 3) if deeper else body.limit,
        }
    )
    started = time.perf_counter()
    read = _Reads(ctx.pool, principal)
    outcome = await ctx.search.brainstem.search(asked.to_query(principal.tenant), read)
    observe_search(str(outcome.intent), outcome.explain, time.perf_counter() - started)
    answer = answer_json(outcome)
    found = [(c.doc, c.ranks) for c in outcome.results]
    after = time.perf_counter()
    if read.covers(c.id for c in outcome.results):
        assert read.visibility is not None and read.policies is not None
        notes = notes_with(read.policies, found)
        answer["results"] = attribute_with(
            read.visibility, principal, answer["results"], user_id=body.user_id, limit=body.limit
        )
    else:  # a result the candidates did not hold (a period's TOC node): read for the results

        async def attributed() -> list[dict[str, Any]]:
            async with ctx.pool.connection() as conn:
                return await attribute(
                    conn, principal, answer["results"], user_id=body.user_id, limit=body.limit
                )

        # two reads of the same results, on two connections at once
        notes, answer["results"] = await asyncio.gather(
            retention_notes(ctx.pool, principal.tenant, found), attributed()
        )
    if notes:
        answer["explain"]["retention"] = notes
    timings = answer["explain"]["timings_ms"]
    # where a search's time goes besides the brainstem: the caller's scope before it, who
    # may see each result and the retention notes after it (answering: the whole route)
    timings["scope"], timings["attribute"] = scope_ms, _ms(after)
    # explore intents lead with topics of the (scoped) project
    scoped = body.model_copy(update={"project_id": project_id})
    answer = await add_topic_tier(ctx, principal.tenant, scoped, answer)
    timings["answering"] = _ms(begun)
    return answer


class _Reads:
    """Who may see each candidate and its project's retention policy, read on one connection
    while the brainstem reads the candidates' usage counts (``Brainstem.search(alongside=)``):
    before, these reads followed the ranking, ~2 ms of every search's wall time."""

    def __init__(self, pool: AsyncConnectionPool, principal: Principal) -> None:
        self._pool = pool
        self._principal = principal
        self._ids: set[str] = set()
        self.visibility: Visibility | None = None
        self.policies: dict[str, RetentionPolicy] | None = None

    async def __call__(self, candidates: Sequence[Candidate]) -> None:
        docs = [c.doc for c in candidates]
        projects = {d.project_id for d in docs}
        event_ids = [e for d in docs for e in d.event_ids]

        async def visibility() -> Visibility:
            async with self._pool.connection() as conn:
                return await read_visibility(conn, self._principal, event_ids, projects)

        async def policies() -> dict[str, RetentionPolicy]:
            async with self._pool.connection() as conn:
                return await policies_of(conn, self._principal.tenant, projects)

        self.visibility, self.policies = await asyncio.gather(visibility(), policies())
        self._ids = {c.id for c in candidates}

    def covers(self, ids: Iterable[str]) -> bool:
        """Whether what was read holds every one of these results."""
        return self.visibility is not None and all(i in self._ids for i in ids)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def parse_request(raw: Any, rename: dict[str, str] | None = None) -> SearchRequest:
    """Validate a body (or the GET parameters): 422 naming the field, as everywhere else."""
    if not isinstance(raw, dict):
        raise ApiError(422, "validation_error", "body: expected a JSON object", field="body")
    try:
        return SearchRequest.model_validate(raw)
    except pydantic.ValidationError as exc:
        details = validation_details(list(exc.errors()))
        for d in details:  # GET names the query "q"
            head, dot, tail = d["field"].partition(".")
            d["field"] = (rename or {}).get(head, head) + dot + tail
        first = details[0]
        raise ApiError(
            422,
            "validation_error",
            f"{first['field']}: {first['message']}" if first["field"] else first["message"],
            field=first["field"] or None,
            details=details,
        ) from None


@router.post(
    "/v1/search",
    dependencies=[READ],
    response_model=SearchResponse,
    summary="Search memory in plain words; falls back across tiers, explains what it did",
    responses=error_responses(401, 422, 503),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": SearchRequest.model_json_schema()}},
        }
    },
)
async def post_search(ctx: Ctx, caller: Caller, request: Request) -> dict[str, Any]:
    try:
        raw = orjson.loads(await request.body())
    except orjson.JSONDecodeError as exc:
        raise ApiError(422, "validation_error", f"body: not JSON ({exc})", field="body") from None
    return await run_search(ctx, caller, parse_request(raw))


def _split(values: list[str] | None) -> list[str] | None:
    """``kinds=a,b`` and ``kinds=a&kinds=b`` both work."""
    if not values:
        return None
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


@router.get(
    "/v1/search",
    dependencies=[READ],
    response_model=SearchResponse,
    summary="The same search for curl: ?q=...&project_id=...&kinds=a,b&tiers=bm25",
    responses=error_responses(401, 422, 503),
)
async def get_search(
    ctx: Ctx,
    caller: Caller,
    q: Annotated[str, Query(description="Plain words")],
    limit: int = 10,
    project_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    user_id: str | None = None,
    since: Annotated[str | None, Query(description="RFC 3339 or epoch ms, inclusive")] = None,
    until: Annotated[str | None, Query(description="RFC 3339 or epoch ms, exclusive")] = None,
    kinds: Annotated[list[str] | None, Query(description="Comma separated")] = None,
    intent: str = "auto",
    now: Annotated[str | None, Query(description="Reference time for relative dates")] = None,
    tiers: Annotated[list[str] | None, Query(description="Comma separated")] = None,
) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "query": q,
        "limit": limit,
        "project_id": project_id,
        "agent_id": agent_id,
        "session_id": session_id,
        "user_id": user_id,
        "since": int(since) if since and since.isdigit() else since,
        "until": int(until) if until and until.isdigit() else until,
        "kinds": _split(kinds),
        "intent": intent,
        "now": int(now) if now and now.isdigit() else now,
        "tiers": _split(tiers),
    }
    body = parse_request(raw, {"query": "q"})
    return await run_search(ctx, caller, body)
