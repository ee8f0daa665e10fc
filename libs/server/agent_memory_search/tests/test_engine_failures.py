"""Which failures a search outlives: a tier or a lookup that is away becomes a note in explain,
and the answer stands; a bug (a ``TypeError``) fails the search instead of hiding in a note."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from agent_memory_retrieval.docs import Hit, IndexDoc, SearchFilter
from agent_memory_retrieval.ports import IndexUnavailableError
from agent_memory_search.brainstem.engine import Brainstem
from agent_memory_search.brainstem.query import SearchQuery

NOW = datetime(2026, 3, 18, 15, 30, tzinfo=UTC)
QUERY = SearchQuery(query="the gateway timeout", tenant="t", now=NOW)


def _hit(i: str, text: str) -> Hit:
    doc = IndexDoc(
        id=i,
        type="event",
        tenant="t",
        project_id="p",
        agent_id="a",
        session_id="s",
        ts=NOW - timedelta(hours=1),
        level="event",
        kind="observation",
        salience=0.5,
        text=text,
        event_ids=(i,),
    )
    return Hit(id=i, score=1.0, doc=doc)


async def _scan(query: str, flt: SearchFilter, limit: int) -> list[Hit]:
    return [_hit("e1", "we set the gateway timeout to 30 s")]


async def _toc_down(query: str, flt: SearchFilter, limit: int) -> list[Hit]:
    raise psycopg.OperationalError("the connection is lost")


def _brainstem(**lookups: object) -> Brainstem:
    return Brainstem(
        text_index=None,
        vector_index=None,
        embedder=None,
        toc_search=_toc_down,
        scan_search=_scan,
        **lookups,  # type: ignore[arg-type]
    )


async def test_a_tier_that_is_away_is_a_fallback_note() -> None:
    outcome = await _brainstem().search(QUERY)
    assert [c.id for c in outcome.results] == ["e1"]
    toc = outcome.explain["tiers"]["toc"]
    assert toc["status"] == "failed"
    assert toc["reason"].startswith("OperationalError: the connection is lost")
    assert any(n.startswith("toc failed") for n in outcome.explain["fallbacks"])


async def test_a_lookup_that_is_away_is_a_note_and_the_answer_stands() -> None:
    async def counts(tenant: str, ids: Sequence[str]) -> dict[str, int]:
        raise IndexUnavailableError("usage history away")

    outcome = await _brainstem(access_lookup=counts).search(QUERY)
    assert [c.id for c in outcome.results] == ["e1"]
    note = "access counts unavailable (IndexUnavailableError): no usage factor"
    assert note in outcome.explain["fallbacks"]


async def test_a_bug_in_a_lookup_fails_the_search() -> None:
    async def counts(tenant: str, ids: Sequence[str]) -> dict[str, int]:
        raise TypeError("a bug, not an outage")

    with pytest.raises(TypeError, match="a bug"):
        await _brainstem(access_lookup=counts).search(QUERY)


async def test_a_bug_in_a_tier_fails_the_search() -> None:
    async def scan(query: str, flt: SearchFilter, limit: int) -> list[Hit]:
        raise KeyError("rank")

    brainstem = _brainstem()
    brainstem.scan_search = scan
    with pytest.raises(KeyError):
        await brainstem.search(QUERY)
