"""What the runtime wrote weighs one token against the budget (issue 52, point 3): it stays in
the segment of its moment, and a long compaction summary does not cut the session."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agent_memory_segmenter.logic import EventInfo, Thresholds, event_tokens, segment

T0 = datetime(2026, 1, 15, 10, tzinfo=UTC)


def test_runtime_events_weigh_one_token() -> None:
    assert event_tokens("runtime", 40_000) == 1
    assert event_tokens("message", 40_000) == 10_000


def test_a_long_runtime_event_does_not_close_the_segment() -> None:
    kinds = [("message", 2_000), ("runtime", 60_000), ("message", 2_000)]
    events = [
        EventInfo(f"e{i}", T0 + timedelta(seconds=i), t, event_tokens(t, chars), "claude-code")
        for i, (t, chars) in enumerate(kinds)
    ]
    (plan,) = segment(events, Thresholds(token_budget=4_000))
    assert plan.event_ids == ["e0", "e1", "e2"] and plan.close_reason is None
