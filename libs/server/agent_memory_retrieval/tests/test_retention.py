"""The retention matrix and the episode value rule (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory_retrieval.lifecycle.retention import (
    DEFAULT_POLICY,
    EpisodeValueRule,
    RetentionPolicy,
    check_overrides,
    parse_duration,
)

NOW = datetime(2026, 11, 25, tzinfo=UTC)


def test_durations() -> None:
    assert parse_duration("30d") == timedelta(days=30)
    assert parse_duration("26w") == timedelta(days=182)
    assert parse_duration("5y") == timedelta(days=5 * 365)
    assert parse_duration(" Forever ") is None
    for bad in ("", "30", "d30", "1.5y", "30m", "-3d", "0d", "forever!", "9999999y"):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_defaults_follow_the_issue() -> None:
    m = DEFAULT_POLICY.matrix
    assert m["vector"]["segment"] == m["vector"]["grip"] == "30d"
    assert (m["vector"]["day"], m["vector"]["week"]) == ("365d", "5y")
    assert m["vector"]["month"] == m["vector"]["year"] == "forever"
    assert (m["bm25"]["segment"], m["bm25"]["day"], m["bm25"]["week"]) == ("30d", "180d", "5y")
    assert m["bm25"]["month"] == m["bm25"]["year"] == "forever"


def test_beyond_retention() -> None:
    forty = NOW - timedelta(days=40)
    assert DEFAULT_POLICY.beyond("vector", "segment", forty, NOW)
    assert not DEFAULT_POLICY.beyond("vector", "day", forty, NOW)
    assert not DEFAULT_POLICY.beyond("vector", "year", NOW - timedelta(days=9000), NOW)
    assert DEFAULT_POLICY.beyond("bm25", "day", NOW - timedelta(days=200), NOW)
    assert not DEFAULT_POLICY.beyond("vector", "day", NOW - timedelta(days=200), NOW)


@pytest.mark.parametrize(
    "kind", ["decision", "constraint", "preference", "procedure", "definition"]
)
def test_durable_kinds_never_go_stale_in_either_index(kind: str) -> None:
    """A decision of long ago is still what was decided: its grip and an event noted so stay
    findable; the segment around it and chatter of the same age do not."""
    old = NOW - timedelta(days=4000)
    short = RetentionPolicy({"vector": {"grip": "1d", "event": "1d"}})
    for policy in (DEFAULT_POLICY, short):
        for index in ("vector", "bm25"):
            assert not policy.beyond(index, "grip", old, NOW, kind)
            assert not policy.beyond(index, "event", old, NOW, kind)
            assert policy.beyond(index, "segment", old, NOW, kind)
            assert policy.beyond(index, "grip", old, NOW, "observation")
            assert policy.beyond(index, "event", old, NOW, None)


def test_overrides_win_over_defaults() -> None:
    policy = RetentionPolicy(overrides={"vector": {"segment": "forever"}, "bm25": {"day": "1y"}})
    assert not policy.beyond("vector", "segment", NOW - timedelta(days=4000), NOW)
    assert policy.keep("bm25", "day") == timedelta(days=365)
    assert policy.matrix["bm25"]["segment"] == "30d"  # untouched cells keep their default


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"vectors": {}}, "vectors"),
        ({"vector": {"segmnt": "30d"}}, "vector.segmnt"),
        ({"vector": {"segment": "30 days"}}, "vector.segment"),
        ({"bm25": {"day": 30}}, "bm25.day"),
        ({"bm25": ["30d"]}, "bm25"),
    ],
)
def test_bad_overrides_name_the_cell(raw: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError) as err:
        check_overrides(raw)
    assert str(err.value).startswith(field + ":")


def test_overrides_are_normalised() -> None:
    assert check_overrides({"vector": {"day": " 2Y "}}) == {"vector": {"day": "2y"}}


def test_episode_value_rule() -> None:
    rule = EpisodeValueRule(min_score=0.05, half_life_days=90, min_age_days=30)
    assert rule.score(1.0, "success", 0) == pytest.approx(1.0)
    assert rule.score(1.0, "success", 90) == pytest.approx(0.5)
    assert not rule.prunable(0.01, "failure", 10)  # too young, whatever its score
    assert not rule.prunable(0.2, "failure", 60)  # 0.2 x 0.5 x 0.63 = 0.063
    assert rule.prunable(0.2, "failure", 120)  # 0.2 x 0.5 x 0.40 = 0.040
    assert not rule.prunable(1.0, "success", 60)
    assert rule.prunable(1.0, "success", 400)  # 0.5 ** (400 / 90) = 0.046
