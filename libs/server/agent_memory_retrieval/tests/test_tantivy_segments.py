"""Tantivy's segment folder: every segment node, and nothing else, searched for segments alone;
filled from the main folder on a store written before it existed."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from agent_memory_retrieval.adapters.tantivy_index import READY_MARK, TantivyIndex, segments_only
from agent_memory_retrieval.docs import IndexDoc, SearchFilter, node_doc_id
from tests.helpers import tantivy_folder_ids

SEGMENTS = SearchFilter("acme", types=("toc_node",), levels=("segment",))


def folder_ids(path: Path) -> set[str]:
    return set(tantivy_folder_ids(path))


def segment(make_doc: Callable[..., IndexDoc], n: int, text: str, **over: object) -> IndexDoc:
    fields: dict[str, object] = {
        "id": node_doc_id("acme", f"seg-{n}"),
        "type": "toc_node",
        "level": "segment",
        "title": f"segment {n}",
        "event_ids": (),
    }
    fields.update(over)
    return make_doc(n, text, **fields)


async def test_segments_alone_are_searched_in_their_own_folder(
    tmp_path: Path, make_doc: Callable[..., IndexDoc]
) -> None:
    index = TantivyIndex(tmp_path, writer=True)
    day = make_doc(
        50, "schema migration day", id=node_doc_id("acme", "day-1"), type="toc_node", level="day"
    )
    await index.upsert(
        [
            make_doc(1, "the schema migration failed on the users table"),
            make_doc(2, "lunch"),
            segment(make_doc, 3, "we fixed the schema migration"),
            segment(make_doc, 4, "release notes for the dashboard"),
            day,
        ]
    )
    assert index.segments_filled()
    assert folder_ids(index.segments_path) == {
        node_doc_id("acme", "seg-3"),
        node_doc_id("acme", "seg-4"),
    }
    hits = await index.search("schema migration", SEGMENTS, 10)
    assert [h.id for h in hits] == [node_doc_id("acme", "seg-3")]
    assert hits[0].doc.text == "we fixed the schema migration"
    # read from the segment folder indeed: a segment only it holds is found
    only_there = segment(make_doc, 5, "schema migration notes only here")
    index._commit(index._segments, lambda w: index._apply(w, [only_there], (), False))
    assert only_there.id in {h.id for h in await index.search("schema", SEGMENTS, 10)}
    assert only_there.id not in {
        h.id for h in await index.search("schema", SearchFilter("acme"), 10)
    }
    # every other filter still applies there
    elsewhere = SearchFilter("acme", project_id="other", levels=("segment",))
    assert await index.search("schema migration", elsewhere, 10) == []
    assert await index.search("schema", SearchFilter("other", levels=("segment",)), 10) == []
    no_nodes = SearchFilter("acme", types=("event",), levels=("segment",))
    assert await index.search("schema migration", no_nodes, 10) == []
    # another tenant's segment, better matched, never crowds this tenant's out (wide search)
    theirs = segment(
        make_doc,
        6,
        "schema migration schema migration",
        tenant="globex",
        id=node_doc_id("globex", "seg-6"),
    )
    await index.upsert([theirs])
    assert [h.id for h in await index.search("schema migration", SEGMENTS, 1)] == [
        node_doc_id("acme", "seg-3")
    ]
    # and a search of more than segments reads the main folder, where everything is
    everything = await index.search("schema migration", SearchFilter("acme"), 10)
    assert {h.id for h in everything} == {
        make_doc(1).id,
        node_doc_id("acme", "seg-3"),
        node_doc_id("acme", "day-1"),
    }


async def test_deletes_and_clear_reach_the_segment_folder(
    tmp_path: Path, make_doc: Callable[..., IndexDoc]
) -> None:
    """An erased or pruned segment must not come back through the segment folder."""
    index = TantivyIndex(tmp_path, writer=True)
    await index.upsert([segment(make_doc, i, f"deploy step {i}") for i in range(3)])
    await index.delete([node_doc_id("acme", "seg-1"), make_doc(9).id])
    assert folder_ids(index.segments_path) == {
        node_doc_id("acme", "seg-0"),
        node_doc_id("acme", "seg-2"),
    }
    assert {h.id for h in await index.search("deploy", SEGMENTS, 10)} == {
        node_doc_id("acme", "seg-0"),
        node_doc_id("acme", "seg-2"),
    }
    # a new version of a segment replaces the old one in both folders
    await index.upsert([segment(make_doc, 0, "rollback step")])
    assert [h.doc.text for h in await index.search("rollback", SEGMENTS, 10)] == ["rollback step"]
    assert [h.id for h in await index.search("deploy", SEGMENTS, 10)] == [
        node_doc_id("acme", "seg-2")
    ]
    await index.clear()
    assert folder_ids(index.segments_path) == set()
    assert await index.search("rollback", SEGMENTS, 10) == []
    assert index.segments_filled()


async def test_a_store_from_before_the_segment_folder_is_filled_by_its_first_write(
    tmp_path: Path, make_doc: Callable[..., IndexDoc]
) -> None:
    old = TantivyIndex(tmp_path, writer=True)
    await old.upsert(
        [segment(make_doc, i, f"segment about caching {i}") for i in range(5)]
        + [make_doc(10, "an event about caching")]
    )
    await old.delete([node_doc_id("acme", "seg-4")])
    await old.close()
    shutil.rmtree(old.segments_path)  # the layout before this folder existed

    reader = TantivyIndex(tmp_path, writer=False)
    assert not reader.segments_filled()
    before = await reader.search("caching", SEGMENTS, 10)  # from the main folder meanwhile
    assert len(before) == 4

    writer = TantivyIndex(tmp_path, writer=True)
    await writer.upsert([make_doc(11, "unrelated event")])  # any write fills it first
    assert (writer.segments_path / READY_MARK).is_file()
    assert folder_ids(writer.segments_path) == {node_doc_id("acme", f"seg-{i}") for i in range(4)}
    assert reader.segments_filled()
    after = await reader.search("caching", SEGMENTS, 10)
    assert {h.id for h in after} == {h.id for h in before}
    assert {h.doc.text for h in after} == {h.doc.text for h in before}


async def test_an_unmarked_folder_is_filled_again_not_trusted(
    tmp_path: Path, make_doc: Callable[..., IndexDoc]
) -> None:
    """A writer killed while filling leaves no mark: the next one fills it again, whole."""
    index = TantivyIndex(tmp_path, writer=True)
    await index.upsert([segment(make_doc, i, f"queue worker {i}") for i in range(3)])
    await index.close()
    (index.segments_path / READY_MARK).unlink()
    stale = TantivyIndex(tmp_path / "elsewhere", writer=True)  # a half-filled folder's content
    await stale.upsert([segment(make_doc, 7, "never in the main folder")])
    shutil.rmtree(index.segments_path)
    shutil.copytree(stale.segments_path, index.segments_path)
    (index.segments_path / READY_MARK).unlink()

    again = TantivyIndex(tmp_path, writer=True)
    await again.delete([node_doc_id("acme", "seg-2")])
    assert folder_ids(again.segments_path) == {
        node_doc_id("acme", "seg-0"),
        node_doc_id("acme", "seg-1"),
    }


def test_which_filters_are_segments_alone() -> None:
    assert segments_only(SEGMENTS)
    assert segments_only(SearchFilter("acme", levels=("segment",), project_id="p"))
    assert not segments_only(SearchFilter("acme"))
    assert not segments_only(SearchFilter("acme", types=("toc_node",)))
    assert not segments_only(SearchFilter("acme", levels=("segment", "day")))
    assert not segments_only(SearchFilter("acme", levels=()))


async def test_upgrade_fills_the_folder_without_a_write(
    tmp_path: Path, make_doc: Callable[..., IndexDoc]
) -> None:
    """The bm25-indexer upgrades at start: an idle store is upgraded too."""
    old = TantivyIndex(tmp_path, writer=True)
    await old.upsert([segment(make_doc, i, f"cache warmup {i}") for i in range(3)])
    await old.close()
    shutil.rmtree(old.segments_path)
    reader = TantivyIndex(tmp_path, writer=False)
    await reader.upgrade()  # a reader never writes
    assert not reader.segments_path.exists()
    writer = TantivyIndex(tmp_path, writer=True)
    await writer.upgrade()
    assert folder_ids(writer.segments_path) == {node_doc_id("acme", f"seg-{i}") for i in range(3)}
    assert reader.segments_filled()
    await writer.upgrade()  # once is enough
    fresh = TantivyIndex(tmp_path / "fresh", writer=True)
    await fresh.upgrade()  # a new store: an empty folder, marked
    assert fresh.segments_filled()
    assert await fresh.search("cache", SEGMENTS, 5) == []
