"""The topic tier of ``/v1/search``: explore questions answered with themes first.

"What themes have we been working on this month?", "what is related to the billing work?":
for an ``explore`` intent, the topic graph (written by the topics service) answers with
``type: "topic"`` results ahead of the brainstem's moments. With no subject left once the
question words are gone, the top topics of the period by importance; otherwise topics by
meaning. Each result's ``event_ids`` are its members' provenance. The tier is an accelerator
like the others: when it is away (``failures.SURVIVABLE``) or the project has no topics yet, the
answer is the brainstem's alone and ``explain`` says why (``explain.tiers.topic``,
``fallbacks``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row

from agent_memory_common.contracts.event import parse_ts
from agent_memory_common.core.logs import get_logger
from agent_memory_common.db.postgres import reading
from agent_memory_query.context import QueryContext
from agent_memory_query.search.schemas import SearchRequest
from agent_memory_query.topics import store as topic_store
from agent_memory_search.brainstem.failures import SURVIVABLE
from agent_memory_search.brainstem.intent import GENERIC_WORDS, content_words

log = get_logger(__name__)

_CUES = """theme themes topic topics related relate relates relating similar area areas subject
    subjects explore overview month year week today yesterday this last past"""
CUE_WORDS = GENERIC_WORDS | frozenset(_CUES.split())
MAX_TOPICS = 3
MAX_EVENT_IDS = 200


def subject(query: str) -> str:
    """What the question is about once question and period words are gone ('' for none)."""
    return " ".join(content_words(query, CUE_WORDS))


def _ts(value: str | None) -> datetime | None:
    return parse_ts(value) if value else None


async def topic_results(
    ctx: QueryContext, tenant: str, body: SearchRequest, time_range: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """Up to three topics for an explore query, as search results."""
    limit = max(1, min(MAX_TOPICS, body.limit))
    about = subject(body.query)
    since = _ts((time_range or {}).get("since"))
    until = _ts((time_range or {}).get("until"))
    # importance as of the period's end, else the question's ``now``, else (None) the
    # project's latest activity: never the wall clock (issue 53, point 5)
    asof = until or (parse_ts(body.now) if body.now is not None else None)
    half_life = ctx.settings.topic_half_life_days
    async with reading(ctx.pool) as conn:
        if about:
            from agent_memory_query.topics.routes import embed

            vector = await embed(ctx, about)
            found = await topic_store.search(
                conn, tenant, body.project_id, about, vector, limit, half_life,
                user_id=body.user_id, asof=asof,
            )  # fmt: skip
            found = [t for t in found if t["score"] >= (0.3 if vector is not None else 0.5)]
        else:
            found = await topic_store.list_topics(
                conn,
                tenant,
                project_id=body.project_id,
                since=since,
                until=asof,
                limit=limit,
                half_life_days=half_life,
                user_id=body.user_id,
            )
        if not found:
            return []
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                """SELECT m.topic_id, array_agg(e ORDER BY e) AS event_ids
                   FROM topic_members m
                   JOIN topic_segments s ON s.tenant = m.tenant AND s.node_id = m.node_id,
                        unnest(s.event_ids) AS e
                   WHERE m.tenant = %(tenant)s AND m.topic_id = ANY(%(ids)s)
                   GROUP BY m.topic_id""",
                {"tenant": tenant, "ids": [t["topic_id"] for t in found]},
            )
            events = {r["topic_id"]: r["event_ids"] for r in await cur.fetchall()}
    return [
        {
            "id": t["topic_id"],
            "type": "topic",
            "level": "topic",
            "title": t["label"],
            "text": f"{t['label']} ({', '.join(t['keywords'])}): {t['size']} segments in "
            f"{len(t['session_ids'])} sessions",
            "ts": t["last_ts"],
            "project_id": t["project_id"],
            "agent_id": "",
            "user_id": None,  # a theme spans people: attribution is on its members
            "session_id": None,
            "score": round(float(t.get("score", t["importance"])), 6),
            "salience": round(float(t["importance"]), 4),
            "memory_kind": "episode",
            "event_ids": list(events.get(t["topic_id"], []))[:MAX_EVENT_IDS],
        }
        for t in found
    ]


@dataclass
class EarlyTopics:
    """The topic tier of an explore question, started beside the search (``start_topics``):
    its embedding and queries then overlap the search's instead of following it. It was
    asked with the period the question names; should the search drop that period (it held
    nothing), the tier is asked again with the answer's."""

    task: asyncio.Task[tuple[list[dict[str, Any]], float]]
    time_range: dict[str, Any] | None

    async def cancel(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task


async def _timed(
    ctx: QueryContext, tenant: str, body: SearchRequest, time_range: dict[str, Any] | None
) -> tuple[list[dict[str, Any]], float]:
    start = time.perf_counter()
    topics = await topic_results(ctx, tenant, body, time_range)
    return topics, round((time.perf_counter() - start) * 1000, 2)


def start_topics(
    ctx: QueryContext,
    tenant: str,
    body: SearchRequest,
    intent: str,
    time_range: dict[str, Any] | None,
) -> EarlyTopics | None:
    """The topic tier started now, when the question is one it answers (explore, no tiers
    named); None otherwise."""
    if intent != "explore" or body.tiers is not None:
        return None
    task = asyncio.create_task(_timed(ctx, tenant, body, time_range), name="topic-tier")
    return EarlyTopics(task, time_range)


def _period(time_range: dict[str, Any] | None) -> tuple[Any, Any]:
    return (time_range or {}).get("since"), (time_range or {}).get("until")


async def add_topic_tier(
    ctx: QueryContext,
    tenant: str,
    body: SearchRequest,
    answer: dict[str, Any],
    early: EarlyTopics | None = None,
) -> dict[str, Any]:
    """Put the topic tier's results ahead of an explore answer; explain what it did.
    ``early``: the tier already started beside the search (``start_topics`` asks the same
    question of the same intent), used when it asked with the answer's period."""
    if answer["intent"] != "explore" or body.tiers is not None:
        return answer
    explain = answer["explain"]
    try:
        if early is not None and _period(early.time_range) == _period(answer.get("time_range")):
            topics, ms = await early.task
        else:
            if early is not None:
                await early.cancel()
            topics, ms = await _timed(ctx, tenant, body, answer.get("time_range"))
    except SURVIVABLE as exc:  # the tier is an accelerator: the brainstem's answer stands
        reason = f"{type(exc).__name__}: {exc}"
        log.warning("search.topic_tier_failed", error=reason)
        explain["tiers"]["topic"] = {"status": "failed", "reason": reason}
        explain["fallbacks"].append("topic tier failed -> answered from the other tiers")
        return answer
    explain["timings_ms"]["topic"] = ms
    if not topics:
        explain["tiers"]["topic"] = {"status": "skipped", "reason": "no matching topic"}
        explain["fallbacks"].append("no topics for this question -> answered from the other tiers")
        return answer
    explain["tiers"]["topic"] = {"status": "used", "hits": len(topics), "ms": ms}
    rest = answer["results"][: max(body.limit - len(topics), 0)]
    answer["results"] = topics + rest
    kept = {r["id"] for r in rest}
    explain["ranking"] = [
        {"id": t["id"], "fused": t["score"], "ranks": {"topic": i + 1}, "factors": {}}
        for i, t in enumerate(topics)
    ] + [r for r in explain["ranking"] if r["id"] in kept]
    return answer
