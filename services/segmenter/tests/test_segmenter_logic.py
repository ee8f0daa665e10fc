"""The pure segmentation rules and version rules, without servers."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta

from agent_memory_segmenter.logic import (
    EventInfo,
    SegmentPlan,
    SessionKey,
    StoredSegment,
    Thresholds,
    estimate_tokens,
    overlap_suffix,
    payload,
    reconcile,
    segment,
    segment_id,
    session_lock_key,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SMALL = Thresholds(gap_s=60, token_budget=1000, overlap_tokens=250)


def ev(i: int, at_s: float, tokens: int = 100, type_: str = "message") -> EventInfo:
    return EventInfo(f"e{i:04d}", T0 + timedelta(seconds=at_s), type_, tokens, "agent")


def ids(plan: SegmentPlan) -> list[str]:
    return plan.event_ids


def test_token_estimate_is_a_quarter_of_the_characters_rounded_up_and_at_least_one() -> None:
    assert estimate_tokens(0) == 1
    assert estimate_tokens(1) == 1
    assert estimate_tokens(4) == 1
    assert estimate_tokens(5) == 2
    assert estimate_tokens(4000) == 1000


def test_a_gap_longer_than_gap_s_closes_the_segment_without_overlap() -> None:
    events = [ev(0, 0), ev(1, 30), ev(2, 90), ev(3, 150.5), ev(4, 160)]
    plans = segment(events, SMALL)
    # 30 -> 90 is exactly 60 s: not more than gap_s, so no cut; 90 -> 150.5 is a cut
    assert [ids(p) for p in plans] == [["e0000", "e0001", "e0002"], ["e0003", "e0004"]]
    assert [p.close_reason for p in plans] == ["gap", None]
    assert [p.overlap_count for p in plans] == [0, 0]
    assert [p.ordinal for p in plans] == [0, 1]


def test_token_budget_closes_and_carries_the_last_overlap_tokens() -> None:
    events = [ev(i, i) for i in range(25)]  # 100 tokens each
    plans = segment(events, SMALL)
    first, second, third = plans
    assert ids(first) == [f"e{i:04d}" for i in range(10)]
    assert first.token_count == 1000 and first.close_reason == "token_budget"
    # 250 overlap tokens: two whole 100-token events fit, a third would not
    assert second.overlap_count == 2
    assert ids(second)[:2] == ["e0008", "e0009"]
    assert ids(second)[2:] == [f"e{i:04d}" for i in range(10, 18)]
    assert second.token_count == 1000 and second.close_reason == "token_budget"
    assert ids(third)[:2] == ["e0016", "e0017"] and third.close_reason is None
    assert third.start_ts == events[16].ts and third.end_ts == events[24].ts


def test_session_end_closes_and_the_next_event_starts_fresh() -> None:
    events = [ev(0, 0), ev(1, 1, type_="session_end"), ev(2, 2), ev(3, 3)]
    plans = segment(events, SMALL)
    assert [ids(p) for p in plans] == [["e0000", "e0001"], ["e0002", "e0003"]]
    assert [p.close_reason for p in plans] == ["session_end", None]
    assert plans[1].overlap_count == 0


def test_session_ending_the_stream_leaves_no_open_segment() -> None:
    plans = segment([ev(0, 0), ev(1, 1, type_="session_end")], SMALL)
    assert [p.close_reason for p in plans] == ["session_end"]


def test_an_event_larger_than_the_budget_is_a_segment_of_its_own_and_never_carried() -> None:
    events = [ev(0, 0), ev(1, 1, tokens=5000), ev(2, 2), ev(3, 3)]
    plans = segment(events, SMALL)
    assert [ids(p) for p in plans] == [["e0000"], ["e0000", "e0001"], ["e0002", "e0003"]]
    assert [p.overlap_count for p in plans] == [0, 1, 0]
    assert plans[1].token_count == 5100


def test_overlap_carries_only_own_events_never_the_previous_overlap() -> None:
    # segment 2 has 2 carried + one own 150-token event, then a 900-token event overflows it
    events = [ev(i, i) for i in range(10)] + [ev(10, 10, tokens=150), ev(11, 11, tokens=900)]
    plans = segment(events, SMALL)
    assert plans[1].event_ids == ["e0008", "e0009", "e0010"]
    assert plans[2].overlap_count == 1
    assert plans[2].event_ids == ["e0010", "e0011"]
    assert overlap_suffix([ev(0, 0, tokens=300)], 250) == []


def test_order_of_arrival_and_duplicates_do_not_change_the_segments() -> None:
    rng = random.Random(7)
    events = _random_session(rng, 300)
    expected = segment(events, SMALL)
    for _ in range(20):
        shuffled = events + rng.sample(events, 50)
        rng.shuffle(shuffled)
        assert segment(shuffled, SMALL) == expected


def test_every_event_is_the_own_event_of_exactly_one_segment_and_overlap_is_its_predecessor() -> (
    None
):
    rng = random.Random(11)
    for _ in range(30):
        events = _random_session(rng, rng.randint(1, 200))
        plans = segment(events, SMALL)
        own = [e.event_id for p in plans for e in p.own_events]
        assert own == [e.event_id for e in sorted(events, key=lambda e: e.key)]
        for before, after in itertools.pairwise(plans):
            carried = after.event_ids[: after.overlap_count]
            if carried:
                assert before.close_reason == "token_budget"
                assert carried == [e.event_id for e in before.own_events][-len(carried) :]
                assert sum(e.tokens for e in after.events[: after.overlap_count]) <= 250
        assert all(p.close_reason is not None for p in plans[:-1])


def test_resuming_at_any_segment_gives_the_same_rest_of_the_session() -> None:
    rng = random.Random(3)
    for _ in range(30):
        events = _random_session(rng, 150)
        plans = segment(events, SMALL)
        for plan in plans:
            first_own = plan.own_events[0].key
            rest = [e for e in events if e.key >= first_own]
            resumed = segment(
                rest,
                SMALL,
                start_ordinal=plan.ordinal,
                carried=plan.events[: plan.overlap_count],
            )
            assert resumed == plans[plan.ordinal :]


def test_incremental_recomputation_in_any_arrival_order_converges_to_the_full_result() -> None:
    """A model of the store: recompute from the last segment starting before the new events."""
    rng = random.Random(5)
    for _ in range(40):
        events = _random_session(rng, 120)
        arrival = events[:]
        rng.shuffle(arrival)
        stored: list[SegmentPlan] = []
        known: list[EventInfo] = []
        while arrival:
            cut = rng.randint(1, 15)
            batch, arrival = arrival[:cut], arrival[cut:]
            known += batch
            since = min(e.key for e in batch)
            restart = [p for p in stored if p.own_events[0].key < since]
            if restart:
                r = restart[-1]
                tail = segment(
                    [e for e in known if e.key >= r.own_events[0].key],
                    SMALL,
                    start_ordinal=r.ordinal,
                    carried=r.events[: r.overlap_count],
                )
                stored = stored[: r.ordinal] + tail
            else:
                stored = segment(known, SMALL)
        assert stored == segment(known, SMALL)


def _random_session(rng: random.Random, n: int) -> list[EventInfo]:
    events = []
    t = 0.0
    for i in range(n):
        t += rng.choice([1, 5, 20, 30, 59, 61, 200]) if rng.random() < 0.9 else 0
        type_ = "session_end" if rng.random() < 0.02 else "message"
        events.append(
            ev(i, t, tokens=rng.choice([1, 10, 40, 100, 120, 300, 900, 1200]), type_=type_)
        )
    return events


# --- ids and locks ---------------------------------------------------------------------------


def test_segment_ids_are_deterministic_and_separate_projects_reusing_a_session_id() -> None:
    assert segment_id("p", "s", 3) == segment_id("p", "s", 3)
    assert segment_id("p", "s", 3).endswith("_3")
    assert segment_id("p1", "s", 0) != segment_id("p2", "s", 0)
    key = session_lock_key("t", "p", "s")
    assert -(2**31) <= key < 2**31 and key == session_lock_key("t", "p", "s")


# --- version rules ---------------------------------------------------------------------------


def stored_from(plan: SegmentPlan, version: int, status: str, reason: str | None) -> StoredSegment:
    return StoredSegment(
        ordinal=plan.ordinal,
        version=version,
        status=status,  # type: ignore[arg-type]
        close_reason=reason,
        event_ids=tuple(plan.event_ids),
        overlap_count=plan.overlap_count,
        agent_id=plan.agent_id,
        start_ts=plan.start_ts,
        end_ts=plan.end_ts,
    )


def test_new_segments_start_at_version_1_and_only_closed_ones_are_published() -> None:
    plans = segment([ev(0, 0), ev(1, 100)], SMALL)
    writes = reconcile([], plans)
    assert [(w.ordinal, w.version, w.status, w.publish) for w in writes] == [
        (0, 1, "closed", True),
        (1, 1, "open", False),
    ]


def test_an_open_segment_grows_in_place_and_is_published_when_it_closes() -> None:
    before = segment([ev(0, 0)], SMALL)
    stored = [stored_from(before[0], 1, "open", None)]
    grown = segment([ev(0, 0), ev(1, 1)], SMALL)
    assert [(w.version, w.status, w.publish) for w in reconcile(stored, grown)] == [
        (1, "open", False)
    ]
    closed = segment([ev(0, 0), ev(1, 1), ev(2, 100)], SMALL)
    stored = [stored_from(grown[0], 1, "open", None)]
    writes = reconcile(stored, closed)
    assert [(w.ordinal, w.version, w.status, w.close_reason, w.publish) for w in writes] == [
        (0, 1, "closed", "gap", True),
        (1, 1, "open", None, False),
    ]


def test_a_late_event_inside_a_closed_segment_makes_a_new_version() -> None:
    plans = segment([ev(0, 0), ev(2, 2), ev(3, 100)], SMALL)
    stored = [stored_from(plans[0], 1, "closed", "gap"), stored_from(plans[1], 1, "open", None)]
    late = segment([ev(0, 0), ev(1, 1), ev(2, 2), ev(3, 100)], SMALL)
    writes = reconcile(stored, late)
    assert [(w.ordinal, w.version, w.status, w.publish) for w in writes] == [(0, 2, "closed", True)]


def test_an_idle_closed_segment_with_unchanged_content_is_left_alone() -> None:
    plans = segment([ev(0, 0), ev(1, 1)], SMALL)
    stored = [stored_from(plans[0], 1, "closed", "idle")]
    assert reconcile(stored, plans) == []  # still the open tail by the rules: stays closed
    after_gap = segment([ev(0, 0), ev(1, 1), ev(2, 500)], SMALL)
    writes = reconcile(stored, after_gap)
    assert [(w.ordinal, w.version, w.status) for w in writes] == [(1, 1, "open")]


def test_an_idle_closed_segment_that_grows_reopens_as_the_next_version() -> None:
    plans = segment([ev(0, 0), ev(1, 1)], SMALL)
    stored = [stored_from(plans[0], 1, "closed", "idle")]
    grown = segment([ev(0, 0), ev(1, 1), ev(2, 2)], SMALL)
    writes = reconcile(stored, grown)
    assert [(w.version, w.status, w.close_reason, w.publish) for w in writes] == [
        (2, "open", None, False)
    ]


def test_segments_merged_by_a_late_event_are_retracted_or_dropped() -> None:
    three = segment([ev(0, 0), ev(1, 100), ev(2, 200)], SMALL)
    stored = [
        stored_from(three[0], 1, "closed", "gap"),
        stored_from(three[1], 3, "closed", "gap"),
        stored_from(three[2], 1, "open", None),
    ]
    # late events at 50 and 150 fill both gaps: one segment is left
    merged = segment([ev(0, 0), ev(5, 50), ev(1, 100), ev(6, 150), ev(2, 200)], SMALL)
    assert len(merged) == 1
    writes = reconcile(stored, merged)
    assert [(w.ordinal, w.version, w.status, w.publish, w.delete) for w in writes] == [
        (0, 2, "open", False, False),  # v1 was published: v2 is announced when it closes
        (1, 4, "retracted", True, False),
        (2, 1, "open", False, True),  # never published: simply deleted
    ]
    key = SessionKey("t", "p", "s")
    body = payload(key, writes[1]).model_dump()
    assert body["event_ids"] == [] and body["close_reason"] == "retracted"
    assert body["version"] == 4 and body["segment_id"] == segment_id("p", "s", 1)
    # a reopened (already once published) tail is retracted at its unpublished version
    stored_open_v2 = [
        stored_from(three[0], 1, "closed", "gap"),
        stored_from(three[1], 2, "open", None),
    ]
    writes = reconcile(stored_open_v2, segment([ev(0, 0), ev(5, 50), ev(1, 100)], SMALL))
    assert [(w.ordinal, w.version, w.status, w.publish) for w in writes] == [
        (0, 2, "open", False),
        (1, 2, "retracted", True),
    ]


def test_a_retracted_segment_that_comes_back_gets_a_new_version() -> None:
    plans = segment([ev(0, 0), ev(1, 100)], SMALL)
    retracted = StoredSegment(1, 4, "retracted", "retracted", (), 0, "agent", T0, T0)
    stored = [stored_from(plans[0], 1, "closed", "gap"), retracted]
    writes = reconcile(stored, plans)
    assert [(w.ordinal, w.version, w.status, w.publish) for w in writes] == [(1, 5, "open", False)]


def test_payload_has_exactly_the_contract_fields() -> None:
    plans = segment([ev(0, 0), ev(1, 100)], SMALL)
    (first, _) = reconcile([], plans)
    body = payload(SessionKey("t", "p", "s"), first).model_dump()
    assert set(body) == {
        "tenant",
        "segment_id",
        "version",
        "project_id",
        "agent_id",
        "session_id",
        "ordinal",
        "start_ts",
        "end_ts",
        "event_ids",
        "overlap_count",
        "token_count",
        "close_reason",
    }
    assert body["event_ids"] == ["e0000"] and body["close_reason"] == "gap"
    assert body["token_count"] == 100 and body["version"] == 1


def test_a_changed_close_reason_of_unchanged_events_is_a_new_version_unless_idle() -> None:
    events = [ev(0, 0, tokens=400), ev(1, 1, tokens=400), ev(2, 100)]
    plans = segment(events, SMALL)
    assert plans[0].close_reason == "gap"
    # a late 300-token event right after e0001 now closes the same events by budget
    late = segment([*events, ev(3, 2, tokens=300)], SMALL)
    assert late[0].event_ids == plans[0].event_ids and late[0].close_reason == "token_budget"
    by_gap = [stored_from(plans[0], 1, "closed", "gap"), stored_from(plans[1], 1, "open", None)]
    writes = reconcile(by_gap, late)
    assert next((w.ordinal, w.version, w.close_reason, w.publish) for w in writes) == (
        0,
        2,
        "token_budget",
        True,
    )
    by_idle = [stored_from(plans[0], 1, "closed", "idle"), stored_from(plans[1], 1, "open", None)]
    assert all(w.ordinal != 0 for w in reconcile(by_idle, late))
