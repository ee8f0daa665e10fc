"""Time expressions resolved against a fixed ``now``: Wednesday 2026-03-18 15:30 UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from agent_memory_search.brainstem.timeparse import TimeRange, parse_time

NOW = datetime(2026, 3, 18, 15, 30, tzinfo=UTC)  # a Wednesday


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "since", "until", "rest"),
    [
        ("what did we do yesterday", "2026-03-17", "2026-03-18", "what did we do"),
        ("auth decisions last week?", "2026-03-09", "2026-03-16", "auth decisions?"),
        ("errors in the last 10 hours", "2026-03-18T05:30", None, "errors"),
        ("what happened in March", "2026-03-01", "2026-04-01", "what happened"),
        ("deploy on 2026-03-15", "2026-03-15", "2026-03-16", "deploy"),
        ("standup this morning", "2026-03-18", "2026-03-18T12:00", "standup"),
        ("the bug 2 days ago", "2026-03-16", "2026-03-17", "the bug"),
        ("plan in March 2025", "2025-03-01", "2025-04-01", "plan"),
        ("in December", "2025-12-01", "2026-01-01", ""),  # the latest December that began
        ("since yesterday", "2026-03-17", None, ""),
        ("before 2026-03-01", None, "2026-03-01", ""),
        ("after 2026-03-10", "2026-03-11", None, ""),
        ("between March 1 and March 10", "2026-03-01", "2026-03-11", ""),
        ("from 2026-03-01 to 2026-03-05", "2026-03-01", "2026-03-06", ""),
        ("on Monday", "2026-03-16", "2026-03-17", ""),
        ("last Wednesday", "2026-03-11", "2026-03-12", ""),
        ("on 15 March", "2026-03-15", "2026-03-16", ""),
        ("on March 15, 2025", "2025-03-15", "2025-03-16", ""),
        ("the 10th of March", "2026-03-10", "2026-03-11", ""),
        ("this week", "2026-03-16", "2026-03-23", ""),
        ("last month", "2026-02-01", "2026-03-01", ""),
        ("last year", "2025-01-01", "2026-01-01", ""),
        ("in 2025", "2025-01-01", "2026-01-01", ""),
        ("a week ago", "2026-03-09", "2026-03-16", ""),
        ("past 3 days", "2026-03-15T15:30", None, ""),
        ("last hour", "2026-03-18T14:30", None, ""),
        ("yesterday afternoon", "2026-03-17T12:00", "2026-03-17T18:00", ""),
        ("last night", "2026-03-17T18:00", "2026-03-18T06:00", ""),
        ("last December", "2025-12-01", "2026-01-01", ""),
        ("over the weekend", "2026-03-14", "2026-03-16", ""),
        ("a few weeks ago", "2026-02-09", "2026-03-09", ""),  # vague: a wider window
    ],
)
def test_expressions(query: str, since: str | None, until: str | None, rest: str) -> None:
    parsed = parse_time(query, NOW)
    assert parsed.range is not None, query
    assert parsed.range.since == (d(since) if since else None)
    assert parsed.range.until == (d(until) if until else None)
    assert parsed.rest == rest


@pytest.mark.parametrize(
    "query",
    [
        "what may happen to the build",  # "may" the verb
        "march forward with the refactor",  # "march" the verb
        "When did Melanie paint a sunrise?",
        "version 2026 of the plan",  # a number, not a year expression
        "which port does the gateway use",
        "notes from the meeting",
    ],
)
def test_no_time_in_ordinary_words(query: str) -> None:
    parsed = parse_time(query, NOW)
    assert parsed.range is None
    assert parsed.rest == query


def test_calendar_boundaries_follow_the_callers_offset() -> None:
    """At 01:30 in UTC-5 it is still the 17th there: 'yesterday' is the 16th, local."""
    now = datetime(2026, 3, 18, 1, 30, tzinfo=timezone(timedelta(hours=-5)))
    parsed = parse_time("yesterday", now)
    assert parsed.range == TimeRange(d("2026-03-17T05:00"), d("2026-03-18T05:00"), "yesterday")


def test_naive_now_is_utc() -> None:
    parsed = parse_time("yesterday", NOW.replace(tzinfo=None))
    assert parsed.range is not None and parsed.range.since == d("2026-03-17")


def test_the_first_expression_wins_and_the_rest_keeps_the_other_words() -> None:
    parsed = parse_time("what did we ship last week, not in March 2025", NOW)
    assert parsed.range is not None and parsed.range.expression == "last week"
    assert parsed.rest == "what did we ship, not in March 2025"


def test_impossible_dates_are_not_time() -> None:
    assert parse_time("on 2026-02-30", NOW).range is None
    assert parse_time("on February 30", NOW).range is None


def test_intersect_and_empty() -> None:
    week = TimeRange(d("2026-03-09"), d("2026-03-16"), "last week")
    since = TimeRange(d("2026-03-12"), None)
    both = week.intersect(since)
    assert (both.since, both.until) == (d("2026-03-12"), d("2026-03-16"))
    assert not both.empty
    assert week.intersect(TimeRange(d("2026-03-20"), None)).empty
