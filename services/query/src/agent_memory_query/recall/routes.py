"""``POST /v1/recall``: the search engine's answer to a prompt, cut to what an agent should be
given unasked (``logic.pack`` says what is left out and why). One implementation behind every
runtime's hook, the MCP server and the LangChain middleware: they differ only in where the
text goes.

A project that turned injection off (``PUT /v1/projects/{id}/recall``, ``agent-memory recall
off``) gets ``silence: "off"`` and an empty brief, before anything is searched or read; every
other answer's tokens are counted per project, session and day (``agent_memory_query.injection``),
off the answer's path."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from agent_memory_common.auth.access import READ
from agent_memory_common.core.metrics import RECALL_ANSWERS, RECALL_TOKENS
from agent_memory_common.db.postgres import reading
from agent_memory_common.web.http import error_responses
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.inputs import ID_PATTERN
from agent_memory_query.recall.brief import compose, read_brief
from agent_memory_query.recall.logic import by_period, estimate_tokens, pack, word_count
from agent_memory_query.recall.schemas import BriefResponse, RecallRequest, RecallResponse
from agent_memory_query.search.routes import run_search
from agent_memory_query.search.schemas import SearchRequest
from agent_memory_query.sharing.policy import read_bounds

router = APIRouter(tags=["recall"])


@router.post(
    "/v1/recall",
    dependencies=[READ],
    response_model=RecallResponse,
    summary="The few memories a prompt needs, within a token budget; nothing when unsure",
    responses=error_responses(401, 403, 422, 503),
)
async def post_recall(ctx: Ctx, caller: Caller, body: RecallRequest) -> dict[str, Any]:
    caller.require_project(body.project_id)  # before the switch: a 403, as the search's
    off = await ctx.injection.is_off_in(ctx.pool, caller.tenant, body.project_id)
    answer = await _recall(ctx, caller, body, off)
    RECALL_ANSWERS.labels("recall", answer["silence"] or "given").inc()
    RECALL_TOKENS.labels("recall").inc(answer["tokens"])
    if not off:
        ctx.usage.record(
            caller.tenant,
            body.project_id,
            body.session_id,
            "recall",
            answer["tokens"],
            given=bool(answer["context"]),
        )
    return answer


async def _recall(ctx: Ctx, caller: Caller, body: RecallRequest, off: bool) -> dict[str, Any]:
    options = ctx.settings.query.recall
    threshold = options.min_match if body.min_match is None else body.min_match
    answer: dict[str, Any] = {
        "context": "",
        "tokens": 0,
        "budget_tokens": body.budget_tokens,
        "memories": [],
        "match_score": None,
        "threshold": threshold,
        "silence": None,
    }
    if off:
        answer["silence"] = "off"
        return answer
    if word_count(body.prompt) < options.min_words:
        answer["silence"] = "too_short"
        return answer
    search = SearchRequest(query=body.prompt, project_id=body.project_id, limit=options.candidates)
    found = await run_search(ctx, caller, search)
    score = found.get("match_score")
    answer["match_score"] = score
    if found.get("no_match"):
        answer["silence"] = "no_match"
        return answer
    if not (by_period(found) or (score is not None and score >= threshold)):
        answer["silence"] = "below_threshold"
        return answer
    packed = pack(
        found["results"],
        budget_tokens=body.budget_tokens,
        session_id=body.session_id,
        exclude_ids=body.exclude_ids,
        max_items=options.max_items,
    )
    if not packed.lines:
        answer["silence"] = "nothing_new"
        return answer
    answer["context"] = packed.context
    answer["tokens"] = estimate_tokens(packed.context)
    answer["memories"] = [
        {
            "id": str(result["id"]),
            "type": str(result["type"]),
            "event_ids": [str(e) for e in result.get("event_ids") or []],
            "score": float(result["score"]),
            "tokens": estimate_tokens(line),
            "line": line,
        }
        for result, line in packed.chosen
    ]
    return answer


@router.get(
    "/v1/projects/{project_id}/brief",
    dependencies=[READ],
    response_model=BriefResponse,
    summary="What an agent starting on the project should know: rules in force, last session",
    responses=error_responses(401, 403, 422),
)
async def get_brief(
    ctx: Ctx,
    caller: Caller,
    project_id: Annotated[str, Path(min_length=1, max_length=200, pattern=ID_PATTERN)],
    budget_tokens: Annotated[
        int, Query(ge=100, le=8000, description="Most tokens (4 characters each)")
    ] = 1500,
    session_id: Annotated[
        str | None,
        Query(min_length=1, max_length=200, description="The starting session: not its own last"),
    ] = None,
) -> dict[str, Any]:
    if caller.projects is not None:
        caller.require_project(project_id)
    answer: dict[str, Any] = {
        "project_id": project_id,
        "context": "",
        "tokens": 0,
        "budget_tokens": budget_tokens,
        "ids": [],
        "injection": "on",
    }
    async with reading(ctx.pool) as conn:
        if await ctx.injection.is_off(conn, caller.tenant, project_id):
            RECALL_ANSWERS.labels("brief", "off").inc()
            return {**answer, "injection": "off"}
        bounds = await read_bounds(conn, caller)
        rules, ends = await read_brief(conn, caller.tenant, project_id, session_id, bounds)
    context, ids = compose(project_id, rules, ends, budget_tokens)
    tokens = estimate_tokens(context)
    RECALL_ANSWERS.labels("brief", "given" if context else "empty").inc()
    RECALL_TOKENS.labels("brief").inc(tokens)
    ctx.usage.record(caller.tenant, project_id, session_id, "brief", tokens, given=bool(context))
    return {**answer, "context": context, "tokens": tokens, "ids": ids}
