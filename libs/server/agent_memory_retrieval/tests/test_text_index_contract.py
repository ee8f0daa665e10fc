"""The ``TextIndex`` contract, run on every selected adapter (see conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_memory_retrieval.adapters.opensearch_index import OpenSearchIndex, search_body
from agent_memory_retrieval.docs import IndexDoc, SearchFilter, grip_doc_id, node_doc_id
from agent_memory_retrieval.ports import TextIndex

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)  # make_doc(n) is at T0 + n minutes


def ids(hits: list[Any]) -> list[str]:
    return [h.id for h in hits]


async def test_upsert_then_search_returns_the_whole_document(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    index = text_index
    doc = make_doc(
        1,
        "we chose postgres for the event log",
        title="storage decision",
        kind="constraint",
        salience=0.9,
        event_ids=("e-1", "e-2"),
    )
    await index.upsert([doc, make_doc(2, "lunch was pasta")])

    hits = await index.search("postgres", SearchFilter("acme"), 10)

    assert ids(hits) == [doc.id]
    assert hits[0].doc == doc
    assert hits[0].score > 0


async def test_redelivery_overwrites_instead_of_duplicating(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    index = text_index
    await index.upsert([make_doc(1, "first wording about kafka")])
    await index.upsert([make_doc(1, "first wording about kafka")])
    await index.upsert([make_doc(1, "second wording about kafka"), make_doc(2, "other kafka")])

    assert await index.count("acme") == 2
    hits = await index.search("kafka wording", SearchFilter("acme"), 10)
    assert sorted(ids(hits)) == sorted({h.id for h in hits})  # no id twice
    by_id = {h.id: h.doc for h in hits}
    assert by_id[make_doc(1).id].text == "second wording about kafka"


async def test_tenant_filter_never_leaks(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    index = text_index
    await index.upsert(
        [
            make_doc(1, "secret roadmap for launch", tenant="acme"),
            make_doc(1, "secret roadmap for launch", tenant="globex"),
            make_doc(2, "secret roadmap again", tenant="globex"),
        ]
    )

    acme = await index.search("secret roadmap", SearchFilter("acme"), 10)
    globex = await index.search("secret roadmap", SearchFilter("globex"), 10)

    assert {h.doc.tenant for h in acme} == {"acme"} and len(acme) == 1
    assert {h.doc.tenant for h in globex} == {"globex"} and len(globex) == 2
    assert await index.count("acme") == 1
    assert await index.count("globex") == 2
    assert await index.count("initech") == 0
    assert await index.search("secret", SearchFilter("initech"), 10) == []


async def test_every_filter_is_applied_in_the_engine(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    index = text_index
    docs = [
        make_doc(0, "deploy notes"),
        make_doc(1, "deploy notes", project_id="other"),
        make_doc(2, "deploy notes", agent_id="codex"),
        make_doc(3, "deploy notes", session_id="s2"),
        make_doc(4, "deploy notes", kind="procedure"),
        make_doc(
            5, "deploy notes", id=grip_doc_id("acme", "g1"), type="grip", level="grip", kind="grip"
        ),
        make_doc(6, "deploy notes", id=node_doc_id("acme", "n1"), type="toc_node", level="day"),
        make_doc(7, "deploy notes", session_id=""),
    ]
    await index.upsert(docs)
    all_ids = {d.id for d in docs}

    async def found(**flt: Any) -> set[str]:
        return set(ids(await index.search("deploy", SearchFilter("acme", **flt), 50)))

    assert await found() == all_ids
    assert await found(project_id="other") == {docs[1].id}
    assert await found(agent_id="codex") == {docs[2].id}
    assert await found(session_id="s2") == {docs[3].id}
    assert await found(kinds=("procedure",)) == {docs[4].id}
    assert await found(types=("grip", "toc_node")) == {docs[5].id, docs[6].id}
    assert await found(levels=("day",)) == {docs[6].id}
    assert await found(types=()) == set()
    # several values of one field, each other way a filter can ask for them
    in_proj = {d.id for d in docs if d.project_id == "proj"}
    assert await found(project_id="proj", types=("event", "grip")) == in_proj - {docs[6].id}
    assert await found(project_id="proj", types=("toc_node", "grip", "event")) == in_proj
    assert await found(project_id="proj", levels=("grip", "day")) == {docs[5].id, docs[6].id}
    assert await found(project_id="proj", types=("note",)) == set()
    assert await found(kinds=("procedure", "grip")) == {docs[4].id, docs[5].id}
    # since is inclusive, until exclusive
    since, until = T0 + timedelta(minutes=2), T0 + timedelta(minutes=4)
    assert await found(since=since, until=until) == {docs[2].id, docs[3].id}
    assert await found(since=T0 + timedelta(minutes=6)) == {docs[6].id, docs[7].id}
    assert await found(until=T0 + timedelta(minutes=1)) == {docs[0].id}
    assert await found(
        project_id="proj", agent_id="claude-code", session_id="s1", kinds=("observation",)
    ) == {docs[0].id, docs[6].id}


async def test_limit_and_empty_query(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    index = text_index
    await index.upsert([make_doc(i, f"migration step {i}") for i in range(6)])

    assert len(await index.search("migration", SearchFilter("acme"), 3)) == 3
    assert await index.search("", SearchFilter("acme"), 10) == []
    assert await index.search("migration", SearchFilter("acme"), 0) == []


async def test_delete_and_clear(text_index: TextIndex, make_doc: Callable[..., IndexDoc]) -> None:
    index = text_index
    await index.upsert([make_doc(i, f"cache warmup {i}") for i in range(3)])
    await index.upsert([make_doc(9, "cache warmup", tenant="globex")])

    await index.delete([make_doc(0).id, "event:acme:never-indexed"])
    assert await index.count("acme") == 2
    assert make_doc(0).id not in ids(await index.search("cache", SearchFilter("acme"), 10))

    await index.clear()
    assert await index.count("acme") == 0
    assert await index.count("globex") == 0
    assert await index.healthy()


async def test_upgrade_keeps_every_document_and_every_answer(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    """The bm25-indexer upgrades the store at start: nothing is lost, twice changes nothing."""
    index = text_index
    seg = make_doc(5, "the deploy segment", id="node:acme:seg-5", type="toc_node", level="segment")
    await index.upsert([make_doc(i, f"deploy step {i}") for i in range(3)] + [seg])
    segments = SearchFilter("acme", types=("toc_node",), levels=("segment",))
    before = ids(await index.search("deploy", segments, 10))
    await index.upgrade()
    await index.upgrade()
    assert await index.count("acme") == 4
    assert ids(await index.search("deploy", segments, 10)) == before == [seg.id]
    assert len(await index.search("deploy", SearchFilter("acme"), 10)) == 4


async def test_bm25_ranks_by_term_statistics_and_stems(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc], analyses_text: bool
) -> None:
    """For engines that analyse text; the in-memory stand-in neither stems nor scores, and its
    requests are covered by the other tests, so here it must be the stand-in to pass."""
    index = text_index
    if not analyses_text:
        assert isinstance(index, OpenSearchIndex)
        return
    await index.upsert(
        [
            make_doc(1, "the retry policy of the recorder"),
            make_doc(2, "the recorder retries with backoff, a retry policy with jitter"),
            make_doc(3, "the gateway accepts events"),
            make_doc(4, "she was running the benchmarks", title="benchmarks"),
        ]
    )

    hits = await index.search("recorder retry policy", SearchFilter("acme"), 10)
    assert set(ids(hits)) == {make_doc(1).id, make_doc(2).id}
    assert hits[0].score >= hits[1].score

    # stemming: "runs" finds "running"; stop words are not indexed, so they match nothing
    assert ids(await index.search("runs", SearchFilter("acme"), 10)) == [make_doc(4).id]
    assert await index.search("the", SearchFilter("acme"), 10) == []
    # query syntax is not interpreted: quotes, colons and dashes are just text
    assert make_doc(1).id in ids(
        await index.search('tenant:globex "retry" -policy (', SearchFilter("acme"), 10)
    )


async def test_context_is_matched_and_kept_apart_from_the_text(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc], analyses_text: bool
) -> None:
    """An answer is found by the words of the question before it (its context)."""
    index = text_index
    answer = replace(
        make_doc(1, "adoption agencies, mostly"),
        title="Caroline",
        context="Melanie: what are you researching these days?",
    )
    await index.upsert([answer, make_doc(2, "lunch was pasta")])

    by_text = await index.search("adoption", SearchFilter("acme"), 10)
    assert ids(by_text) == [answer.id]
    assert by_text[0].doc == answer  # text, title and context come back as they went in
    if analyses_text:  # the stand-in does not analyse text; its request shape is the same
        by_context = await index.search("researching", SearchFilter("acme"), 10)
        assert ids(by_context) == [answer.id]
        assert ids(await index.search("caroline", SearchFilter("acme"), 10)) == [answer.id]


async def test_a_wide_filter_ranks_exactly_as_a_narrow_one_passing_the_same_documents(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    """Tantivy answers a filter most documents pass from the best matches of the words alone
    (``tantivy_index.wide``). Whatever the path, the tenant-wide answer must be the one a
    project filter passing the same documents gives: same ids, order and scores; also when
    another tenant's documents crowd the best matches, so that too few of them pass."""
    index = text_index
    crowd = [
        make_doc(i, "invoice retry invoice retry invoice retry", tenant="globex") for i in range(60)
    ]
    ours = [make_doc(100 + i, f"invoice retry note {i} " + "filler " * i) for i in range(30)]
    await index.upsert(crowd + ours + [make_doc(200, "unrelated lunch")])

    for limit in (3, 10, 25, 40):
        tenant_wide = await index.search("invoice retry", SearchFilter("acme"), limit)
        narrow = await index.search("invoice retry", SearchFilter("acme", project_id="proj"), limit)
        assert [(h.id, h.score) for h in tenant_wide] == [(h.id, h.score) for h in narrow]
        assert len(tenant_wide) == min(limit, 30)
        assert {h.doc.tenant for h in tenant_wide} == {"acme"}
    # grips and events are wide too; TOC nodes alone are not (a few of the index)
    both = SearchFilter("acme", types=("event", "grip"))
    assert ids(await index.search("invoice", both, 5)) == ids(
        await index.search("invoice", SearchFilter("acme", project_id="proj"), 5)
    )


