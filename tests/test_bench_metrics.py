"""The scoring of bench-coding and bench-summary (tests/bench/metrics.py)."""

from __future__ import annotations

import pytest

from tests.bench.metrics import (
    found_at,
    keyphrase_title,
    kind_scores,
    lead,
    ranked_ids,
    rouge,
    textrank,
    title_noise,
)


def test_ranked_ids_flatten_in_rank_order_without_repeats() -> None:
    answer = {"results": [{"event_ids": ["a", "b"]}, {"event_ids": ["b", "c"]}, {"event_ids": []}]}
    assert ranked_ids(answer) == ["a", "b", "c"]
    assert ranked_ids({"results": []}) == []


def test_found_at_k_is_any_gold_among_the_first_k() -> None:
    ranked = ["x", "y", "gold2", "z"]
    assert not found_at(ranked, ["gold1", "gold2"], 2)
    assert found_at(ranked, ["gold1", "gold2"], 3)
    assert found_at(ranked, ["gold2"], 10)
    assert not found_at([], ["gold"], 5)


@pytest.mark.parametrize(
    ("title", "reason"),
    [
        ("Idempotency key, ledger, refunds", None),
        ("Tue 2026-07-14: dunning, scheduler, webhook", None),
        ("Week 2026-W29 (Jul 13 - Jul 19): dunning, snapshots", None),
        ("July 2026: dunning, snapshots, cargo insta", None),
        ("Content type, ledger, build", None),
        ("src/payments/api/refunds.py, ledger", "path"),
        ("Refunds.py, ledger", "path"),
        ("Ledger, 3f9a2c1d, refunds", "hash"),
        ("Merge, toolu_01abc", "hash"),
        ("[REDACTED:aws_access_key], key", "placeholder"),
        ("Api py, refunds", "fragment"),
        ("Structuredpatch, refunds", "fragment"),
        ("Refunds, oldString", "fragment"),
        ("Go version, ledger", None),
        ("We go with RabbitMQ for payment events", None),
        ("User: fix the ledger", "speaker"),
        ("2026: file_path, old_string, new_string", "fragment"),
        ("We switch the config file from YAML to TOML", None),
        ("Config yaml, toml", "keyword"),  # "toml" alone: an extension and nothing else
        ("Build output, error log", None),  # extensions in the corpus, words here
        ("test_refund_twice fails on CI but passes on my machine", None),  # named in a sentence
        ("Def, self, none", "keyword"),
        ("Tue 2026-07-14: end, true, pane", "keyword"),
    ],
)
def test_title_noise(title: str, reason: str | None) -> None:
    assert title_noise(title) == reason


def test_kind_scores_per_class_and_macro() -> None:
    gold = ["a", "a", "b", "b"]
    predicted = ["a", "b", "b", "b"]
    s = kind_scores(gold, predicted, ["a", "b", "c"])
    assert (s["a"].precision, s["a"].recall) == (1.0, 0.5)
    assert s["a"].f1 == pytest.approx(2 / 3)
    assert s["b"].precision == pytest.approx(2 / 3)
    assert s["b"].recall == 1.0
    assert s["c"].f1 == 0.0  # never gold, never predicted: counts as 0 in the macro average
    assert s["macro"].f1 == pytest.approx((2 / 3 + 0.8 + 0.0) / 3)
    with pytest.raises(ValueError):
        kind_scores(["a"], [], ["a"])


def test_rouge_wrapper() -> None:
    same = rouge("The cat sat on the mat.", "the cat sat on the mat")
    assert same == {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0}
    scores = rouge("the cat sat on the mat", "the cat lay on a mat")
    # unigrams: the, cat, on, mat shared (4 of 6 each side); bigrams: "the cat", "on the"/"a"...
    assert scores["rouge1"] == pytest.approx(4 / 6)
    assert scores["rouge2"] == pytest.approx(1 / 5)
    assert scores["rougeL"] == pytest.approx(4 / 6)
    assert rouge("cats running", "cat runs")["rouge1"] == 1.0  # Porter stemming
    assert rouge("something", "")["rouge1"] == 0.0


def test_lead_and_textrank() -> None:
    sentences = [
        "Hello there.",
        "The refund job retries failed refunds.",
        "Failed refunds are retried by the refund job every hour.",
        "The weather is nice.",
        "The refund job logs every failed refund it retries.",
    ]
    words = [[w.strip(".").lower() for w in s.split()] for s in sentences]
    assert lead(sentences, 3) == sentences[:3]
    picked = textrank(sentences, 2, words)
    assert len(picked) == 2
    assert "Hello there." not in picked and "The weather is nice." not in picked
    assert picked == [s for s in sentences if s in picked]  # in their original order
    assert textrank(sentences[:2], 3, words[:2]) == sentences[:2]


@pytest.mark.parametrize(
    ("title", "listed"),
    [
        ("Claude code, ultrathink, chat", True),
        ("Session, perfect, metadata", True),
        ("Test scenario, claude code stores, code stores session", True),
        ("Does it check the pid of the current session?", False),
        ("Slow reconciliation job — partial index on payments(status), 9 s -> 40 ms", False),
        ("Updated the README so that the export names the session id", False),
        ("Export the current Claude Code session to a timestamped folder with…", False),
        ("Caroline, adoption", False),  # two phrases: too few to tell
    ],
)
def test_keyphrase_title(title: str, listed: bool) -> None:
    assert keyphrase_title(title) == listed
