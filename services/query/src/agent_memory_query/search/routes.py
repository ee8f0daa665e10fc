"""``/v1/search``: plain words in, the right moments out, with provenance and an explanation.

POST takes a JSON body; GET takes the same fields as query parameters (``q`` for the query,
comma-separated lists) so that a search is one curl away.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from datetime import UTC, datetime
from typing import Annotated, Any

import orjson
import pydantic
from fastapi import APIRouter, Query, Request

from agent_memory_common.auth.access import READ, Principal
from agent_memory_common.db.postgres import reading
from agent_memory_common.web.http import ApiError, error_responses, validation_details
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.retention.explain import retention_notes
from agent_memory_query.search.metrics import observe_search
from agent_memory_query.search.schemas import SearchRequest, SearchResponse
from agent_memory_query.search.topic_tier import add_topic_tier, start_topics
from agent_memory_query.sharing.policy import attribute, scoped_agent, scoped_project
from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.query import SearchOutcome, SearchQuery, Understanding

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


def settle_scores(results: list[dict[str, Any]]) -> None:
    """The answer's scores follow its order (``ranking.settle`` on the brainstem's part): a
    result placed above one that scores more, as the topics ahead of an explore answer, shows
    that score."""
    below = float("-inf")
    for result in reversed(results):
        if result["score"] < below:
            result["score"] = below
        below = result["score"]


async def run_search(ctx: Ctx, principal: Principal, body: SearchRequest) -> dict[str, Any]:
    """Search within what the caller's key and the projects' sharing strategies allow."""
    if ctx.search is None:
        raise ApiError(503, "unavailable", "search is not ready", headers={"Retry-After": "2"})
    begun = time.perf_counter()
    project_id = scoped_project(principal, body.project_id)
    async with reading(ctx.pool) as conn:
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
    query = asked.to_query(principal.tenant)
    if query.now is None:  # one reference time for the search and the topic tier beside it
        query = dataclasses.replace(query, now=datetime.now(UTC))
    # explore questions lead with topics of the (scoped) project: the tier runs beside the search
    scoped = body.model_copy(update={"project_id": project_id})
    understood = ctx.search.brainstem.understand(query)
    early = start_topics(ctx, principal.tenant, scoped, understood.intent, understood.range_json())
    try:
        answer = await _answer(ctx, principal, body, query, understood)
        timings = answer["explain"]["timings_ms"]
        timings["scope"] = scope_ms
        answer = await add_topic_tier(ctx, principal.tenant, scoped, answer, early)
        settle_scores(answer["results"])  # topics lead an explore answer: scores follow too
    finally:
        if early is not None and not early.task.done():  # the search failed
            await early.cancel()
    timings["answering"] = _ms(begun)
    return answer


async def _answer(
    ctx: Ctx,
    principal: Principal,
    body: SearchRequest,
    query: SearchQuery,
    understood: Understanding,
) -> dict[str, Any]:
    """The brainstem's answer, with who may see each result and the retention notes."""
    assert ctx.search is not None
    started = time.perf_counter()
    outcome = await ctx.search.brainstem.search(query, understood)
    observe_search(str(outcome.intent), outcome.explain, time.perf_counter() - started)
    answer = answer_json(outcome)
    found = [(c.doc, c.ranks) for c in outcome.results]
    after = time.perf_counter()

    async def attributed() -> list[dict[str, Any]]:
        async with reading(ctx.pool) as conn:
            return await attribute(
                conn, principal, answer["results"], user_id=body.user_id, limit=body.limit
            )

    # two reads of the same results, on two connections at once
    notes, answer["results"] = await asyncio.gather(
        retention_notes(ctx.pool, principal.tenant, found), attributed()
    )
    if notes:
        answer["explain"]["retention"] = notes
    # where a search's time goes besides the brainstem: the caller's scope before it, who
    # may see each result and the retention notes after it (answering: the whole route)
    answer["explain"]["timings_ms"]["attribute"] = _ms(after)
    return answer


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
