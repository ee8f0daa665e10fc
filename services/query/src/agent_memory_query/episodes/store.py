"""Episodes and the playbook in Postgres (migration 0006). SQL in ``sql/episodes.sql``.

Every write is idempotent on an id the client chose (episode id, action id, submission id), so
a client that retries after a timeout changes nothing the second time. The playbook curator runs
under a per-project advisory lock: two agents finishing at once must not both add the same
lesson as two entries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from agent_memory_common.contracts.ulid import new_ulid
from agent_memory_common.db.postgres import load_queries
from agent_memory_common.web.http import ApiError
from agent_memory_query.episodes.playbook import (
    EmbedderChoice,
    EntryVector,
    HashingEmbedder,
    nearest,
    relevance,
)

Q = load_queries(__package__ or "", "sql/episodes.sql")
OUTCOMES = ("success", "failure", "partial")
MAX_PLAYBOOK_ENTRIES = 5000
_MARK_COLUMN = {"+": "helpful", "-": "harmful", "o": "neutral"}


def default_value(outcome: str, lessons: Sequence[str]) -> float:
    """What an episode is worth recalling, when the client does not say: a success most, a
    partial less, a failure that taught something more than one that taught nothing."""
    if outcome == "success":
        return 1.0
    if outcome == "partial":
        return 0.6
    return 0.5 if lessons else 0.2


def episode_json(
    row: dict[str, Any], actions: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    out = {
        "episode_id": row["episode_id"],
        "memory_kind": "episode",
        "project_id": row["project_id"],
        "agent_id": row["agent_id"],
        "session_id": row["session_id"],
        "task": row["task"],
        "status": row["status"],
        "outcome": None if row["status"] == "running" else row["status"],
        "lessons": list(row["lessons"]),
        "summary": row["summary"],
        "value": row["value"],
        "metadata": row["metadata"],
        "actions_count": row["actions_count"],
        "started_at": row["started_at"],
        "completed_at": row["completed_at"],
    }
    if "score" in row:
        out["score"] = round(float(row["score"]), 6)
    if actions is not None:
        out["actions"] = actions
    return out


async def _fetch(conn: AsyncConnection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(sql, params)
        return await cur.fetchall()


async def get_episode(conn: AsyncConnection, tenant: str, episode_id: str) -> dict[str, Any] | None:
    rows = await _fetch(conn, Q["episode_by_id"], {"tenant": tenant, "episode_id": episode_id})
    return rows[0] if rows else None


async def require_episode(conn: AsyncConnection, tenant: str, episode_id: str) -> dict[str, Any]:
    row = await get_episode(conn, tenant, episode_id)
    if row is None:
        raise ApiError(404, "not_found", f"no episode {episode_id!r}", field="episode_id")
    return row


async def start_episode(
    conn: AsyncConnection, tenant: str, body: dict[str, Any]
) -> tuple[dict[str, Any], bool]:
    """(episode, created); a repeated start with the same id and task returns the first one."""
    params = {**body, "tenant": tenant, "metadata": Jsonb(body.get("metadata") or {})}
    created = bool(await _fetch(conn, Q["insert_episode"], params))
    row = await require_episode(conn, tenant, body["episode_id"])
    if not created and (row["task"], row["project_id"]) != (body["task"], body["project_id"]):
        raise ApiError(
            409,
            "conflict",
            f"episode {body['episode_id']!r} exists with another task or project",
            field="episode_id",
        )
    return row, created


async def add_actions(
    conn: AsyncConnection, tenant: str, episode_id: str, actions: Sequence[dict[str, Any]]
) -> int:
    """Record actions in order; ids already recorded are skipped. Returns the new total."""
    locked = await _fetch(conn, Q["lock_episode"], {"tenant": tenant, "episode_id": episode_id})
    if not locked:
        raise ApiError(404, "not_found", f"no episode {episode_id!r}", field="episode_id")
    added = 0
    for action in actions:
        params = {
            "tenant": tenant,
            "episode_id": episode_id,
            "action_id": action["action_id"],
            "ts": action.get("ts"),
            "action": action["action"],
            "result": action.get("result"),
            "ok": action.get("ok"),
            "metadata": Jsonb(action.get("metadata") or {}),
        }
        added += len(await _fetch(conn, Q["insert_action"], params))
    if added and locked[0]["status"] != "running":
        raise ApiError(
            409,
            "conflict",
            f"episode {episode_id!r} is complete ({locked[0]['status']}); no new actions",
            field="episode_id",
        )
    rows = await _fetch(
        conn, Q["count_actions"], {"tenant": tenant, "episode_id": episode_id, "added": added}
    )
    return int(rows[0]["actions_count"])


async def list_actions(
    conn: AsyncConnection, tenant: str, episode_id: str, limit: int = 500
) -> list[dict[str, Any]]:
    return await _fetch(
        conn, Q["actions_of"], {"tenant": tenant, "episode_id": episode_id, "limit": limit}
    )


async def complete_episode(
    conn: AsyncConnection,
    tenant: str,
    episode_id: str,
    *,
    outcome: str,
    lessons: list[str],
    summary: str | None,
    value: float | None,
) -> dict[str, Any]:
    """Complete once; the same completion again is answered as before, another one is a 409."""
    params = {
        "tenant": tenant,
        "episode_id": episode_id,
        "outcome": outcome,
        "lessons": lessons,
        "summary": summary,
        "value": default_value(outcome, lessons) if value is None else value,
    }
    done = await _fetch(conn, Q["complete_episode"], params)
    row = await require_episode(conn, tenant, episode_id)
    if not done and (row["status"], list(row["lessons"])) != (outcome, lessons):
        raise ApiError(
            409,
            "conflict",
            f"episode {episode_id!r} was already completed as {row['status']}",
            field="outcome",
        )
    return row


async def similar_episodes(
    conn: AsyncConnection,
    tenant: str,
    q: str,
    *,
    project_id: str | None,
    outcome: str | None,
    limit: int,
) -> list[dict[str, Any]]:
    params = {
        "tenant": tenant,
        "q": q,
        "project_id": project_id,
        "outcome": outcome,
        "limit": limit,
    }
    return await _fetch(conn, Q["similar_episodes"], params)


# -- playbook ---------------------------------------------------------------------------------


@dataclass
class Lesson:
    mark: str
    text: str | None = None
    entry_id: str | None = None
    section: str = "general"
    source: dict[str, Any] = field(default_factory=dict)


def entry_json(row: dict[str, Any], score: float | None = None) -> dict[str, Any]:
    out = {
        "id": row["entry_id"],
        "section": row["section"],
        "text": row["text"],
        "helpful": row["helpful"],
        "harmful": row["harmful"],
        "neutral": row["neutral"],
        "uses": row["helpful"] + row["harmful"] + row["neutral"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }
    if score is not None:
        out["score"] = round(score, 6)
    return out


async def _embed(choice: EmbedderChoice, texts: list[str]) -> list[list[float]]:
    """A sentence model is CPU-bound for milliseconds to seconds: off the event loop (as the
    Embedder port asks); the hashing embedder is cheap enough to run inline."""
    if not texts:
        return []
    if isinstance(choice.embedder, HashingEmbedder):
        return choice.embedder.embed(texts)
    return await asyncio.to_thread(choice.embedder.embed, texts)


async def _vectors(
    conn: AsyncConnection,
    rows: list[dict[str, Any]],
    choice: EmbedderChoice,
    *,
    tenant: str,
    project_id: str,
    persist: bool,
) -> list[EntryVector]:
    """Entry vectors by the current embedder; stale ones are re-embedded (and saved if asked)."""
    stale = [r for r in rows if r["embedder"] != choice.name]
    if stale:
        fresh = await _embed(choice, [r["text"] for r in stale])
        for row, vec in zip(stale, fresh, strict=True):
            row["embedding"], row["embedder"] = vec, choice.name
            if persist:
                await conn.execute(
                    Q["playbook_reembed"],
                    {
                        "tenant": tenant,
                        "project_id": project_id,
                        "entry_id": row["entry_id"],
                        "embedder": choice.name,
                        "embedding": vec,
                    },
                )
    return [EntryVector(r["entry_id"], r["section"], list(r["embedding"])) for r in rows]


async def read_playbook(
    conn: AsyncConnection,
    tenant: str,
    project_id: str,
    choice: EmbedderChoice,
    *,
    q: str | None,
    section: str | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Without ``q``: the most recently reinforced entries. With ``q``: the generator's choice,
    the entries most relevant to it (tempered by their helpful/harmful record) first."""
    rows = await _fetch(
        conn,
        Q["playbook_rows"],
        {
            "tenant": tenant,
            "project_id": project_id,
            "section": section,
            "limit": limit if q is None else MAX_PLAYBOOK_ENTRIES,
        },
    )
    if q is None:
        return [entry_json(r) for r in rows]
    vectors = await _vectors(
        conn, rows, choice, tenant=tenant, project_id=project_id, persist=False
    )
    query = (await _embed(choice, [q]))[0]
    scored = []
    for row, vec in zip(rows, vectors, strict=True):
        sim = sum(a * b for a, b in zip(query, vec.vector, strict=False))
        scored.append((relevance(sim, row["helpful"], row["harmful"], row["neutral"]), row))
    scored.sort(key=lambda pair: (-pair[0], pair[1]["entry_id"]))
    return [entry_json(row, score) for score, row in scored[:limit]]


