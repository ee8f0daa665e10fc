"""The verb that frames a question about us is no word of its answer: ``brainstem.frame``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory_search.brainstem.frame import without_frame
from agent_memory_search.brainstem.query import SearchQuery
from tests.raw_search import insert_messages, raw_search

TS = datetime(2026, 9, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "matched"),
    [
        (
            "What did we decide about building the rock in CI?",
            "What did we building the rock in CI?",
        ),
        ("Which plan did we settle on for the rename?", "Which plan did we for the rename?"),
        ("What have you told me about the log folder?", "What have you me about the log folder?"),
        ("What did we finally agree on for retries?", "What did we finally for retries?"),
        ("What did I say about docstrings?", "What did I docstrings?"),
        # not asked of us: the verb is what the question is about
        (
            "How does the export script pick the current session?",
            "How does the export script pick the current session?",
        ),
        ("What did Caroline decide to do?", "What did Caroline decide to do?"),
        ("Why did the decision log fail to load?", "Why did the decision log fail to load?"),
        # said in the very turns asked about
        ("What did I want the option renamed to?", "What did I want the option renamed to?"),
    ],
)
def test_the_asking_verb_is_dropped_from_what_the_tiers_match(question: str, matched: str) -> None:
    assert without_frame(question) == matched


async def test_asked_what_we_decided_the_search_finds_the_turn_that_settled_it(
    pg_dsn: str, tmp_path: Path
) -> None:
    """Through the real runtime on a real Postgres (no model; the raw scan answers): the turn
    that settled the matter never says "decide"; a turn that does, about something else, led
    while the question's frame was matched as one of its words."""
    rows = [
        ("settled", "user", "It seems like we should build the rock and push it in CI."),
        ("other", "assistant", "You can decide later which rock base to use; I decided on 22.04."),
        ("chatter", "assistant", "The tests passed."),
    ]
    insert_messages(pg_dsn, TS, rows)
    async with raw_search(pg_dsn, tmp_path) as runtime:
        found = await runtime.brainstem.search(
            SearchQuery(
                "What did we decide about building the rock in CI?",
                tenant="t",
                now=TS + timedelta(days=2),
            )
        )
    assert found.results[0].doc.event_ids == ("settled",)
