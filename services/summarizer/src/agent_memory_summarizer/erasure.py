"""The summarizer's part of an erasure: the TOC versions and grips made from erased events.

The segmenter answers an erasure with new segment versions (without the erased events, or
retractions); this service summarizes them as usual, which writes new versions of the segment
nodes and of every ancestor. What remains is the history: every segment node version that
summarized an erased event, every rollup version made from such a version (recursively up to
the year), and the grips citing an erased event. Those are deleted, not kept as history.

It waits (``TransientError``, so the request is retried later) while the latest version of any
of those nodes is still one to delete, i.e. until the new versions have been made; deleting
the current version would leave a node without content to read.
"""

from __future__ import annotations

from psycopg import AsyncConnection

from agent_memory_common.bus.erasure import ErasureResult
from agent_memory_common.contracts.messages import ErasureRequest
from agent_memory_common.core.errors import TransientError
from agent_memory_summarizer.store import QUERIES, lock_project

MAX_LEVELS = 6  # segment -> day -> week -> month -> year, with room to spare

Versions = set[tuple[str, int]]


async def erase(conn: AsyncConnection, request: ErasureRequest) -> ErasureResult:
    params = {
        "tenant": request.tenant,
        "project_id": request.project_id,
        "erasure_id": request.erasure_id,
    }
    await lock_project(conn, request.tenant, request.project_id)
    cur = await conn.execute(QUERIES["erased_segment_versions"], params)
    doomed: Versions = {(r[0], int(r[1])) for r in await cur.fetchall()}
    frontier = set(doomed)
    for _ in range(MAX_LEVELS):
        if not frontier:
            break
        node_ids, versions = _arrays(frontier)
        cur = await conn.execute(
            QUERIES["rollups_of_versions"], {**params, "node_ids": node_ids, "versions": versions}
        )
        frontier = {(r[0], int(r[1])) for r in await cur.fetchall()} - doomed
        doomed |= frontier
    cur = await conn.execute(QUERIES["project_latest"], params)
    current = [(r[0], int(r[1])) for r in await cur.fetchall()]
    waiting = [node for node in current if node in doomed]
    if waiting:
        raise TransientError(
            f"erasure {request.erasure_id}: {len(waiting)} TOC nodes still read as a version "
            f"made from erased events (first: {waiting[0][0]} v{waiting[0][1]}); waiting for "
            "their new versions"
        )
    node_ids, versions = _arrays(doomed)
    cur = await conn.execute(
        QUERIES["delete_versions"], {**params, "node_ids": node_ids, "versions": versions}
    )
    removed = cur.rowcount
    cur = await conn.execute(QUERIES["delete_erased_grips"], params)
    grips = cur.rowcount
    # supersession (issue 13): the statements and links that came from erased events
    cur = await conn.execute(QUERIES["delete_erased_statements"], params)
    statements = cur.rowcount
    cur = await conn.execute(QUERIES["delete_erased_supersessions"], params)
    return ErasureResult(
        {
            "toc_versions_removed": removed,
            "grips": grips,
            "supersession_statements": statements,
            "supersession_links": cur.rowcount,
        }
    )


def _arrays(versions: Versions) -> tuple[list[str], list[int]]:
    ordered = sorted(versions)
    return [n for n, _ in ordered], [v for _, v in ordered]
