"""Would a learned classifier call memories better than the rules? Measured, not shipped.

The rules of ``agent_memory_summarizer.salience`` fit the sentences they were written from and
do not carry to the next project's words (``tests/bench/README.md``, "Choices in plain
words"). This asks whether the product's own sentence model (all-MiniLM-L6-v2, already loaded
by the embedder) with a logistic regression on top does better, on the question the rules
answer worst: is this sentence a memory (any kind but observation) or not.

Every labelled sentence (the written sets and the real ones) is embedded once, with who said
it as three more features. Two readings:

- **across projects**: each real set read so far is left out in turn and predicted by a
  model trained on all the others (the written sets always train), the memories pooled;
- **blind**: the newest held-out set (``REAL_HELDOUT5``), predicted by a model trained on
  everything else, beside the rules on the same set. Look once per model change: it is the
  only set no rule was fitted to.

The rules are printed beside both, but across projects they read sets they were fitted to, so
only the blind line compares them fairly. ``python -m tests.bench.kinds_learned`` (about a
minute: 1,763 sentences through the model on one thread).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory_retrieval.adapters.minilm import MiniLMEmbedder
from agent_memory_summarizer.salience import classify
from tests.bench.bench_coding import (
    HELDOUT,
    REAL_HELDOUT,
    REAL_HELDOUT2,
    REAL_HELDOUT3,
    REAL_HELDOUT4,
    REAL_HELDOUT5,
    REAL_KINDS,
    load_real_kinds,
)
from tests.bench.coding.generate import load_kinds

READ: tuple[tuple[str, Path], ...] = (
    ("kinds_real", REAL_KINDS),
    ("heldout", REAL_HELDOUT),
    ("heldout2", REAL_HELDOUT2),
    ("heldout3", REAL_HELDOUT3),
    ("heldout4", REAL_HELDOUT4),
)
BLIND = ("heldout5", REAL_HELDOUT5)
ROLES = ("user", "assistant", "")


def labelled() -> list[dict[str, Any]]:
    """Every labelled sentence with the name of its set ("written" for the two written ones)."""
    rows = [{**r, "set": "written"} for r in (*load_kinds(), *load_kinds(HELDOUT))]
    for name, path in (*READ, BLIND):
        rows += [{**r, "set": name} for r in load_real_kinds(path)]
    return rows


def features(rows: Sequence[dict[str, Any]], model: MiniLMEmbedder) -> np.ndarray[Any, Any]:
    vectors = np.asarray(model.embed([r["text"] for r in rows]), dtype=np.float32)
    roles = np.asarray([[r.get("role", "") == x for x in ROLES] for r in rows], np.float32)
    return np.hstack([vectors, roles])


def counts(called: np.ndarray[Any, Any], gold: np.ndarray[Any, Any]) -> tuple[int, int, int]:
    """(memories called and right, called, labelled)."""
    return int((called & gold).sum()), int(called.sum()), int(gold.sum())


def line(name: str, hits: int, called: int, gold: int) -> str:
    precision = hits / max(called, 1)
    recall = hits / max(gold, 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-9)
    return (
        f"  {name:34} {hits:3}/{called:3} called, {hits:3}/{gold:3} found: "
        f"precision {precision:.3f} recall {recall:.3f} F1 {f1:.3f}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--c", type=float, default=3.0, help="inverse regularisation")
    parser.add_argument("--threshold", type=float, default=0.5, help="probability of a memory")
    args = parser.parse_args(argv)

    rows = labelled()
    x = features(rows, MiniLMEmbedder.load())
    gold = np.asarray([r["kind"] != "observation" for r in rows])
    rules = np.asarray([classify(r["text"], r.get("role", "")) != "observation" for r in rows])
    sets = np.asarray([r["set"] for r in rows])

    def learned(test: np.ndarray[Any, Any], train: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        from sklearn.linear_model import LogisticRegression  # 1.5 s: not at every collection

        model = LogisticRegression(C=args.c, class_weight="balanced", max_iter=3000)
        model.fit(x[train], gold[train])
        return np.asarray(model.predict_proba(x[test])[:, 1] >= args.threshold)

    print(f"{len(rows)} labelled sentences; memories or not, logistic regression C={args.c}")
    print("across projects (each read set left out in turn; the rules were fitted to these):")
    pooled = {"learned": np.zeros(3, int), "rules": np.zeros(3, int)}
    for name, _ in READ:
        test = sets == name
        pooled["learned"] += counts(learned(test, (sets != name) & (sets != BLIND[0])), gold[test])
        pooled["rules"] += counts(rules[test], gold[test])
    for name, total in pooled.items():
        print(line(name, *(int(v) for v in total)))
    print(f"blind ({BLIND[0]}, no rule fitted to it):")
    test = sets == BLIND[0]
    print(line("learned", *counts(learned(test, ~test), gold[test])))
    print(line("rules", *counts(rules[test], gold[test])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
