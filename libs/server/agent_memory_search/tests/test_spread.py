"""Spreading a long answer across sessions: the head stays, then one moment per session."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory_retrieval.docs import Hit, IndexDoc
from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.spread import SpreadOptions, session_order, spread

TS = datetime(2026, 3, 18, tzinfo=UTC)


def doc(i: str, session: str, *, type_: str = "event", level: str = "event") -> IndexDoc:
    return IndexDoc(
        id=i,
        type=type_,
        tenant="t",
        project_id="p",
        agent_id="a",
        session_id=session,
        ts=TS,
        level=level,
        text=f"text of {i}",
        event_ids=(i,),
    )


def moments(*pairs: tuple[str, str]) -> list[Candidate]:
    return [Candidate(id=i, doc=doc(i, s)) for i, s in pairs]


def segment(i: str, session: str) -> Hit:
    return Hit(id=i, score=3.0, doc=doc(i, session, type_="toc_node", level="segment"))


def order(result: list[Candidate]) -> list[str]:
    return [c.id for c in result]


def test_the_head_stays_and_each_further_session_gives_its_best_moment() -> None:
    ranked = moments(
        ("a1", "A"), ("a2", "A"), ("a3", "A"), ("a4", "A"), ("b1", "B"), ("a5", "A"), ("c1", "C")
    )
    out = spread(ranked, options=SpreadOptions(head=2))
    # after the head (a1, a2): B's and C's best moments before A's other turns
    assert order(out.results) == ["a1", "a2", "b1", "c1", "a3", "a4", "a5"]
    assert out.moved == 2


def test_sessions_are_ordered_by_all_three_views() -> None:
    ranked = moments(("a1", "A"), ("b1", "B"), ("c1", "C"), ("d1", "D"))
    # the moments alone put B before D; segments and vectors both put D first
    segments = [segment("seg-d", "D"), segment("seg-a", "A")]
    vector = [Hit(id="d1", score=0.9, doc=ranked[3].doc)]
    out = spread(ranked, segments=segments, vector=vector, options=SpreadOptions(head=1))
    assert order(out.results) == ["a1", "d1", "b1", "c1"]


def test_a_session_only_a_segment_knows_is_pointed_at_by_that_segment() -> None:
    ranked = moments(("a1", "A"), ("a2", "A"), ("a3", "A"))
    segments = [segment("seg-a", "A"), segment("seg-z", "Z")]
    out = spread(ranked, segments=segments, options=SpreadOptions(head=1))
    assert order(out.results) == ["a1", "seg-z", "a2", "a3"]
    filler = out.results[1]
    assert filler.doc.type == "toc_node" and filler.ranks == {"segment": 2}


def test_a_short_answer_is_left_alone() -> None:
    ranked = moments(("a1", "A"), ("a2", "A"), ("b1", "B"))
    out = spread(ranked, options=SpreadOptions(head=10))
    assert order(out.results) == ["a1", "a2", "b1"] and out.moved == 0


def test_items_without_a_session_are_each_their_own() -> None:
    ranked = moments(("a1", "A"), ("a2", "A"), ("x", ""), ("y", ""))
    out = spread(ranked, options=SpreadOptions(head=1))
    assert order(out.results) == ["a1", "x", "y", "a2"]


def test_session_order_is_weighted_reciprocal_rank_fusion() -> None:
    options = SpreadOptions(k=10, weights={"moments": 1.0, "segments": 0.5, "vector": 0.0})
    views = {"moments": ["A", "B"], "segments": ["B"], "vector": ["C"]}
    # A: 1/11; B: 1/12 + 0.5/11 > A; C: weight 0, never ranked
    assert session_order(views, options) == ["B", "A"]
