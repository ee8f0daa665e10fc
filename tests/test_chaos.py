"""The short chaos run (``make chaos`` runs the full one): events posted while ``kill -9`` hits
the pipeline services, nats-server and Postgres; nothing lost, doubled, unindexed or
dead-lettered. See tests/chaos.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos import SHORT, run

pytestmark = pytest.mark.slow


@pytest.mark.timeout(300)
def test_short_chaos_loses_doubles_and_dead_letters_nothing(tmp_path: Path) -> None:
    figures = run(SHORT, tmp_path)
    print(figures.report())
    assert sum(figures.kills.values()) == SHORT.kills, figures.report()
    assert figures.accepted == figures.posted
    assert not figures.failures(), figures.report()
