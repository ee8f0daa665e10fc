"""The TOC tier of search: the table of contents' index-free term search (this service's TOC
store, ``toc.store.search``), as hits for the brainstem. It stays beside the store it reads;
``runtime`` gives it to the brainstem as its ``toc_search``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from psycopg import AsyncConnection

from agent_memory_query.toc import store as toc_store
from agent_memory_retrieval.docs import Hit, IndexDoc, SearchFilter, grip_doc_id, node_doc_id
from agent_memory_search.brainstem.intent import STOPWORDS


def _matched(terms: Sequence[str], text: str) -> int:
    """How many query terms start a word of ``text`` (the TOC search's own matching rule)."""
    words = re.findall(r"[a-z0-9][a-z0-9_\-]*", text.lower())
    return sum(1 for t in terms if any(w.startswith(t) for w in words))


async def toc_hits(
    conn: AsyncConnection, query: str, flt: SearchFilter, limit: int, newest: int | None = None
) -> list[Hit]:
    """The table of contents' index-free term search, as hits of the types ``flt`` wants.
    ``newest``: only among the tenant's last ``newest`` nodes written (as ``scan_events``).

    A matching node is a ``toc_node`` hit (its matched bullets as text, the events of their
    grips as provenance), best node first. The grips under matched bullets are ``grip`` hits,
    the exact words a question wants: the bullet matching the most terms first, then the
    better node. When both are wanted (an overview question), nodes come first.
    """
    every = toc_store.search_terms(query)
    # "the" or "after" would match every bullet: content words only, unless there are none
    terms = [t for t in every if t not in STOPWORDS] or every
    if not terms:
        return []
    nodes = await toc_store.search(
        conn,
        flt.tenant,
        terms,
        project_id=flt.project_id,
        root=None,
        since=flt.since,
        until=flt.until,
        levels=None,
        limit=limit,
        newest=newest,
    )
    grip_ids = [g for n in nodes for b in n["bullets"] for g in b["grip_ids"]]
    grips = await toc_store.grips_by_id(conn, flt.tenant, list(dict.fromkeys(grip_ids)))
    want = set(flt.types) if flt.types is not None else {"toc_node", "grip"}
    node_hits: list[Hit] = []
    grip_hits: list[tuple[tuple[int, int, int], Hit]] = []
    for rank, node in enumerate(nodes):
        node_grips = [grips[g] for b in node["bullets"] for g in b["grip_ids"] if g in grips]
        if "toc_node" in want:
            event_ids = [e for g in node_grips for e in g["event_ids"]]
            doc = IndexDoc(
                id=node_doc_id(flt.tenant, node["node_id"]),
                type="toc_node",
                tenant=flt.tenant,
                project_id=node["project_id"],
                agent_id="",
                session_id="",
                ts=node["start_ts"],
                level=node["level"],
                kind=node["memory_kind"],
                salience=float(node["salience"]),
                title=node["title"],
                text="\n".join(b["text"] for b in node["bullets"]),
                event_ids=tuple(dict.fromkeys(event_ids)),
            )
            node_hits.append(Hit(id=doc.id, score=float(node["score"]), doc=doc))
        if "grip" not in want:
            continue
        for bullet in node["bullets"]:
            matched = _matched(terms, bullet["text"])
            for gid in bullet["grip_ids"]:
                g = grips.get(gid)
                if g is None:
                    continue
                doc = IndexDoc(
                    id=grip_doc_id(flt.tenant, g["grip_id"]),
                    type="grip",
                    tenant=flt.tenant,
                    project_id=g["project_id"],
                    agent_id="",
                    session_id="",
                    ts=node["start_ts"],
                    level="grip",
                    kind=g["memory_kind"],
                    salience=float(g["salience"]),
                    text=g["excerpt"],
                    event_ids=tuple(g["event_ids"]),
                )
                key = (-matched, rank, bullet["index"])
                grip_hits.append((key, Hit(id=doc.id, score=float(matched), doc=doc)))
    grip_hits.sort(key=lambda kh: kh[0])
    hits: list[Hit] = []
    seen: set[str] = set()
    for hit in [*node_hits, *(h for _, h in grip_hits)]:
        if hit.id in seen or (flt.kinds is not None and hit.doc.kind not in flt.kinds):
            continue
        seen.add(hit.id)
        hits.append(hit)
    return hits[:limit]
