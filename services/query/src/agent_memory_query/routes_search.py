"""``/v1/search``: plain words in, the right moments out, with provenance and an explanation.

POST takes a JSON body; GET takes the same fields as query parameters (``q`` for the query,
comma-separated lists) so that a search is one curl away.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import orjson
import pydantic
from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agent_memory_common.event import parse_ts
from agent_memory_common.http import ApiError, error_responses, validation_details
from agent_memory_query.brainstem.engine import SearchOutcome, SearchQuery
from agent_memory_query.brainstem.fusion import Candidate
from agent_memory_query.context import Ctx, Tenant

router = APIRouter(tags=["search"])

MemoryKind = Literal[
    "decision", "constraint", "definition", "procedure", "preference", "observation", "episode"
]
IntentName = Literal["auto", "explore", "answer", "locate", "time-boxed"]
TierName = Literal["vector", "bm25", "toc", "scan"]
_ID = r"^[^\x00-\x1f\x7f]+$"


class SearchRequest(BaseModel):
    """The body of ``POST /v1/search``; unknown fields are refused (a typo is an error)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=4000, description="Plain words.")
    limit: int = Field(default=10, ge=1, le=100)
    project_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=_ID)
    agent_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=_ID)
    session_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=_ID)
    since: str | int | None = Field(default=None, description="RFC 3339 or epoch ms, inclusive")
    until: str | int | None = Field(default=None, description="RFC 3339 or epoch ms, exclusive")
    kinds: list[MemoryKind] | None = Field(default=None, min_length=1)
    intent: IntentName = "auto"
    now: str | int | None = Field(
        default=None, description="Reference time for relative dates; default: current time"
    )
    tiers: list[TierName] | None = Field(
        default=None, min_length=1, description="Restrict to these tiers (ablations)"
    )

    @field_validator("query")
    @classmethod
    def _has_words(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must contain some words")
        return value

    @field_validator("since", "until", "now", mode="before")
    @classmethod
    def _valid_ts(cls, value: object) -> object:
        if value is not None:
            parse_ts(value)
        return value

    @model_validator(mode="after")
    def _ordered(self) -> SearchRequest:
        both = self.since is not None and self.until is not None
        if both and parse_ts(self.since) >= parse_ts(self.until):
            raise ApiError(422, "validation_error", "until: must be after since", field="until")
        return self

    def to_query(self, tenant: str) -> SearchQuery:
        def ts(value: str | int | None) -> datetime | None:
            return parse_ts(value) if value is not None else None

        return SearchQuery(
            query=self.query,
            tenant=tenant,
            limit=self.limit,
            project_id=self.project_id,
            agent_id=self.agent_id,
            session_id=self.session_id,
            since=ts(self.since),
            until=ts(self.until),
            kinds=tuple(self.kinds) if self.kinds else None,
            intent=None if self.intent == "auto" else self.intent,
            now=ts(self.now),
            tiers=tuple(dict.fromkeys(self.tiers)) if self.tiers else None,
        )


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
        "explain": explain,
    }


async def run_search(ctx: Ctx, tenant: str, body: SearchRequest) -> dict[str, Any]:
    if ctx.search is None:
        raise ApiError(503, "unavailable", "search is not ready", headers={"Retry-After": "2"})
    outcome = await ctx.search.brainstem.search(body.to_query(tenant))
    return answer_json(outcome)


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
    summary="Search memory in plain words; falls back across tiers, explains what it did",
    responses=error_responses(401, 422, 503),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": SearchRequest.model_json_schema()}},
        }
    },
)
async def post_search(ctx: Ctx, tenant: Tenant, request: Request) -> dict[str, Any]:
    try:
        raw = orjson.loads(await request.body())
    except orjson.JSONDecodeError as exc:
        raise ApiError(422, "validation_error", f"body: not JSON ({exc})", field="body") from None
    return await run_search(ctx, tenant, parse_request(raw))


def _split(values: list[str] | None) -> list[str] | None:
    """``kinds=a,b`` and ``kinds=a&kinds=b`` both work."""
    if not values:
        return None
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


@router.get(
    "/v1/search",
    summary="The same search for curl: ?q=...&project_id=...&kinds=a,b&tiers=bm25",
    responses=error_responses(401, 422, 503),
)
async def get_search(
    ctx: Ctx,
    tenant: Tenant,
    q: Annotated[str, Query(description="Plain words")],
    limit: int = 10,
    project_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
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
        "since": int(since) if since and since.isdigit() else since,
        "until": int(until) if until and until.isdigit() else until,
        "kinds": _split(kinds),
        "intent": intent,
        "now": int(now) if now and now.isdigit() else now,
        "tiers": _split(tiers),
    }
    body = parse_request(raw, {"query": "q"})
    return await run_search(ctx, tenant, body)
