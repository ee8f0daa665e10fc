"""The descent (issue 53, point 1): when the indexes only hold summaries of a period, the exact
events under them are read (a lookup), scored without an index and joined to the answer, with
the path in explain; a slow or failed lookup is a note, and where nothing was ever pruned the
step reads nothing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from agent_memory_retrieval.docs import Hit, IndexDoc, SearchFilter
from agent_memory_retrieval.packed import vector_bytes
from agent_memory_search.brainstem.descent import (
    ALL_TIME,
    SUMMARY_LEVELS,
    DescentOptions,
    EmbedCost,
    Lift,
    bag,
    make_room,
    openings,
    placed_fused,
    segment_lift,
    tier_places,
    word_scores,
)
from agent_memory_search.brainstem.engine import Brainstem
from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.options import EngineOptions
from agent_memory_search.brainstem.query import SearchQuery

NOW = datetime(2026, 3, 18, 15, 30, tzinfo=UTC)
OLD = NOW - timedelta(days=200)
QUERY = SearchQuery(query="heron ledger sparse merkle root", tenant="t", project_id="p", now=NOW)
WEEK = "week:2025-W36@p"


def _doc(i: str, type_: str, level: str, text: str, title: str = "") -> IndexDoc:
    return IndexDoc(
        id=i,
        type=type_,
        tenant="t",
        project_id="p",
        agent_id="a",
        session_id="s" if type_ == "event" else "",
        ts=OLD,
        level=level,
        text=text,
        title=title,
        event_ids=(i.rsplit(":", 1)[-1],) if type_ == "event" else ("e9",),
    )


def _event(event_id: str, text: str) -> Hit:
    doc = _doc(f"event:t:{event_id}", "event", "event", text)
    return Hit(id=doc.id, score=0.0, doc=doc)


class _Words:
    """A BM25 index that has forgotten every event: it holds one week's summary."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, ...] | None] = []  # the levels asked for

    async def healthy(self) -> bool:
        return True

    async def search(self, text: str, flt: SearchFilter, limit: int) -> list[Hit]:
        self.asked.append(flt.levels)
        if flt.levels == SUMMARY_LEVELS:
            doc = _doc(f"node:t:{WEEK}", "toc_node", "week", "the heron ledger export", "W36")
            return [Hit(id=doc.id, score=3.0, doc=doc)]
        return []

    async def close(self) -> None:
        return None


EVENTS = [
    _event("e1", "I started on the heron ledger export this morning."),
    _event("e2", "Last night the heron ledger came back with a sparse merkle root."),
    _event("e3", "The pelican rollout starts with one region."),
]


class _Lookup:
    """Postgres' side of a store whose events the pruner took out: the week's three, and
    ``outside`` (under no node) when a span is asked for; the span of each call is kept."""

    def __init__(self, outside: Hit | None = None) -> None:
        self.outside = outside
        self.spans: list[tuple[datetime, datetime] | None] = []

    async def __call__(
        self,
        flt: SearchFilter,
        node_ids: Sequence[str],
        period: tuple[datetime, datetime] | None,
        cited: Sequence[str],
        query: str,
        limit: int,
        timeout_ms: int,
    ) -> list[tuple[str, Hit, bytes | None, str | None]]:
        assert list(node_ids) == [WEEK]
        self.spans.append(period)
        found: list[tuple[str, Hit, bytes | None, str | None]] = [
            (WEEK, h, None, None) for h in EVENTS
        ]
        if period is not None and self.outside is not None:
            found.append(("", self.outside, None, None))
        return found


_lookup = _Lookup()


async def _pruned(tenant: str, project_id: str | None) -> bool:
    return True


async def _nothing(query: str, flt: SearchFilter, limit: int) -> list[Hit]:
    return []


def _brainstem(**kw: object) -> Brainstem:
    args: dict[str, object] = {
        "text_index": _Words(),
        "vector_index": None,
        "embedder": None,
        "toc_search": _nothing,
        "scan_search": _nothing,
        "descent_lookup": _lookup,
        "pruned_lookup": _pruned,
        **kw,
    }
    return Brainstem(**args)  # type: ignore[arg-type]


def test_words_score_the_rare_query_words_highest() -> None:
    texts = [e.doc.text for e in EVENTS]
    scores = word_scores(QUERY.query, texts)
    assert scores[1] > scores[0] > scores[2] == 0.0


WEIGHTS = {"bm25": 1.0, "vector": 0.3}