async def curate(
    conn: AsyncConnection,
    tenant: str,
    project_id: str,
    lessons: Sequence[Lesson],
    choice: EmbedderChoice,
    *,
    submission_id: str | None,
) -> list[dict[str, Any]]:
    """The ACE curator: each lesson either marks an entry (by id), merges into the nearest entry
    of its section (similarity >= the embedder's threshold) or becomes a new entry."""
    key = {"tenant": tenant, "project_id": project_id}
    await conn.execute(Q["playbook_lock"], key)
    if submission_id is not None:
        seen = await _fetch(conn, Q["submission_get"], {**key, "submission_id": submission_id})
        if seen:
            results: list[dict[str, Any]] = seen[0]["results"]
            return results
    rows = await _fetch(
        conn, Q["playbook_rows"], {**key, "section": None, "limit": MAX_PLAYBOOK_ENTRIES}
    )
    known = {r["entry_id"] for r in rows}
    vectors = await _vectors(conn, rows, choice, tenant=tenant, project_id=project_id, persist=True)
    texts = [lesson.text for lesson in lessons if lesson.entry_id is None and lesson.text]
    embedded = iter(await _embed(choice, texts))
    now_ms = int(datetime.now().timestamp() * 1000)
    results = []
    for i, lesson in enumerate(lessons):
        counts = {"helpful": 0, "harmful": 0, "neutral": 0}
        counts[_MARK_COLUMN[lesson.mark]] = 1
        sources = Jsonb([lesson.source] if lesson.source else [])
        if lesson.entry_id is not None:
            if lesson.entry_id not in known:
                raise ApiError(
                    404,
                    "not_found",
                    f"no playbook entry {lesson.entry_id!r} in project {project_id!r}",
                    field=f"entries[{i}].id",
                )
            await conn.execute(
                Q["playbook_mark"],
                {**key, **counts, "entry_id": lesson.entry_id, "sources": sources},
            )
            results.append({"id": lesson.entry_id, "action": "marked", "similarity": None})
            continue
        vector = next(embedded)
        best, sim = nearest(vector, vectors, lesson.section)
        if best is not None and sim >= choice.merge_threshold:
            await conn.execute(
                Q["playbook_mark"], {**key, **counts, "entry_id": best.entry_id, "sources": sources}
            )
            results.append({"id": best.entry_id, "action": "merged", "similarity": round(sim, 4)})
            continue
        entry_id = new_ulid(now_ms)
        await conn.execute(
            Q["playbook_insert"],
            {
                **key,
                **counts,
                "entry_id": entry_id,
                "section": lesson.section,
                "text": lesson.text,
                "embedder": choice.name,
                "embedding": vector,
                "sources": sources,
            },
        )
        vectors.append(EntryVector(entry_id, lesson.section, vector))
        known.add(entry_id)
        results.append({"id": entry_id, "action": "added", "similarity": None})
    if submission_id is not None:
        await conn.execute(
            Q["submission_put"], {**key, "submission_id": submission_id, "results": Jsonb(results)}
        )
    return results
