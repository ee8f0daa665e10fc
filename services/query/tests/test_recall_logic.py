"""``recall.logic`` and ``recall.brief.compose``: what is left out, and the budget kept."""

from __future__ import annotations

from typing import Any

from agent_memory_query.recall.brief import compose
from agent_memory_query.recall.logic import (
    HEADER,
    SNIPPET_TOKENS,
    by_period,
    estimate_tokens,
    pack,
    word_count,
)


def result(i: int, text: str, session: str = "s-old", kind: str = "event") -> dict[str, Any]:
    return {
        "id": f"event:default:e{i}" if kind == "event" else f"grip:default:grip:g{i}",
        "type": kind,
        "text": text,
        "title": None,
        "ts": "2026-05-04T10:00:00Z",
        "memory_kind": "decision",
        "session_id": session,
        "event_ids": [f"e{i}"],
        "score": 1.0 / (i + 1),
    }


def test_the_budget_holds_and_each_line_cites_its_memory() -> None:
    results = [result(i, f"memory number {i} " + "word " * 200) for i in range(10)]
    for budget in (100, 300, 600, 1500):
        packed = pack(results, budget_tokens=budget, session_id=None, exclude_ids=(), max_items=6)
        assert estimate_tokens(packed.context) <= budget
        assert packed.lines and all(line.startswith("- [e") for line in packed.lines)
    assert pack(results, budget_tokens=1500, session_id=None, exclude_ids=(), max_items=6).lines


def test_breadth_before_depth_the_budget_buys_snippets_then_the_best_lines_grow() -> None:
    results = [result(i, f"memory number {i} " + "word " * 400) for i in range(20)]
    counts = {}
    for budget in (300, 600, 1500):
        packed = pack(results, budget_tokens=budget, session_id=None, exclude_ids=(), max_items=20)
        counts[budget] = len(packed.lines)
        # every result chosen shows its opening, in rank order
        assert [line.split("] ", 1)[0] for line in packed.lines] == [
            f"- [e{i}" for i in range(len(packed.lines))
        ]
        assert all(f"memory number {i} word" in line for i, line in enumerate(packed.lines))
        assert estimate_tokens(packed.context) <= budget
        # the first line grew past a snippet, never past a third of the budget
        assert SNIPPET_TOKENS < estimate_tokens(packed.lines[0]) <= max(budget // 3, 40)
    assert counts == {300: 4, 600: 9, 1500: 20}
    # the cap holds whatever the budget
    capped = pack(results, budget_tokens=1500, session_id=None, exclude_ids=(), max_items=5)
    assert len(capped.lines) == 5
    # short memories cost less than a snippet: more of them fit
    short = [result(i, f"short memory {i}") for i in range(30)]
    packed = pack(short, budget_tokens=300, session_id=None, exclude_ids=(), max_items=20)
    assert len(packed.lines) > 4 and estimate_tokens(packed.context) <= 300


def test_a_period_question_is_answered_by_its_period_not_by_a_cosine() -> None:
    period = {"since": "2026-07-14T00:00:00Z", "until": "2026-07-15T00:00:00Z"}
    found = {"intent": "time-boxed", "time_range": period, "match_score": None, "results": [1]}
    assert by_period(found)
    assert not by_period({**found, "results": []})  # the period held nothing
    assert not by_period({**found, "time_range": {**period, "relaxed": True}})  # widened
    assert not by_period({**found, "match_score": 0.2})  # words asked: the cosine decides
    assert not by_period({**found, "intent": "answer"})
    assert not by_period({**found, "time_range": None})


def test_own_session_given_and_quoted_results_are_left_out() -> None:
    results = [
        result(0, "said in this very session", session="now"),
        result(1, "already given"),
        result(2, "a grip quoting event two", kind="grip"),
        result(2, "event two itself"),
        result(3, "new and relevant"),
    ]
    packed = pack(results, budget_tokens=600, session_id="now", exclude_ids=["e1"], max_items=6)
    text = packed.context
    assert text.startswith(HEADER)
    assert "this very session" not in text and "already given" not in text
    assert "[grip:g2]" in text and "event two itself" not in text  # quoted by the grip above
    assert "new and relevant" in text
    assert packed.left_out == 3


def test_words_are_counted_as_a_person_would() -> None:
    assert word_count("thanks") == 1
    assert word_count("run the tests") == 3
    assert word_count("why did snake_case win?") == 5


def test_the_brief_puts_rules_first_and_keeps_its_budget() -> None:
    rules = [
        {
            "grip_id": f"grip:g{i}",
            "memory_kind": kind,
            "excerpt": f"{kind} {i} " + "x " * 60,
            "event_ids": [f"e{i}"],
            "ts": f"2026-05-0{i % 9 + 1}T00:00:00Z",
        }
        for i, kind in enumerate(["decision", "preference", "constraint", "procedure"] * 10)
    ]
    ends = [
        {"part": "goal", "event_id": "g1", "ts": "2026-06-01", "text": "make the export fast"},
        {"part": "outcome", "event_id": "o1", "ts": "2026-06-01", "text": "export now 3x faster"},
    ]
    for budget in (300, 1500):
        text, ids = compose("proj", rules, ends, budget)
        assert estimate_tokens(text) <= budget
        assert text.index("Decisions and constraints") < text.index("Last session")
        assert "make the export fast" in text and ids
    assert compose("proj", [], [], 1500) == ("", [])
