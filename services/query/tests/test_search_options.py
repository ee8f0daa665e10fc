"""What the query service makes of its search settings and requests: the engine's options
(``runtime.engine_options``) and the kinds a request may name (``schemas.SearchRequest``)."""

from __future__ import annotations

from agent_memory_query.search.runtime import engine_options
from agent_memory_query.search.schemas import SearchRequest
from agent_memory_query.settings import SearchOptions
from agent_memory_search.brainstem.planner import TierState, make_plan
from agent_memory_search.brainstem.tiers import tier_depth

UP = {t: TierState(t, True) for t in ("vector", "bm25", "toc", "scan")}


def test_the_vector_tier_is_asked_half_as_deep_by_default() -> None:
    """Its graph search walks further the more rows it must return (docs/search.md): 20
    candidates, not the other tiers' 40, unless a limit or a long answer asks for more."""
    opts = engine_options(SearchOptions())
    fetch = make_plan("answer", 10, UP, candidates=opts.candidates).fetch
    assert tier_depth(opts, "bm25", fetch, 10, spreads=False) == 40
    assert tier_depth(opts, "vector", fetch, 10, spreads=False) == 20
    assert tier_depth(opts, "vector", fetch, 30, spreads=False) == 30  # the limit asks more
    assert tier_depth(opts, "vector", fetch, 10, spreads=True) == opts.spread_vector_depth
    unset = engine_options(SearchOptions(vector_candidates=None))
    assert tier_depth(unset, "vector", fetch, 10, spreads=False) == 40  # as every tier


def test_search_accepts_the_decision_kind() -> None:
    assert SearchRequest(query="what did we decide", kinds=["decision"]).kinds == ["decision"]