def _kept(rank: int, cosine: float) -> Candidate:
    """A moment the indexes still hold (one that never goes stale), ranked first by both
    tiers only because what ranked above it was pruned."""
    doc = replace(EVENTS[2].doc, id="grip:t:g1", type="grip", kind="preference")
    fused = (1.0 / (60 + rank) + 0.3 / (60 + rank)) / (1.3 / 61)
    return Candidate(
        id=doc.id,
        doc=doc,
        ranks={"bm25": rank, "vector": rank},
        scores={"bm25": 9.0, "vector": cosine},
        fused=fused,
    )


def test_an_event_read_is_placed_where_the_indexes_would_have_ranked_it() -> None:
    head = [_kept(1, 0.40)]
    words_at, vector_at = tier_places(head, [1.0], [3.0, 0.5, 0.0], {0: 0.7, 1: 0.2}, 0.3)
    assert words_at == {0: 1, 1: 3}  # the kept moment (words 1.0) is between them
    assert vector_at == {0: 1}  # 0.7 above the kept moment's 0.40; 0.2 is below the floor
    fused, rescale = placed_fused(words_at, vector_at, head, WEIGHTS, 60)
    assert rescale == 1.0  # both lists answered already
    assert [i for i, _ in fused] == [0, 1]
    assert fused[0][1] == pytest.approx(1.0)  # first in both lists: as the tiers would say


def test_what_an_event_read_outranks_moves_down() -> None:
    head = [_kept(1, 0.40)]
    before = head[0].fused
    make_room(head, [1.0], [3.0, 2.0], {0: 0.7, 1: 0.6}, 0.3, WEIGHTS, 60, 1.0)
    # two events above it in both lists: it is third in each now
    assert head[0].fused == pytest.approx((1.3 / 63) / (1.3 / 61))
    assert head[0].fused < before
    make_room(head, [1.0], [0.5], {0: 0.1}, 0.3, WEIGHTS, 60, 1.0)  # below it: nothing moves
    assert head[0].fused == pytest.approx((1.3 / 63) / (1.3 / 61))


def test_the_events_of_the_segment_that_matches_best_are_lifted() -> None:
    """The pruner took the segments out of the index with their events: the segment lift
    (``fusion.lift``) is made of the events read, one document per segment."""
    texts = ["the heron ledger", "export of the heron ledger", "pelican rollout", "a region"]
    segments = ["s1", "s1", "s2", None]
    bags = [bag(t) for t in texts]
    lifted = segment_lift("heron ledger", bags, segments, Lift(weight=0.05, k=5, depth=10))
    assert lifted == {0: pytest.approx(0.05 / 6), 1: pytest.approx(0.05 / 6)}  # s2: no word
    assert segment_lift("heron ledger", bags, segments, None) == {}
    fused, _ = placed_fused({0: 2, 2: 1}, {}, [], WEIGHTS, 60, lifted)
    assert [i for i, _ in fused] == [0, 2]  # second by words, first with its segment's lift


def test_a_list_only_the_events_read_answer_rescales_the_tiers() -> None:
    """BM25 found no moment left to match: the events read answer that list alone, and the
    tiers' scores are put on the scale of both lists, as one fusion of both would give."""
    vector_only = Candidate(
        id="grip:t:g2", doc=EVENTS[2].doc, ranks={"vector": 1}, scores={"vector": 0.5}, fused=1.0
    )
    fused, rescale = placed_fused({0: 1}, {}, [vector_only], WEIGHTS, 60)
    assert rescale == pytest.approx(0.3 / 1.3)
    assert fused[0][1] == pytest.approx(1.0 / 1.3)


def test_only_summaries_are_opened_the_answers_first() -> None:
    node = Candidate(id="node:t:day", doc=_doc("node:t:day", "toc_node", "day", "x"))
    event = Candidate(id="event:t:e1", doc=EVENTS[0].doc)
    week = Candidate(id="node:t:w", doc=_doc("node:t:w", "toc_node", "week", "x"))
    got = openings([event, node], [week, node], DescentOptions(top=2))
    assert [c.id for c in got] == ["node:t:day", "node:t:w"]


async def test_the_exact_event_under_a_summary_is_returned_with_its_path() -> None:
    outcome = await _brainstem().search(QUERY)
    assert outcome.results[0].id == "event:t:e2"
    assert "event:t:e3" not in {c.id for c in outcome.results}  # no word of the question
    descent = outcome.explain["descent"]
    assert descent["opened"] == [{"id": f"node:t:{WEEK}", "level": "week", "title": "W36"}]
    assert descent["returned"][0]["id"] == "event:t:e2"
    assert descent["returned"][0]["from"] == f"node:t:{WEEK}"
    assert descent["scored_by"] == ["words"]
    assert any(n.startswith("descent: 2 event(s)") for n in outcome.explain["fallbacks"])


