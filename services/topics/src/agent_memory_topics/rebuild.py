"""``python -m agent_memory_topics rebuild``: the topic graph again from the table of contents.

Run by ``agent-memory admin rebuild-topics`` (the operator's command starts it as a process:
nothing imports a service). Reads every segment as the TOC has it now, embeds those whose
stored vector is missing or older, removes material whose segment is gone, then re-clusters
every project with the existing topics as the lineage, so ids survive a rebuild. Safe beside a
running topics service: each write is idempotent and re-clusters take the project's lock.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import psycopg
from psycopg.rows import dict_row

from agent_memory_common.contracts.memory import pinned_salience
from agent_memory_common.db.postgres import prepare_database
from agent_memory_retrieval.adapters.factory import load_embedder
from agent_memory_topics import store
from agent_memory_topics.handler import segment_text
from agent_memory_topics.settings import Settings

CHUNK = 256


class Progress:
    """A one-line progress bar on stderr (plain lines when it is not a terminal)."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, max(total, 0), 0
        self.tty = sys.stderr.isatty()
        self.started = time.perf_counter()

    def advance(self, n: int = 1) -> None:
        self.done += n
        share = self.done / self.total if self.total else 1.0
        bar = "#" * int(share * 30)
        line = f"{self.label:<12} [{bar:<30}] {self.done}/{self.total}"
        if self.tty:
            sys.stderr.write("\r" + line)
        elif self.done == self.total or self.done % (CHUNK * 8) == 0:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.tty:
            sys.stderr.write(f"  {time.perf_counter() - self.started:.1f}s\n")


def _material(row: dict[str, Any], vector: list[float]) -> dict[str, Any]:
    return {
        "tenant": row["tenant"],
        "node_id": row["node_id"],
        "project_id": row["project_id"],
        "node_version": row["version"],
        "session_id": row["session_id"] or "",
        "title": row["title"],
        "text": segment_text(row["title"], row["bullets"] or []),
        "event_ids": list(row["event_ids"] or ()),
        "salience": pinned_salience(row["base_salience"], row["pinned"]),
        "start_ts": row["start_ts"],
        "end_ts": row["end_ts"],
        "embedding": vector,
    }


async def rebuild(settings: Settings, tenant: str | None, project_id: str | None) -> list[Any]:
    from agent_memory_topics.recluster import recluster

    prepare_database(settings.pg_dsn)
    embedder = load_embedder(settings)
    scope = {"tenant": tenant, "project_id": project_id}
    async with await psycopg.AsyncConnection.connect(settings.pg_dsn) as conn:
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(store.Q["latest_segments"], scope)
            segments = await cur.fetchall()
        for orphan in await store.rows(conn, "orphans", **scope):
            await store.run(conn, "delete_segment", **orphan)
        bar = Progress("segments", len(segments))
        for start in range(0, len(segments), CHUNK):
            chunk = segments[start : start + CHUNK]
            stale = []
            for r in chunk:
                seen = await store.one(
                    conn, "segment_version", tenant=r["tenant"], node_id=r["node_id"]
                )
                if seen is None or seen["node_version"] != r["version"]:
                    stale.append(r)
            vectors = embedder.embed([segment_text(r["title"], r["bullets"] or []) for r in stale])
            for r, v in zip(stale, vectors, strict=True):
                await store.run(
                    conn, "touch_project", tenant=r["tenant"], project_id=r["project_id"]
                )
                await store.run(conn, "upsert_segment", **_material(r, v))
            await conn.commit()
            bar.advance(len(chunk))
        bar.close()
        projects = await store.rows(conn, "all_projects", **scope)
        bar = Progress("projects", len(projects))
        done = []
        for p in projects:
            done.append(await recluster(conn, p["tenant"], p["project_id"], settings.topics))
            await conn.commit()
            bar.advance()
        bar.close()
    return done
