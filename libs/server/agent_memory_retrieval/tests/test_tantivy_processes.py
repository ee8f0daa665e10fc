"""Tantivy across processes: one writer at a time, readers anywhere see its commits."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory_retrieval.adapters.tantivy_index import TantivyIndex, wide
from agent_memory_retrieval.docs import IndexDoc, SearchFilter
from agent_memory_retrieval.ports import IndexUnavailableError


async def test_reader_waits_for_the_writer_then_sees_its_commits(
    tmp_path: Path, make_doc: Callable[..., IndexDoc]
) -> None:
    reader = TantivyIndex(tmp_path, writer=False)
    assert not await reader.healthy()
    with pytest.raises(IndexUnavailableError):
        await reader.search("anything", SearchFilter("acme"), 5)
    with pytest.raises(PermissionError):
        await reader.upsert([make_doc(1)])

    writer = TantivyIndex(tmp_path, writer=True)
    await writer.upsert([make_doc(1, "alpha release")])
    assert await reader.healthy()
    assert len(await reader.search("alpha", SearchFilter("acme"), 5)) == 1

    await writer.upsert([make_doc(2, "alpha hotfix")])  # the open reader reloads on search
    assert len(await reader.search("alpha", SearchFilter("acme"), 5)) == 2


WRITER_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from datetime import UTC, datetime
    from agent_memory_retrieval.docs import IndexDoc
    from agent_memory_retrieval.adapters.tantivy_index import TantivyIndex

    async def main() -> None:
        index = TantivyIndex(__import__("pathlib").Path(sys.argv[1]), writer=True)
        for batch in range(10):
            docs = [
                IndexDoc(id=f"event:acme:sub-{batch}-{i}", type="event", tenant="acme",
                         project_id="p", agent_id="a", session_id="s",
                         ts=datetime(2026, 1, 1, tzinfo=UTC), level="event",
                         text="subprocess wrote this")
                for i in range(5)
            ]
            await index.upsert(docs)

    asyncio.run(main())
    """
)


async def test_two_writer_processes_take_turns(
    tmp_path: Path, make_doc: Callable[..., IndexDoc]
) -> None:
    """The indexer service and ``rebuild-index`` may write at once; neither is locked out."""
    here = TantivyIndex(tmp_path, writer=True)
    await here.upsert([make_doc(0, "bootstrap")])
    other = await asyncio.create_subprocess_exec(sys.executable, "-c", WRITER_SCRIPT, str(tmp_path))
    for batch in range(10):
        await here.upsert([make_doc(100 + batch * 5 + i, "parent wrote this") for i in range(5)])
    code = await asyncio.wait_for(other.wait(), 60)
    assert code == 0
    assert await here.count("acme") == 1 + 50 + 50


def test_which_filters_are_wide() -> None:
    assert wide(SearchFilter("acme"))
    assert wide(SearchFilter("acme", types=("event", "grip"), levels=("event", "grip")))
    assert not wide(SearchFilter("acme", project_id="p"))
    assert not wide(SearchFilter("acme", session_id="s"))
    assert not wide(SearchFilter("acme", since=datetime(2026, 1, 1, tzinfo=UTC)))
    assert not wide(SearchFilter("acme", kinds=("decision",)))
    assert not wide(SearchFilter("acme", types=("toc_node",), levels=("segment",)))


async def test_a_document_of_an_unknown_type_or_level_is_refused(
    tmp_path: Path, make_doc: Callable[..., IndexDoc]
) -> None:
    """A filter on type or level excludes the values it does not want, which holds only while
    every document holds a known one."""
    index = TantivyIndex(tmp_path, writer=True)
    with pytest.raises(ValueError, match="type 'note'"):
        await index.upsert([make_doc(0, "a note", type="note")])
    with pytest.raises(ValueError, match="level 'session'"):
        await index.upsert([make_doc(1, "a session", level="session")])
    await index.upsert([make_doc(2, "an event")])
    assert await index.count("acme") == 1