async def test_a_question_in_one_project_reads_the_whole_project() -> None:
    """The summaries that rank first are often not the period the moment is in: with no
    period named, the lookup is asked for the project's whole time beside the nodes' spans,
    and an event no node holds says it came from the project; a question across projects (or
    with the switch off) reads the nodes alone. (A named period is read as before: the lookup
    gets it, ``test_descent_store`` reads one.)"""
    lookup = _Lookup(outside=_event("e7", "Old notes: the heron ledger sparse merkle root."))
    outcome = await _brainstem(descent_lookup=lookup).search(QUERY)
    assert lookup.spans == [ALL_TIME]
    descent = outcome.explain["descent"]
    assert descent["project"] is True and descent["period"] is False
    assert {r["id"]: r["from"] for r in descent["returned"]}["event:t:e7"] == "project"
    assert "event:t:e7" in {c.id for c in outcome.results}

    lookup.spans.clear()
    await _brainstem(descent_lookup=lookup).search(replace(QUERY, project_id=None))
    off = EngineOptions(descent=replace(DescentOptions(), scope=False))
    outcome = await _brainstem(descent_lookup=lookup, options=off).search(QUERY)
    assert lookup.spans == [None, None]
    assert outcome.explain["descent"]["project"] is False
    assert "event:t:e7" not in {c.id for c in outcome.results}


async def test_a_request_naming_its_tiers_is_answered_by_them_alone() -> None:
    """The descent is no tier: a vector-only (or BM25-only) search of what the indexes forgot
    does not find it again through the project's words."""
    for tiers in (("bm25",), ("vector",)):
        outcome = await _brainstem().search(replace(QUERY, tiers=tiers))
        assert "descent" not in outcome.explain
        assert "event:t:e2" not in {c.id for c in outcome.results}


async def test_nothing_pruned_nothing_read() -> None:
    called: list[str] = []

    async def never(*args: object) -> list[tuple[str, Hit, bytes | None, str | None]]:
        called.append("lookup")
        return []

    async def not_pruned(tenant: str, project_id: str | None) -> bool:
        return False

    words = _Words()
    outcome = await _brainstem(
        text_index=words, descent_lookup=never, pruned_lookup=not_pruned
    ).search(QUERY)
    assert "descent" not in outcome.explain
    assert not called
    assert SUMMARY_LEVELS not in words.asked  # no summary search either


async def test_a_lookup_over_its_budget_is_a_note() -> None:
    async def slow(*args: object) -> list[tuple[str, Hit, bytes | None, str | None]]:
        await asyncio.sleep(1)
        return []

    options = EngineOptions(descent=DescentOptions(budget_ms=20))
    outcome = await _brainstem(descent_lookup=slow, options=options).search(QUERY)
    assert "descent" not in outcome.explain
    assert "descent skipped (over its budget, 20 ms budget)" in outcome.explain["fallbacks"]


async def test_postgres_away_is_a_note() -> None:
    async def away(*args: object) -> list[tuple[str, Hit, bytes | None, str | None]]:
        raise psycopg.OperationalError("the connection is lost")

    outcome = await _brainstem(descent_lookup=away).search(QUERY)
    assert "descent skipped (OperationalError, 60 ms budget)" in outcome.explain["fallbacks"]


async def test_turned_off() -> None:
    options = EngineOptions(descent=replace(DescentOptions(), top=0))
    outcome = await _brainstem(options=options).search(QUERY)
    assert "descent" not in outcome.explain
    assert not outcome.results


class _Summaries:
    """A vector index that has forgotten every event: its one week is far from any question
    (the cosine of a summary of many things with one of them is low)."""

    def __init__(self, cosine: float) -> None:
        self.cosine = cosine

    async def search(self, vector: Sequence[float], flt: SearchFilter, limit: int) -> list[Hit]:
        doc = _doc(f"node:t:{WEEK}", "toc_node", "week", "the heron ledger export", "W36")
        return [Hit(id=doc.id, score=self.cosine, doc=doc)]

    async def healthy(self) -> bool:
        return True

    async def close(self) -> None:
        return None


class _Kept(_Words):
    """The same forgotten BM25 index, its week all it holds: the tiers, asking for moments,
    find nothing in it; asked for summaries, the week."""

    async def search(self, text: str, flt: SearchFilter, limit: int) -> list[Hit]:
        self.asked.append(flt.levels)
        if flt.types != ("toc_node",) or not set(text.lower().split()) & {"heron", "ledger"}:
            return []
        doc = _doc(f"node:t:{WEEK}", "toc_node", "week", "the heron ledger export", "W36")
        return [Hit(id=doc.id, score=3.0, doc=doc)]


