"""The phases ``agent-memory status`` and ``import --wait`` print from a ``/v1/status`` answer
(issue 53, point 3): the segments closing hold their phase back even when every consumer has
caught up, and what is left is shown when the status gives counts (local mode) or not."""

from __future__ import annotations

from typing import Any

from agent_memory_cli.phases import PHASES, phase_lines


def status(closing: int, opened: int, counts: bool = True, **pending: int) -> dict[str, Any]:
    consumers = []
    for _, names in PHASES:
        for name in names:
            left = pending.get(name.replace("-", "_"), 0)
            c: dict[str, Any] = {"name": name, "stream": "X", "exists": True, "caught_up": not left}
            if counts:
                c.update(pending=left, ack_pending=0)
            consumers.append(c)
    return {
        "consumers": consumers,
        "events_stored": 120,
        "duplicates_stored": 0,
        "segments_open": opened,
        "segments_closing": closing,
        "drained": False,
    }


def line(lines: list[str], phase: str) -> str:
    return next(x for x in lines if x.strip().startswith(phase))


def test_closing_segments_keep_their_phase_working_with_every_consumer_caught_up() -> None:
    lines = phase_lines(status(closing=3, opened=4))
    assert line(lines, "segments").split() == ["segments", "working", "4", "open,", "3", "closing"]
    assert line(lines, "events stored").split()[2:] == ["done", "120", "stored"]
    assert "done" in line(lines, "summaries (TOC)")


def test_what_is_left_is_counted_in_local_mode_and_only_named_with_tokens() -> None:
    lines = phase_lines(status(closing=0, opened=1, embedder=40, embedder_toc=2))
    assert line(lines, "segments").split()[1:] == ["done", "1", "open,", "0", "closing"]
    assert line(lines, "vectors").split()[1:] == ["working", "42", "message(s)", "to", "go"]
    lines = phase_lines(status(closing=0, opened=0, counts=False, embedder=40))
    assert line(lines, "vectors").split()[1:] == ["working"]


def test_a_consumer_not_created_yet_is_not_started() -> None:
    answer = status(closing=0, opened=0)
    answer["consumers"] = [c for c in answer["consumers"] if c["name"] != "topics"]
    assert line(phase_lines(answer), "topics").split()[1:] == ["not", "started"]
