"""The ``VectorIndex`` contract, run on every selected adapter (see conftest.py).

Vectors here are synthetic unit vectors on the first few axes, so which document is nearest is
known exactly; the embedder has its own suite.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory_retrieval.docs import IndexDoc, SearchFilter, grip_doc_id, node_doc_id
from agent_memory_retrieval.ports import EMBEDDING_DIM, VectorIndex

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)  # make_doc(n) is at T0 + n minutes


def unit(*weights: float) -> list[float]:
    vec = [0.0] * EMBEDDING_DIM
    for i, w in enumerate(weights):
        vec[i] = w
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


async def test_nearest_first_with_cosine_scores(
    vector_index: VectorIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    docs = [make_doc(1, "x axis"), make_doc(2, "mostly x"), make_doc(3, "y axis")]
    await vector_index.upsert(docs, [unit(1), unit(1, 0.5), unit(0, 1)])

    hits = await vector_index.search(unit(1, 0.1), SearchFilter("acme"), 10)

    assert [h.id for h in hits] == [docs[0].id, docs[1].id, docs[2].id]
    assert hits[0].doc == docs[0]
    assert hits[0].score == pytest.approx(1 / math.sqrt(1.01), abs=1e-3)
    assert hits[2].score == pytest.approx(0.1 / math.sqrt(1.01), abs=1e-3)
    assert len(await vector_index.search(unit(1), SearchFilter("acme"), 2)) == 2


async def test_redelivery_overwrites_instead_of_duplicating(
    vector_index: VectorIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    doc = make_doc(1, "first")
    await vector_index.upsert([doc], [unit(1)])
    await vector_index.upsert([doc], [unit(1)])
    await vector_index.upsert([make_doc(1, "second")], [unit(0, 1)])

    assert await vector_index.count("acme") == 1
    hits = await vector_index.search(unit(0, 1), SearchFilter("acme"), 10)
    assert [h.doc.text for h in hits] == ["second"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-3)


async def test_tenant_filter_never_leaks(
    vector_index: VectorIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    await vector_index.upsert(
        [make_doc(1, tenant="acme"), make_doc(1, tenant="globex"), make_doc(2, tenant="globex")],
        [unit(1), unit(1), unit(1, 0.2)],
    )

    acme = await vector_index.search(unit(1), SearchFilter("acme"), 10)
    assert [h.doc.tenant for h in acme] == ["acme"]
    assert {
        h.doc.tenant for h in await vector_index.search(unit(1), SearchFilter("globex"), 10)
    } == {"globex"}
    assert await vector_index.count("acme") == 1
    assert await vector_index.count("globex") == 2
    assert await vector_index.search(unit(1), SearchFilter("initech"), 10) == []


async def test_every_filter_is_applied_in_the_engine(
    vector_index: VectorIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    docs = [
        make_doc(0),
        make_doc(1, project_id="other"),
        make_doc(2, agent_id="codex"),
        make_doc(3, session_id="s2"),
        make_doc(4, kind="procedure"),
        make_doc(5, id=grip_doc_id("acme", "g1"), type="grip", level="grip", kind="grip"),
        make_doc(6, id=node_doc_id("acme", "n1"), type="toc_node", level="day"),
        make_doc(7, session_id=""),
    ]
    await vector_index.upsert(docs, [unit(1, i / 10) for i in range(len(docs))])

    async def found(**flt: Any) -> set[str]:
        return {h.id for h in await vector_index.search(unit(1), SearchFilter("acme", **flt), 50)}

    assert await found() == {d.id for d in docs}
    assert await found(project_id="other") == {docs[1].id}
    assert await found(agent_id="codex") == {docs[2].id}
    assert await found(session_id="s2") == {docs[3].id}
    assert await found(session_id="") == {docs[7].id}
    assert await found(kinds=("procedure",)) == {docs[4].id}
    assert await found(types=("grip", "toc_node")) == {docs[5].id, docs[6].id}
    assert await found(levels=("day",)) == {docs[6].id}
    assert await found(kinds=()) == set()
    since, until = T0 + timedelta(minutes=2), T0 + timedelta(minutes=4)
    assert await found(since=since, until=until) == {docs[2].id, docs[3].id}
    assert await found(since=T0 + timedelta(minutes=6)) == {docs[6].id, docs[7].id}
    assert await found(until=T0 + timedelta(minutes=1)) == {docs[0].id}


async def test_delete_clear_and_bad_input(
    vector_index: VectorIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    docs = [make_doc(i) for i in range(3)]
    await vector_index.upsert(docs, [unit(1, i) for i in range(3)])
    await vector_index.upsert([make_doc(9, tenant="globex")], [unit(1)])

    await vector_index.delete([docs[0].id, "event:acme:never-indexed"])
    assert await vector_index.count("acme") == 2
    assert docs[0].id not in {
        h.id for h in await vector_index.search(unit(1), SearchFilter("acme"), 10)
    }

    with pytest.raises(ValueError):
        await vector_index.upsert([make_doc(5)], [[1.0, 0.0]])  # wrong dimension
    with pytest.raises(ValueError):
        await vector_index.upsert([make_doc(5), make_doc(6)], [unit(1)])  # one vector short

    await vector_index.clear()
    assert await vector_index.count("acme") == 0
    assert await vector_index.count("globex") == 0
    assert await vector_index.healthy()


async def test_the_stored_vectors_of_the_documents_held(
    vector_index: VectorIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    """What the retention pruner keeps of an event before deleting it (the descent's cosine)."""
    docs = [make_doc(1, "x axis"), make_doc(2, "y axis")]
    await vector_index.upsert(docs, [unit(1), unit(0.6, 0.8)])

    got = await vector_index.vectors([docs[0].id, docs[1].id, make_doc(3).id])

    assert set(got) == {docs[0].id, docs[1].id}  # the one never stored is left out
    assert got[docs[1].id][:2] == pytest.approx([0.6, 0.8], abs=1e-3)
    assert len(got[docs[0].id]) == len(unit(1))
    await vector_index.delete([docs[0].id])
    assert set(await vector_index.vectors([docs[0].id])) == set()
    assert await vector_index.vectors([]) == {}
