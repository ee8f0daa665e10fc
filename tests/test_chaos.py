"""The short chaos run (``make chaos`` runs the full one): events posted while ``kill -9`` hits
the pipeline services, nats-server and Postgres; nothing lost, doubled, unindexed or
dead-lettered. See tests/chaos.py."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.chaos import SHORT, Figures, Plan, make_events, pruner_runs, run


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_short_chaos_loses_doubles_and_dead_letters_nothing(tmp_path: Path) -> None:
    figures = run(SHORT, tmp_path)
    print(figures.report())
    assert sum(figures.kills.values()) == SHORT.kills, figures.report()
    assert figures.accepted == figures.posted
    assert not figures.failures(), figures.report()


def test_every_planned_event_is_recent_and_in_the_past() -> None:
    """The retention pruner runs during a chaos run: every event must be well within the
    shortest retention (30 days), or the pruner rightly takes it out of the indexes and the
    audit counts it unindexed."""
    now_ms = time.time() * 1000
    for plan in (SHORT, Plan()):
        stamps = [e["ts"] for batches in make_events(plan) for b in batches for e in b]
        assert len(stamps) == plan.events
        assert now_ms - 2 * 86_400_000 < min(stamps) <= max(stamps) < now_ms


def test_a_run_counts_the_pruners_runs_and_what_they_removed(tmp_path: Path) -> None:
    log = tmp_path / "pruner.log"
    log.write_text(
        "\n".join(
            [
                '{"entries": 3, "dry_run": false, "event": "pruner.cleanup"}',
                '{"entries": 9, "dry_run": true, "event": "pruner.cleanup"}',
                '{"entries": 0, "dry_run": false, "event": "pruner.cleanup"}',
                '{"error": "x", "event": "pruner.scheduled_run_failed"}',
                "not json at all",
            ]
        )
    )
    assert pruner_runs(log) == (2, 3)
    assert pruner_runs(tmp_path / "absent.log") == (0, 0)
    assert "the retention pruner never ran" in Figures(accepted=1, drained=True).failures()
    removed = Figures(accepted=1, drained=True, pruner_runs=1, pruned=4).failures()
    assert removed == ["entries removed by the retention pruner: 4"]