async def test_a_projects_answer_is_the_tenants_without_the_other_projects(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc]
) -> None:
    """A project's search (Tantivy matches each word within the project first) ranks and
    scores its documents exactly as the tenant's search does: the same hits in the same order
    with the same scores, the other projects' left out; also with more filters on top."""
    words = ["deploy", "rollback", "schema", "migration", "cache", "timeout"]
    docs = [
        make_doc(
            i,
            " ".join(words[(i * k) % len(words)] for k in range(1, 2 + i % 5)) + f" note {i}",
            project_id=("alpha", "beta", "gamma")[i % 3],
            type="grip" if i % 7 == 0 else "event",
        )
        for i in range(90)
    ]
    await text_index.upsert(docs)
    question = "schema migration rollback timeout"
    everything = await text_index.search(question, SearchFilter("acme"), 90)
    assert {h.doc.project_id for h in everything} == {"alpha", "beta", "gamma"}
    for project in ("alpha", "beta"):
        for types in (None, ("event",)):
            scoped = await text_index.search(
                question, SearchFilter("acme", project_id=project, types=types), 10
            )
            expected = [
                (h.id, h.score)
                for h in everything
                if h.doc.project_id == project and (types is None or h.doc.type in types)
            ][:10]
            assert [(h.id, h.score) for h in scoped] == expected


async def test_equal_scores_come_back_in_id_order_whatever_order_they_were_indexed_in(
    text_index: TextIndex, make_doc: Callable[..., IndexDoc], analyses_text: bool
) -> None:
    """The same words at the same length tie exactly; the engine's own order of ties (where a
    document sits in its segments or shards) differs between two builds of one store."""
    if not analyses_text:  # the stand-in neither scores nor sorts: the request is checked
        body = search_body("zookeeper", SearchFilter("acme"), 10)
        assert body["sort"] == [{"_score": {"order": "desc"}}, {"id": {"order": "asc"}}]
        return
    index = text_index
    docs = [make_doc(n, "the zookeeper quorum lost a node") for n in (5, 3, 4, 1, 2)]
    for doc in docs:  # one commit each: separate segments, in an order unlike the ids'
        await index.upsert([doc])

    hits = await index.search("zookeeper quorum", SearchFilter("acme"), 10)

    assert ids(hits) == sorted(d.id for d in docs)
    assert len({h.score for h in hits}) == 1
