"""The pure parts of bench-scale (tests/bench/bench_scale.py): its events and its plot."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from tests.bench.bench_scale import (
    MAX_CHARS,
    MIN_CHARS,
    Sample,
    busy_rate,
    caught_up_at,
    embedding_texts,
    event_stream,
    fit,
    load_pools,
    slowest_stage,
    write_plot,
)

POOLS = load_pools(locomo=None)  # the repository's own texts only: the same on every machine


def first(n: int, seed: int) -> list[dict[str, Any]]:
    return list(itertools.islice(event_stream(seed, POOLS), n))


def test_event_texts_are_50_to_2000_characters_and_ids_are_unique() -> None:
    events = first(5000, 7)
    lengths = [len(e["text"]) for e in events]
    assert min(lengths) >= MIN_CHARS
    assert max(lengths) <= MAX_CHARS
    assert max(lengths) > 1000  # the long tail is there
    assert len({e["event_id"] for e in events}) == len(events)
    assert len({e["session_id"] for e in events}) > 30
    assert len({e["project_id"] for e in events}) > 10
    assert {e["role"] for e in events} == {"user", "assistant", "tool"}


def test_the_stream_is_the_same_for_a_seed_and_differs_across_seeds() -> None:
    assert first(800, 3) == first(800, 3)
    assert [e["text"] for e in first(800, 3)] != [e["text"] for e in first(800, 4)]


def test_sessions_are_consecutive_and_in_time_order() -> None:
    events = first(3000, 5)
    seen: set[str] = set()
    for previous, event in itertools.pairwise(events):
        if event["session_id"] != previous["session_id"]:
            assert event["session_id"] not in seen
            seen.add(previous["session_id"])
        else:
            assert event["ts"] > previous["ts"]


@pytest.mark.parametrize("target", [50, 51, 80, 300, 2000])
def test_fit_cuts_to_the_target_and_never_below_the_minimum(target: int) -> None:
    text = "word " * 600
    assert MIN_CHARS <= len(fit(text, target)) <= target
    assert fit("short enough text that stays as it is, whole.", 300).endswith("whole.")


def test_embedding_texts_carry_the_speaker_and_the_previous_turn_of_the_session() -> None:
    events = [
        {"session_id": "a", "text": "Do you have dogs?", "metadata": {"speaker": "Ann"}},
        {"session_id": "a", "text": "Yes, three of them!", "metadata": {"speaker": "Bob"}},
        {"session_id": "b", "text": "A new session.", "metadata": {}},
    ]
    assert embedding_texts(events) == [
        "Ann\nDo you have dogs?",
        "Bob\nYes, three of them!\nAnn: Do you have dogs?",
        "A new session.",
    ]


def sample(t: float, backlog: int, floor: int) -> Sample:
    return Sample(t=t, stored=0, backlog={"embedder": backlog}, floor={"embedder": floor})


def test_rates_count_only_the_time_a_consumer_had_a_backlog() -> None:
    samples = [sample(0, 100, 0), sample(1, 50, 50), sample(2, 0, 100), sample(10, 0, 100)]
    assert busy_rate(samples, "embedder") == pytest.approx(50.0)
    assert caught_up_at(samples, "embedder") == 2
    assert caught_up_at([sample(0, 0, 0)], "embedder") is None


def test_a_rate_of_two_consumers_counts_both_while_either_is_behind() -> None:
    def both(t: float, events: tuple[int, int], toc: tuple[int, int]) -> Sample:
        backlog = {"embedder": events[0], "embedder-toc": toc[0]}
        return Sample(
            t=t, stored=0, backlog=backlog, floor={"embedder": events[1], "embedder-toc": toc[1]}
        )

    samples = [both(0, (10, 0), (5, 0)), both(1, (0, 10), (5, 0)), both(2, (0, 10), (0, 5))]
    assert busy_rate(samples, "embedder", "embedder-toc") == pytest.approx(7.5)
    assert busy_rate(samples, "embedder") == pytest.approx(10.0)


def test_a_segment_fed_consumer_may_finish_a_little_after_the_embedder() -> None:
    def consumers(**drain: float) -> dict[str, dict[str, float | None]]:
        return {name: {"drain_s": s, "busy_msgs_per_s": None} for name, s in drain.items()}

    late_summary = consumers(embedder=100.0, recorder=1.0, summarizer=120.0)
    assert slowest_stage(late_summary) == ("summarizer", 20.0, True)
    slow_recorder = consumers(embedder=100.0, recorder=101.0, summarizer=100.0)
    assert slowest_stage(slow_recorder) == ("recorder", 1.0, False)


def test_the_plot_is_a_png(tmp_path: Path) -> None:
    path = tmp_path / "scale.png"
    lines: dict[str, list[float | None]] = {
        "search full p50": [12.0, 15.0, 19.0],
        "search full p95": [30.0, 41.0, 55.0],
        "TOC descent p50": [8.0, None, 9.5],
    }
    write_plot(path, [10_000, 100_000, 1_000_000], lines)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 5_000