class _Model:
    dimension = 3

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0, 0.0] for _ in texts]


async def test_a_low_cosine_is_no_refusal_where_the_indexes_have_forgotten() -> None:
    """no_match reads the best cosine, and once the pruner took the events out of the vector
    index only summaries are left to be close: the words of the question, found in what the
    indexes still hold, say something relevant is stored, even with the descent skipped."""

    async def slow(*args: object) -> list[tuple[str, Hit, bytes | None, str | None]]:
        await asyncio.sleep(1)
        return []

    options = EngineOptions(descent=DescentOptions(budget_ms=20))
    parts = {
        "text_index": _Kept(),
        "vector_index": _Summaries(0.1),
        "embedder": _Model(),
        "descent_lookup": slow,
    }
    outcome = await _brainstem(options=options, **parts).search(QUERY)
    notes = outcome.explain["fallbacks"]
    assert "descent skipped (over its budget, 20 ms budget)" in notes
    assert not outcome.no_match and outcome.results, notes
    assert any(n.startswith("no_match lifted: detail beyond retention") for n in notes)

    # nothing pruned: the cosine is evidence, and it says nothing relevant is stored
    async def not_pruned(tenant: str, project_id: str | None) -> bool:
        return False

    kept = await _brainstem(options=options, pruned_lookup=not_pruned, **parts).search(QUERY)
    assert kept.no_match and not kept.results
    # forgotten, but none of the question's words anywhere: still nothing relevant
    other = replace(QUERY, query="pelican rollout region canary")
    assert (await _brainstem(options=options, **parts).search(other)).no_match


def test_the_embedding_cost_says_how_many_texts_fit() -> None:
    cost = EmbedCost()
    assert cost.fitting(6, 1.0) == 6  # unknown: the first batch is tried, and measured
    cost.observe(6, 120.0)  # 20 ms a text
    assert cost.fitting(6, 35.0) == 1
    assert cost.fitting(6, 10.0) == 0
    assert cost.fitting(6, 1000.0) == 6
    cost.observe(2, 4.0)  # a faster machine (or a quiet one): the estimate follows
    assert cost.ms_per_text is not None and cost.ms_per_text < 20.0


class _SlowModel(_Model):
    """20 ms a text."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        time.sleep(0.02 * len(texts))
        return super().embed(texts)


async def test_no_embedding_is_started_that_would_outrun_the_budget() -> None:
    """An embedding cannot be stopped once it runs: after the first batch showed what a text
    costs, a descent embeds only as many as fit what is left of its budget, none if not one
    does, and scores the rest by words (a note says so)."""
    stem = _brainstem(
        embedder=_SlowModel(),
        vector_index=_Summaries(0.5),
        options=EngineOptions(descent=DescentOptions(budget_ms=400, embed=6)),
    )
    first = await stem.search(QUERY)
    # the two events holding a word of the question, tried and measured (40 ms)
    assert first.explain["descent"]["embedded"] == 2
    assert stem.descender is not None
    assert stem.descender.embed_cost.ms_per_text == pytest.approx(20, abs=10)
    stem.descender.embed_cost.ms_per_text = 1000.0  # a text would take a second
    third = await stem.search(QUERY)
    descent = third.explain["descent"]
    assert descent["embedded"] == 0 and descent["scored_by"] == ["words"]
    assert descent["note"].startswith("vectors would not fit the budget")
    assert first.results[0].id == third.results[0].id == "event:t:e2"


async def test_the_vectors_the_pruner_kept_rank_by_meaning_without_embedding() -> None:
    """Pruned events come with the vector the pruner kept: every one is scored by meaning at
    the cost of a dot product, none embedded now. Here the event with fewer of the question's
    words holds its meaning (the query's vector), and comes first."""
    aligned, orthogonal = vector_bytes([1.0, 0.0, 0.0]), vector_bytes([0.0, 1.0, 0.0])

    async def kept(*args: object) -> list[tuple[str, Hit, bytes | None, str | None]]:
        return [(WEEK, EVENTS[0], aligned, None), (WEEK, EVENTS[1], orthogonal, None)]

    outcome = await _brainstem(
        descent_lookup=kept, embedder=_SlowModel(), vector_index=_Summaries(0.5)
    ).search(QUERY)
    descent = outcome.explain["descent"]
    assert descent["stored_vectors"] == 2 and descent["embedded"] == 0
    assert descent["scored_by"] == ["words", "vectors"]
    assert [r["id"] for r in descent["returned"]] == ["event:t:e1", "event:t:e2"]
    assert descent["returned"][0]["cosine"] == pytest.approx(1.0, abs=1e-3)
