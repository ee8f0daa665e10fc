"""The brainstem's pure parts: intent, plan, fusion, ranking policy, novelty gate."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from agent_memory_retrieval.docs import Hit, IndexDoc
from agent_memory_search.brainstem.fusion import Candidate, lift, rrf
from agent_memory_search.brainstem.intent import classify, resumes
from agent_memory_search.brainstem.planner import TierState, fetch_depth, make_plan
from agent_memory_search.brainstem.ranking import (
    RankingPolicy,
    apply_policy,
    novelty_gate,
    reweigh_all,
    salience_factor,
    settle,
    speaker_named,
    staleness,
    usage_factor,
    words_of,
)
from agent_memory_search.brainstem.tiers import QueryVector
from agent_memory_search.brainstem.timeparse import TimeRange, parse_time

NOW = datetime(2026, 3, 18, 15, 30, tzinfo=UTC)


def doc(
    i: str,
    text: str = "",
    *,
    kind: str = "observation",
    salience: float = 0.5,
    age_days: float = 0.0,
    type_: str = "event",
) -> IndexDoc:
    return IndexDoc(
        id=i,
        type=type_,
        tenant="t",
        project_id="p",
        agent_id="a",
        session_id="s",
        ts=NOW - timedelta(days=age_days),
        level="event",
        kind=kind,
        salience=salience,
        text=text or f"text of {i}",
        event_ids=(i,),
    )


def hits(*ids: str) -> list[Hit]:
    return [Hit(id=i, score=1.0 / (n + 1), doc=doc(i)) for n, i in enumerate(ids)]


# --- intent -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("what did we do yesterday?", "time-boxed"),
        ("last week", "time-boxed"),
        ("where did we set the gateway timeout", "locate"),
        ("find the migration error", "locate"),
        ("when did we switch to ULIDs?", "locate"),
        ("the ConnectionRefusedError in the recorder", "locate"),
        ("services/query/app.py lifespan", "locate"),
        ('the "append-only" decision', "locate"),
        ("what port does the gateway listen on?", "answer"),
        ("why are events append-only", "answer"),
        ("how do we run the tests", "answer"),
        ("auth refactor", "explore"),
        ("tell me about the indexer", "explore"),
        ("overview of the retrieval work", "explore"),
        ("what did we decide about auth last week?", "answer"),  # a topic inside a period
        ("which topics came up in the auth work?", "explore"),
        ("what should the default theme be?", "answer"),  # a UI theme, not a survey
    ],
)
def test_intent(query: str, intent: str) -> None:
    parsed = parse_time(query, NOW)
    assert classify(query, parsed.rest, parsed.range is not None) == intent


@pytest.mark.parametrize(
    ("query", "resume"),
    [
        ("where did we leave off?", True),
        ("Where did we leave off on this project?", True),
        ("what were we working on?", True),
        ("what did we do last session?", True),
        ("Catch me up.", True),
        ("what was the last thing we did?", True),
        ("where did we leave off with the billing refactor?", False),  # a subject: searched
        ("what did we decide last time about the schema?", False),
        ("where did we set the timeout?", False),
        ("how did we fix the last session bug", False),
    ],
)
def test_where_did_we_leave_off_is_told_from_questions_about_a_subject(
    query: str, resume: bool
) -> None:
    assert resumes(query) is resume


# --- plan -------------------------------------------------------------------------------------

UP = {t: TierState(t, True) for t in ("vector", "bm25", "toc", "scan")}


def test_plan_with_everything_up() -> None:
    plan = make_plan("answer", 10, UP)
    assert plan.primary == ("vector", "bm25")
    assert plan.chain == ("toc", "scan")
    assert plan.fallbacks == ()
    assert plan.need == 10 and plan.fetch == fetch_depth(10) == 40
    assert fetch_depth(30) == 40  # a larger limit appends to the same first ten
    assert fetch_depth(100) == 100 and fetch_depth(100, candidates=500) == 300  # bounded
    assert make_plan("answer", 10, UP, candidates=100).fetch == 100
    assert "toc_node" not in plan.types  # questions are answered by moments
    assert "toc_node" in make_plan("explore", 10, UP).types


def test_vector_down_falls_back_to_bm25() -> None:
    states = {**UP, "vector": TierState("vector", False, "timeout")}
    plan = make_plan("answer", 10, states)
    assert plan.primary == ("bm25",)
    assert plan.fallbacks == ("vector unavailable (timeout) -> bm25",)
    assert plan.skipped["vector"] == "unavailable: timeout"


def test_both_indexes_down_fall_back_to_toc_then_scan() -> None:
    states = {
        **UP,
        "vector": TierState("vector", False, "not configured"),
        "bm25": TierState("bm25", False, "index not healthy"),
    }
    plan = make_plan("locate", 5, states)
    assert plan.primary == ()
    assert plan.chain == ("toc", "scan")
    assert plan.fallbacks == (
        "vector and bm25 unavailable (not configured; index not healthy) -> toc",
    )
    states["toc"] = TierState("toc", False, "not configured")
    plan = make_plan("locate", 5, states)
    assert plan.chain == ("toc", "scan")  # the executor passes a down tier, and says so
    assert plan.skipped["toc"] == "unavailable: not configured"
    assert plan.fallbacks[0].endswith("-> scan")


def test_requested_tiers_restrict_the_plan_and_its_fallbacks() -> None:
    plan = make_plan("answer", 10, UP, requested=("bm25",))
    assert plan.primary == ("bm25",)
    assert plan.chain == ()
    assert plan.skipped == {t: "not requested" for t in ("vector", "toc", "scan")}


def test_locate_weights_exact_words_higher() -> None:
    weights = make_plan("locate", 10, UP).weights
    assert weights["bm25"] > weights["vector"]


# --- fusion -----------------------------------------------------------------------------------


def test_rrf_rewards_agreement() -> None:
    fused = rrf({"bm25": hits("a", "b", "c"), "vector": hits("c", "d", "a")})
    ids = [c.id for c in fused]
    assert ids[:2] == ["a", "c"]  # both seen by both tiers
    assert fused[0].ranks == {"bm25": 1, "vector": 3}
    assert set(ids) == {"a", "b", "c", "d"}


def test_rrf_k60_arithmetic_and_normalisation() -> None:
    fused = rrf({"bm25": hits("a", "b"), "vector": hits("a")}, k=60)
    a, b = fused
    assert a.fused == pytest.approx(1.0)  # first everywhere
    assert b.fused == pytest.approx((1 / 62) / (2 / 61))


def test_rrf_weights_and_single_list() -> None:
    fused = rrf({"bm25": hits("a"), "vector": hits("b")}, weights={"bm25": 1.0, "vector": 0.5})
    assert [c.id for c in fused] == ["a", "b"]
    only = rrf({"vector": hits("x", "y")})
    assert only[0].fused == pytest.approx(1.0)
    assert rrf({}) == []


def test_rrf_counts_a_repeated_id_once_per_tier() -> None:
    fused = rrf({"bm25": [*hits("a"), *hits("a"), *hits("x", "b")[1:]]})
    assert [(c.id, c.ranks["bm25"]) for c in fused] == [("a", 1), ("b", 2)]


def test_rrf_ties_of_an_engine_rank_in_id_order_whatever_order_it_returned_them_in() -> None:
    """Two deployments holding the same documents return equal scores in their engine's own
    order (where each sits in its segments): the fused scores must not depend on it."""

    def listed(*pairs: tuple[str, float]) -> list[Hit]:
        return [Hit(id=i, score=s, doc=doc(i)) for i, s in pairs]

    one = rrf({"bm25": listed(("a", 3.0), ("b", 2.0), ("c", 2.0), ("d", 1.0))})
    other = rrf({"bm25": listed(("a", 3.0), ("c", 2.0), ("b", 2.0), ("d", 1.0))})
    assert {c.id: c.ranks["bm25"] for c in one} == {"a": 1, "b": 2, "c": 3, "d": 4}
    assert [(c.id, c.fused) for c in one] == [(c.id, c.fused) for c in other]
    # a tier whose scores are placeholders keeps its order: it is what it means
    placed = rrf({"period": listed(("c", 1.0), ("a", 1.0), ("b", 1.0))})
    assert [(c.id, c.ranks["period"]) for c in placed] == [("c", 1), ("a", 2), ("b", 3)]


def segment(node_id: str, *event_ids: str) -> Hit:
    node = IndexDoc(
        id=node_id, type="toc_node", tenant="t", project_id="p", agent_id="a", session_id="s",
        ts=NOW, level="segment", title=node_id, event_ids=event_ids,
    )  # fmt: skip
    return Hit(id=node_id, score=1.0, doc=node)


def test_lift_raises_moments_inside_the_best_segments() -> None:
    fused = rrf({"bm25": hits("a", "b", "c", "d")})  # a > b > c > d by words alone
    scale = 1.0 / 61
    lifted = lift(
        fused, [segment("s1", "c", "x"), segment("s2", "b")], weight=0.05, k=5, scale=scale
    )
    # c (in the best segment) passes b (in the second), and b passes a; d stays last
    assert [c.id for c in lifted] == ["c", "b", "a", "d"]
    by_id = {c.id: c for c in lifted}
    assert by_id["c"].ranks == {"bm25": 3, "segment": 1}
    assert by_id["c"].fused == pytest.approx((1 / 63 + 0.05 / 6) / scale)
    assert "segment" not in by_id["a"].ranks
    # a small weight only breaks near ties: the first word match keeps its place
    gentle = lift(rrf({"bm25": hits("a", "b", "c", "d")}), [segment("s", "d")], weight=0.001,
                  k=5, scale=scale)  # fmt: skip
    assert [c.id for c in gentle] == ["a", "b", "c", "d"]
    assert lift(fused, [], weight=0.05, k=5, scale=scale) == sorted(
        fused, key=lambda c: (-c.fused, c.id)
    )


# --- ranking policy ---------------------------------------------------------------------------

POLICY = RankingPolicy()


def test_salience_factor_bounds() -> None:
    assert salience_factor(0.0, POLICY) == pytest.approx(0.55)
    assert salience_factor(1.0, POLICY) == pytest.approx(1.0)
    assert salience_factor(2.0, POLICY) == pytest.approx(1.0)
    assert salience_factor(None, POLICY) == pytest.approx(0.55 + 0.45 * 0.5)


def test_usage_factor_rises_with_use_up_to_its_boost() -> None:
    assert usage_factor(0, 0.5, 0.2) == 1.0
    assert usage_factor(2, 0.5, 0.2) == pytest.approx(1.1)  # 1 + 0.2 * (1 - 1/2)
    assert usage_factor(10, 0.0, 0.2) == 1.0
    assert usage_factor(10**9, 0.5, 0.2) == pytest.approx(1.2, abs=1e-6)


def test_what_agents_used_rises_a_little_and_never_buries_a_better_match() -> None:
    used = Candidate("used", doc("used"), fused=0.9)
    better = Candidate("better", doc("better"), fused=1.0)
    ranked = apply_policy(
        [better, used], access_counts={"used": 3}, now=NOW, policy=RankingPolicy()
    )
    assert [c.id for c in ranked] == ["used", "better"]  # 0.9 * 1.12 > 1.0
    assert ranked[0].factors["usage"] == pytest.approx(1.12)
    far = Candidate("far", doc("far"), fused=0.5)
    ranked = apply_policy(
        [better, far], access_counts={"far": 10**6}, now=NOW, policy=RankingPolicy()
    )
    assert [c.id for c in ranked] == ["better", "far"]  # at most x1.2


def test_ties_break_on_the_newer_moment_then_the_id_whatever_the_input_order() -> None:
    cands = [
        Candidate("b", doc("b", age_days=1), fused=0.5),
        Candidate("a", doc("a", age_days=1), fused=0.5),
        Candidate("n", doc("n", age_days=0.5), fused=0.5),
    ]
    for order in (cands, cands[::-1], cands[1:] + cands[:1]):
        ranked = apply_policy(order, access_counts={}, now=NOW, policy=POLICY)
        assert [c.id for c in ranked] == ["n", "a", "b"]
        again = reweigh_all(list(reversed(ranked)), "none", lambda c: None)
        assert [c.id for c in again] == ["n", "a", "b"]


def test_settle_makes_the_scores_follow_the_order_without_changing_it() -> None:
    placed = Candidate("placed", doc("placed"), fused=0.01, score=0.01)  # put first by a step
    top = Candidate("top", doc("top"), fused=0.4, score=0.4)
    low = Candidate("low", doc("low"), fused=0.3, score=0.3)
    settled = settle([placed, top, low])
    assert [c.id for c in settled] == ["placed", "top", "low"]
    assert [c.score for c in settled] == [0.4, 0.4, 0.3]
    assert settled[0].factors["placed"] == pytest.approx(40.0)
    assert "placed" not in settled[1].factors


def test_duplicate_grips_of_one_event_collapse() -> None:
    def grip(i: str, events: tuple[str, ...], text: str) -> Candidate:
        d = IndexDoc(**{**doc(i).__dict__, "type": "grip", "event_ids": events, "text": text})
        return Candidate(i, d, fused=1.0)

    first = grip("g1", ("e1",), "the cache keeps sessions for an hour")
    again = grip("g2", ("e1",), "sessions expire from the cache after sixty minutes")
    other = grip("g3", ("e2",), "payments retry three times")
    kept, dropped = novelty_gate([first, again, other], 10, 0.8)
    assert [c.id for c in kept] == ["g1", "g3"]
    assert [c.id for c in dropped] == ["g2"]


@pytest.mark.parametrize(
    "kind", ["decision", "constraint", "definition", "procedure", "preference"]
)
def test_evergreen_kinds_never_go_stale(kind: str) -> None:
    assert staleness(kind, NOW - timedelta(days=900), NOW, POLICY) == 1.0


def test_observations_decay_to_the_floor() -> None:
    fresh = staleness("observation", NOW, NOW, POLICY)
    month = staleness("observation", NOW - timedelta(days=30), NOW, POLICY)
    years = staleness("observation", NOW - timedelta(days=3000), NOW, POLICY)
    assert fresh == pytest.approx(1.0)
    assert month == pytest.approx(POLICY.stale_floor + (1 - POLICY.stale_floor) / 2)
    assert years == pytest.approx(POLICY.stale_floor, abs=1e-6)
    assert staleness("observation", NOW + timedelta(days=3), NOW, POLICY) == 1.0  # future


def test_old_constraint_outranks_fresh_observation_of_similar_relevance() -> None:
    """The observation is one rank ahead after fusion; policy puts the constraint first."""
    obs = Candidate("obs", doc("obs", kind="observation", salience=0.3), fused=1.0)
    rule = Candidate(
        "rule", doc("rule", kind="constraint", salience=0.5, age_days=120), fused=61 / 62
    )
    ranked = apply_policy([obs, rule], access_counts={}, now=NOW, policy=POLICY)
    assert [c.id for c in ranked] == ["rule", "obs"]
    assert ranked[0].factors["staleness"] == 1.0


@pytest.mark.parametrize("kind", ["decision", "constraint"])
def test_an_old_decision_is_ranked_like_a_constraint(kind: str) -> None:
    """ "What did we decide?": a decision months old is not stale, and its salience counts."""
    obs = Candidate("obs", doc("obs", kind="observation", salience=0.05), fused=1.0)
    old = Candidate("old", doc("old", kind=kind, salience=0.25, age_days=150), fused=61 / 62)
    ranked = apply_policy([obs, old], access_counts={}, now=NOW, policy=POLICY)
    assert [c.id for c in ranked] == ["old", "obs"]
    assert ranked[0].factors["staleness"] == 1.0


def test_an_old_observation_loses_to_a_fresh_one() -> None:
    old = Candidate("old", doc("old", age_days=200), fused=1.0)
    new = Candidate("new", doc("new", age_days=1), fused=0.97)
    ranked = apply_policy([old, new], access_counts={}, now=NOW, policy=POLICY)
    assert [c.id for c in ranked] == ["new", "old"]


def test_the_period_a_question_names_ranks_first() -> None:
    """Moments around the period (told of it later) follow those inside it."""
    period = TimeRange(NOW - timedelta(days=2), NOW - timedelta(days=1), "on March 16")
    after = Candidate("after", doc("after", age_days=0.5), fused=1.0)  # the next day
    inside = Candidate("inside", doc("inside", age_days=1.5), fused=0.8)
    ranked = apply_policy([after, inside], access_counts={}, now=NOW, policy=POLICY, period=period)
    assert [c.id for c in ranked] == ["inside", "after"]
    assert ranked[0].factors["period"] == 1.0
    assert ranked[1].factors["period"] == POLICY.outside_period
    # without a period there is no such factor
    plain = apply_policy([after], access_counts={}, now=NOW, policy=POLICY)
    assert "period" not in plain[0].factors


def test_a_moment_by_the_speaker_the_question_names_rises() -> None:
    def said(i: str, speaker: str) -> IndexDoc:
        return IndexDoc(**{**doc(i).__dict__, "title": speaker})

    nora = Candidate("nora", said("nora", "Nora"), fused=0.9)
    omar = Candidate("omar", said("omar", "Omar"), fused=1.0)
    words = words_of("What puppy did Nora adopt?")
    ranked = apply_policy([omar, nora], access_counts={}, now=NOW, policy=POLICY, query_words=words)
    assert [c.id for c in ranked] == ["nora", "omar"]
    assert ranked[0].factors["speaker"] == POLICY.named_speaker
    assert "speaker" not in ranked[1].factors
    # every word of a speaker's name must be named; only events have speakers
    assert speaker_named(said("x", "Nora Lee"), words_of("what did nora lee say")) is True
    assert speaker_named(said("x", "Nora Lee"), words) is False
    node = IndexDoc(**{**doc("n", type_="toc_node").__dict__, "title": "Nora"})
    assert speaker_named(node, words) is False


def test_novelty_gate_drops_a_moment_already_shown() -> None:
    """A grip quoting an event shown above adds nothing; an overview never hides moments."""
    event = Candidate("e1", doc("e1", "we decided to keep events append-only forever"))
    grip = Candidate("g1", doc("g1", "…keep events append-only…", type_="grip"))
    grip.doc = IndexDoc(**{**grip.doc.__dict__, "event_ids": ("e1",)})
    node = Candidate("n1", doc("n1", "storage decisions of the week", type_="toc_node"))
    node.doc = IndexDoc(**{**node.doc.__dict__, "event_ids": ("e1", "e2")})
    other = Candidate("e2", doc("e2", "the recorder acks after the commit"))
    kept, dropped = novelty_gate([node, event, grip, other], limit=10, threshold=0.8)
    assert [c.id for c in kept] == ["n1", "e1", "e2"]
    assert [c.id for c in dropped] == ["g1"]


def test_novelty_gate_drops_near_duplicates_and_fills_up_to_limit() -> None:
    texts = {
        "a": "the gateway listens on port 8700 by default",
        "b": "the gateway listens on port 8700 by default.",  # the same words
        "c": "recorder acks only after the commit",
        "d": "the query service listens on 8701",
    }
    ranked = [Candidate(i, doc(i, t)) for i, t in texts.items()]
    kept, dropped = novelty_gate(ranked, limit=3, threshold=0.8)
    assert [c.id for c in kept] == ["a", "c", "d"]
    assert [c.id for c in dropped] == ["b"]
    kept, _ = novelty_gate(ranked, limit=1, threshold=0.8)
    assert [c.id for c in kept] == ["a"]


@dataclass
class _Bare:
    """A document with none of the optional attributes: the policy must not need them."""

    text: str


def test_policy_tolerates_missing_attributes() -> None:
    ranked = apply_policy(
        [Candidate("x", _Bare("hello"), fused=0.5)], access_counts={}, now=NOW, policy=POLICY
    )
    assert ranked[0].score == pytest.approx(0.5 * salience_factor(None, POLICY))


async def test_the_query_vector_is_embedded_once_per_search() -> None:
    """Around the period and beyond it, two runs of the plan share one embedding."""
    calls = 0

    async def slowly() -> list[list[float]]:
        await asyncio.sleep(0.01)
        return [[1.0, 0.0]]

    def embed() -> asyncio.Future[list[list[float]]]:
        nonlocal calls
        calls += 1
        return asyncio.ensure_future(slowly())

    once = QueryVector(embed)
    first, second = await asyncio.gather(once.get(), once.get())
    assert first == second == [1.0, 0.0]
    assert await once.get() == [1.0, 0.0]
    assert calls == 1
    # a caller that gives up does not cancel the embedding for the others
    slow = QueryVector(embed)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(slow.get(), 0.001)
    assert await slow.get() == [1.0, 0.0]
    assert calls == 2
    # start() hands the work over at once (the plan knows the vector tier runs), and the
    # tier that asks later gets that same embedding
    early = QueryVector(embed)
    early.start()
    assert calls == 3
    early.start()
    assert await early.get() == [1.0, 0.0]
    assert calls == 3
