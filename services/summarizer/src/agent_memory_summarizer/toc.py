"""Putting a summarized segment into the tree: its node, then every ancestor, bottom-up.

Runs under the project's advisory lock, inside the runner's transaction. Rules:

- The segment node gets version v for segment version v, only if v is above the version it
  last summarized; otherwise the message is a redelivery (or stale), nothing is written and
  the versions that message caused are published again (JetStream drops the repeat by id).
- Each calendar ancestor is recomputed from the latest versions of its non-empty children and
  gets a new version only when that (child, version) list changed, so every changed child
  makes exactly one new version of each ancestor, old versions stay, and the pointer moves.
- A segment whose new version starts on another day moves: both the old and the new chain
  are recomputed. A retracted segment (empty event list) gets an empty version and drops out
  of its ancestors.

Every version made while handling one message carries that message as its ``cause``; the
database refuses a second version of a node for the same cause.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from agent_memory_common.bus.consumer import Publication
from agent_memory_common.contracts.memory import salience
from agent_memory_common.contracts.messages import SegmentMessage, toc_node_message
from agent_memory_common.contracts.subjects import toc_subject
from agent_memory_summarizer import store
from agent_memory_summarizer.calendar import (
    CALENDAR_LEVELS,
    Bucket,
    chain,
    segment_node_id,
    title_prefix,
)
from agent_memory_summarizer.extractive import summarize_rollup
from agent_memory_summarizer.model import Bullet, ChildDigest, Summary
from agent_memory_summarizer.salience import strongest


def grip_id(node_id: str, event_ids: tuple[str, ...], excerpt: str) -> str:
    material = "\x1f".join((node_id, *event_ids, excerpt)).encode()
    return "grip:" + hashlib.blake2b(material, digest_size=10).hexdigest()


def search_text(title: str, bullets: list[dict[str, Any]], keywords: list[str]) -> str:
    parts = [title, *(b["text"] for b in bullets), *keywords]
    return "\n".join(parts).lower()


def node_kind_and_salience(bullets: list[dict[str, Any]]) -> tuple[str, float]:
    if not bullets:
        return "observation", 0.0
    kind = strongest([b["kind"] for b in bullets])
    return kind, salience(sum(len(b["text"]) for b in bullets), kind)


async def apply_segment(
    conn: AsyncConnection,
    seg: SegmentMessage,
    summary: Summary | None,
    first_ts: datetime | None,
) -> list[Publication]:
    tenant = seg.tenant
    node_id = segment_node_id(seg.segment_id)
    ptr = await store.pointer(conn, tenant, node_id)
    if ptr is not None and (ptr["source_version"] or 0) >= seg.version:
        return await publications_for_cause(conn, tenant, seg.cause)
    created = await _apply(conn, seg, summary, first_ts, ptr)
    return await publications(conn, tenant, created)


async def _apply(
    conn: AsyncConnection,
    seg: SegmentMessage,
    summary: Summary | None,
    first_ts: datetime | None,
    ptr: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    """Write the segment node's new version and its ancestors'; return the version rows."""
    tenant = seg.tenant
    node_id = segment_node_id(seg.segment_id)

    retracted = not seg.event_ids
    if not retracted and summary is None:
        raise AssertionError("a segment with events reached the tree without a summary")
    # a segment node's version is the segment's: "segment:x v3" summarizes segment x v3, even
    # when a redelivery made an earlier version arrive late (and be skipped as stale)
    version = seg.version
    old_parent = ptr["parent_id"] if ptr else None
    if retracted:
        # keep its place (or take the place its times give it) so that the old chain updates
        parent_id = old_parent or chain(seg.start_ts)[0].node_id(seg.project_id)
        new_chain: list[Bucket] = []
        start = ptr["start_ts"] if ptr else seg.start_ts
    else:
        start = first_ts or seg.start_ts
        new_chain = chain(start)
        parent_id = new_chain[0].node_id(seg.project_id)

    bullets: list[dict[str, Any]] = []
    grips: list[dict[str, Any]] = []
    if summary is not None and not retracted:
        for index, bullet in enumerate(summary.bullets):
            ids = []
            for grip in bullet.grips:
                gid = grip_id(node_id, grip.event_ids, grip.excerpt)
                ids.append(gid)
                grips.append(
                    {
                        "tenant": tenant,
                        "grip_id": gid,
                        "project_id": seg.project_id,
                        "node_id": node_id,
                        "node_version": version,
                        "bullet_index": index,
                        "event_ids": list(grip.event_ids),
                        "excerpt": grip.excerpt,
                        "memory_kind": grip.kind,
                        "base_salience": grip.salience,
                    }
                )
            bullets.append(_bullet_json(bullet, ids))
    title = summary.title if summary is not None and not retracted else "(retracted)"
    keywords = list(summary.keywords) if summary is not None and not retracted else []
    kind, base = node_kind_and_salience(bullets)
    row = {
        "tenant": tenant,
        "node_id": node_id,
        "version": version,
        "project_id": seg.project_id,
        "level": "segment",
        "bucket": seg.segment_id,
        "parent_id": parent_id,
        "title": title,
        "bullets": bullets,
        "keywords": keywords,
        "memory_kind": kind,
        "base_salience": base,
        "child_ids": [],
        "child_versions": [],
        "start_ts": start,
        "end_ts": max(seg.end_ts, start),
        "session_id": seg.session_id,
        "agent_id": seg.agent_id,
        "event_ids": list(seg.event_ids),
        "overlap_count": seg.overlap_count,
        "source_version": seg.version,
        "cause": seg.cause,
        "summarizer": summary.method if summary is not None else "none",
        "search_text": search_text(title, bullets, keywords),
    }
    if ptr is None:
        await store.insert_pointers(conn, [row])
    await store.insert_version(conn, row)
    await store.insert_grips(conn, grips)
    await store.update_pointer(conn, {**row, "is_empty": retracted})
    created = [row]

    await store.insert_pointers(
        conn,
        [
            {
                "tenant": tenant,
                "node_id": bucket.node_id(seg.project_id),
                "project_id": seg.project_id,
                "level": bucket.level,
                "bucket": bucket.bucket,
                "parent_id": new_chain[i + 1].node_id(seg.project_id)
                if i + 1 < len(new_chain)
                else None,
                "start_ts": bucket.start,
                "end_ts": bucket.end,
            }
            for i, bucket in enumerate(new_chain)
        ],
    )
    affected = [b.node_id(seg.project_id) for b in new_chain]
    if old_parent is not None and (retracted or old_parent != parent_id):
        affected.extend(await _ancestors(conn, tenant, old_parent))
    for level in CALENDAR_LEVELS:
        for ancestor in sorted({a for a in affected if a.startswith(level + ":")}):
            made = await _recompute(conn, tenant, ancestor, seg.cause)
            if made is not None:
                created.append(made)
    return created


def _bullet_json(bullet: Bullet, grip_ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "text": bullet.text,
        "kind": bullet.kind,
        "salience": bullet.salience,
        "grip_ids": grip_ids,
        "source_node_id": bullet.source_node_id,
    }
    if bullet.work:  # read back by the rollup above (stored only; not on the wire)
        out["work"] = True
    return out


async def _ancestors(conn: AsyncConnection, tenant: str, node_id: str | None) -> list[str]:
    out: list[str] = []
    while node_id is not None and len(out) < 8:
        out.append(node_id)
        ptr = await store.pointer(conn, tenant, node_id)
        node_id = ptr["parent_id"] if ptr else None
    return out


async def _recompute(
    conn: AsyncConnection, tenant: str, node_id: str, cause: str
) -> dict[str, Any] | None:
    """A new version of a calendar node if its children changed; else None."""
    ptr = await store.pointer(conn, tenant, node_id)
    assert ptr is not None, f"calendar node {node_id} has no pointer"
    children = await store.children_latest(conn, tenant, node_id)
    child_ids = [c["node_id"] for c in children]
    child_versions = [int(c["version"]) for c in children]
    if ptr["latest_version"] > 0:
        if (list(ptr["child_ids"]), list(ptr["child_versions"])) == (child_ids, child_versions):
            return None
    elif not children:
        return None
    bucket = Bucket(ptr["level"], ptr["bucket"], ptr["start_ts"], ptr["end_ts"])
    digests = [
        ChildDigest(
            node_id=c["node_id"],
            version=int(c["version"]),
            title=c["title"],
            keywords=list(c["keywords"]),
            bullets=[
                Bullet(
                    text=b["text"],
                    kind=b["kind"],
                    salience=float(b["salience"]),
                    grip_ids=tuple(b["grip_ids"]),
                    source_node_id=b.get("source_node_id"),
                    work=bool(b.get("work", False)),
                )
                for b in c["bullets"]
            ],
        )
        for c in children
    ]
    summary = summarize_rollup(title_prefix(bucket), digests)
    bullets = [_bullet_json(b, list(b.grip_ids)) for b in summary.bullets]
    kind, base = node_kind_and_salience(bullets)
    row = {
        "tenant": tenant,
        "node_id": node_id,
        "version": ptr["latest_version"] + 1,
        "project_id": ptr["project_id"],
        "level": ptr["level"],
        "bucket": ptr["bucket"],
        "parent_id": ptr["parent_id"],
        "title": summary.title,
        "bullets": bullets,
        "keywords": summary.keywords,
        "memory_kind": kind,
        "base_salience": base,
        "child_ids": child_ids,
        "child_versions": child_versions,
        "start_ts": ptr["start_ts"],
        "end_ts": ptr["end_ts"],
        "session_id": None,
        "agent_id": None,
        "event_ids": None,
        "overlap_count": None,
        "source_version": None,
        "cause": cause,
        "summarizer": summary.method,
        "search_text": search_text(summary.title, bullets, summary.keywords),
    }
    await store.insert_version(conn, row)
    await store.update_pointer(conn, {**row, "is_empty": not children})
    return row


async def publications_for_cause(
    conn: AsyncConnection, tenant: str, cause: str
) -> list[Publication]:
    return await publications(conn, tenant, await store.versions_by_cause(conn, tenant, cause))


async def publications(
    conn: AsyncConnection, tenant: str, rows: list[dict[str, Any]]
) -> list[Publication]:
    """The messages announcing node versions on ``mem.toc.<tenant>.<project>``: each node
    with every grip its bullets cite, so that indexers need nothing else."""
    if not rows:
        return []
    cited = list(dict.fromkeys(g for r in rows for b in r["bullets"] for g in b["grip_ids"]))
    grips = await store.grips_by_id(conn, tenant, cited)
    pinned = await store.pinned_nodes(conn, tenant, [r["node_id"] for r in rows])
    return [_publication(r, grips, r["node_id"] in pinned) for r in rows]


def _publication(
    row: dict[str, Any], grips: dict[str, dict[str, Any]], pinned: bool
) -> Publication:
    message = toc_node_message(row, grips, pinned)
    return Publication(
        subject=toc_subject(message.tenant, message.project_id),
        payload=message.to_wire(),
        msg_id=message.msg_id,
    )
