"""The dedup rules as pure functions: what counts as a repeat of an original, and what not."""

from __future__ import annotations

from agent_memory_recorder.dedup import (
    DedupIndex,
    DedupRules,
    Seen,
    cosine,
    could_match,
    fingerprint,
    normalise,
)

RULES = DedupRules()
KEY = ("t", "p", "s")
OUTPUT = (
    "============ test session starts ============ collected 42 items "
    "tests/test_payments.py ........F... FAILED tests/test_payments.py::test_refund "
    "AssertionError: expected 200 got 500 in 1.92s run at 10:41:07"
)


def fp(
    event_id: str, text: str, ts: float = 0.0, role: str = "tool", type_: str = "tool_result"
) -> Seen:
    seen = fingerprint(event_id, ts, role, type_, text, RULES)
    assert seen is not None
    return seen


def test_normalise_folds_case_width_and_whitespace() -> None:
    assert normalise("  Fix THE\tfailing\n\ntest ") == "fix the failing test"
    assert normalise("\uff21\uff22\uff23") == "abc"  # full-width ABC


def test_exact_after_normalisation_is_a_duplicate() -> None:
    index = DedupIndex(RULES)
    index.load(KEY, [fp("a", "Please fix the failing refund test", role="user", type_="message")])
    verdict = index.check(
        KEY, fp("b", "please  fix the failing REFUND test", 30, role="user", type_="message")
    )
    assert verdict is not None
    assert (verdict.duplicate_of, verdict.method, verdict.similarity) == ("a", "exact", 1.0)


def test_resent_tool_output_with_a_new_timestamp_is_a_near_duplicate() -> None:
    index = DedupIndex(RULES)
    index.load(KEY, [fp("a", OUTPUT)])
    again = fp("b", OUTPUT.replace("10:41:07", "10:43:55"), 160)
    verdict = index.check(KEY, again)
    assert verdict is not None and verdict.method == "near" and verdict.similarity >= 0.85
    assert cosine(fp("a", OUTPUT), again) == verdict.similarity or verdict.similarity < 1


def test_short_texts_differing_by_one_word_are_not_duplicates() -> None:
    index = DedupIndex(RULES)
    index.load(KEY, [fp("a", "event 1: the events table is append-only")])
    assert index.check(KEY, fp("b", "event 2: the events table is append-only")) is None


def test_outside_the_window_other_role_type_or_session_is_not_a_duplicate() -> None:
    index = DedupIndex(RULES)
    index.load(KEY, [fp("a", OUTPUT)])
    assert index.check(KEY, fp("b", OUTPUT, RULES.window_s + 1)) is None
    assert index.check(KEY, fp("c", OUTPUT, type_="message")) is None
    assert index.check(("t", "p", "other"), fp("d", OUTPUT)) is None
    assert index.check(KEY, fp("a", OUTPUT)) is None  # an event never repeats itself


def test_session_boundaries_and_very_short_texts_are_never_compared() -> None:
    assert fingerprint("a", 0, "system", "session_start", "session started in /repo", RULES) is None
    assert fingerprint("a", 0, "user", "message", "yes", RULES) is None


def test_distinct_outputs_are_originals() -> None:
    index = DedupIndex(RULES)
    index.load(KEY, [fp("a", OUTPUT)])
    other = (
        "ruff check . found 3 errors: B006 Do not use mutable data structures for argument "
        "defaults in src/payments/api.py line 12, E501 line too long, F401 unused import os; "
        "run ruff check --fix to apply the safe fixes and then re-run the linter once more"
    )
    assert index.check(KEY, fp("b", other)) is None


def test_the_index_is_bounded() -> None:
    index = DedupIndex(DedupRules(recent_per_session=2, sessions_cached=2))
    for i in range(3):
        index.add(KEY, fp(f"e{i}", f"{OUTPUT} variant {i} " + "word " * i))
    assert index.missing([KEY]) == []
    for i in range(3):
        index.add((f"t{i}", "p", "s"), fp(f"x{i}", OUTPUT))
    assert index.missing([KEY]) == [KEY]  # evicted: reloaded from Postgres when next needed


def test_the_size_bound_never_rules_out_a_match() -> None:
    """``could_match`` skips pairs by size alone: it must hold whenever the cosine does."""
    base = [f"w{i}" for i in range(60)]
    original = fp("a", " ".join(base))
    for extra in range(0, 80, 4):
        for dropped in range(0, 40, 4):
            other = fp("b", " ".join(base[dropped:] + [f"x{i}" for i in range(extra)]))
            if cosine(original, other) >= RULES.cosine:
                assert could_match(original, other, RULES.cosine)
    assert not could_match(
        original, fp("c", " ".join(base * 1 + [f"y{i}" for i in range(60)])), RULES.cosine
    )


def test_punctuation_does_not_split_a_repeat_from_its_original() -> None:
    index = DedupIndex(RULES)
    index.load(KEY, [fp("a", OUTPUT)])
    verdict = index.check(KEY, fp("b", OUTPUT.replace(" ", ", "), 30))
    assert verdict is not None and verdict.method == "near" and verdict.similarity == 1.0
