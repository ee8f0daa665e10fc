"""A question about what the user said gets the user's own prompt first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory_retrieval.docs import IndexDoc
from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.own_words import asks_own_words, prefer_own_words
from agent_memory_search.brainstem.query import SearchQuery
from tests.raw_search import insert_messages, raw_search

TS = datetime(2026, 9, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What did I say about running several sessions at the same time?", True),
        ("Besides Modbus, which connection type did I want the mock to support?", True),
        ("What did I tell you about the log directory?", True),
        ("What was my request about emojis in the docs?", True),
        ("Remind me what I asked for in the README", True),
        ("What did we decide about the schema?", False),
        ("Which command did I run to merge the heads?", False),  # a command, not words
        ("Why did the export fail?", False),
        ("What did the user want?", False),  # someone else, by name or role
    ],
)
def test_what_asks_for_the_users_own_words(question: str, asks: bool) -> None:
    assert asks_own_words(question) is asks


def cand(event_id: str, score: float, type_: str = "event") -> Candidate:
    doc = IndexDoc(
        id=f"{type_}:t:{event_id}", type=type_, tenant="t", project_id="p", agent_id="a",
        session_id="s", ts=TS, level=type_, text=event_id, event_ids=(event_id,),
    )  # fmt: skip
    return Candidate(id=doc.id, doc=doc, fused=score, score=score)


def test_the_users_prompt_outranks_the_replies_that_repeat_it_and_is_not_stale() -> None:
    reply, prompt, grip = cand("reply", 1.0), cand("prompt", 0.8), cand("prompt", 0.9, "grip")
    prompt.factors["staleness"] = 0.6
    roles = {"reply": "assistant", "prompt": "user"}
    ranked = prefer_own_words([reply, prompt, grip], roles=roles, factor=1.5)
    assert [c.id for c in ranked] == ["event:t:prompt", "event:t:reply", "grip:t:prompt"]
    assert prompt.factors == {"staleness": 1.0, "own_words": 1.5}
    assert prompt.score == pytest.approx(0.8 * 1.5 / 0.6)
    assert "own_words" not in reply.factors and "own_words" not in grip.factors


async def test_asked_what_i_said_the_search_puts_my_prompt_first(
    pg_dsn: str, tmp_path: Path
) -> None:
    """Through the real runtime on a real Postgres (no model; the raw scan answers): the
    replies say the words of the question more often than the prompt, and lead until the
    question asks what the user said."""
    rows = [
        ("prompt", "user", "Keep the session exports out of the repository, in a folder of mine."),
        (
            "reply1",
            "assistant",
            "The session exports now go to a folder outside the repository;"
            " session exports are never written to the repository.",
        ),
        (
            "reply2",
            "assistant",
            "I moved the session exports: the repository holds no session exports any more.",
        ),
    ]
    insert_messages(pg_dsn, TS, rows)
    now = TS + timedelta(days=2)
    async with raw_search(pg_dsn, tmp_path) as runtime:
        plain = await runtime.brainstem.search(
            SearchQuery("session exports repository", tenant="t", now=now)
        )
        assert plain.results[0].doc.event_ids == ("reply1",)
        mine = await runtime.brainstem.search(
            SearchQuery("What did I say about session exports and the repository?", "t", now=now)
        )
        assert mine.results[0].doc.event_ids == ("prompt",)
        assert mine.results[0].factors["own_words"] == pytest.approx(1.5)
        lookup = runtime.brainstem.role_lookup
        assert lookup is not None
        assert await lookup("t", ["prompt", "reply1", "gone"]) == {
            "prompt": "user",
            "reply1": "assistant",
        }
        assert await lookup("other", ["prompt"]) == {}
