"""The learned-classifier measurement reads every labelled set once, each under its name, and
counts memories the way the rules' report does (``tests.bench.kinds_learned``)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from tests.bench.kinds_learned import BLIND, READ, counts, labelled, line


def test_every_labelled_sentence_is_read_once_under_its_set() -> None:
    rows = labelled()
    sizes = Counter(r["set"] for r in rows)
    assert set(sizes) == {"written", BLIND[0], *(name for name, _ in READ)}
    assert sizes["written"] == 422 + 63
    assert sizes[BLIND[0]] >= 250
    assert all(r["kind"] and r["text"] for r in rows)


def test_counts_are_hits_called_and_labelled() -> None:
    called = np.asarray([True, True, False, False])
    gold = np.asarray([True, False, True, False])
    assert counts(called, gold) == (1, 2, 2)
    assert "precision 0.500 recall 0.500 F1 0.500" in line("x", 1, 2, 2)
    assert "precision 0.000 recall 0.000 F1 0.000" in line("none called", 0, 0, 3)
