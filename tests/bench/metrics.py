"""The scoring shared by ``bench_coding`` and ``bench_summary``: pure functions, unit-tested in
``tests/test_bench_metrics.py``.

- ``ranked_ids`` / ``found_at``: the LoCoMo metric of ``bench_locomo`` (each answer's
  ``event_ids`` flattened in rank order, repeats dropped; found@k = any gold id among the first
  k ids).
- ``title_noise``: whether a TOC title is a path, a hash, a placeholder or keyword noise (the
  detector is defined below, word lists included, so a reader can check every verdict).
- ``kind_scores``: precision, recall and F1 per class, and the macro average.
- ``rouge``: ROUGE-1/2/L F1 as ROUGE-1.5.5 computes them (Google's ``rouge-score`` package,
  Porter stemmer on), and two extractive baselines: ``lead`` and ``textrank``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# --------------------------------------------------------------------------------------------
# Retrieval
# --------------------------------------------------------------------------------------------


def ranked_ids(answer: Mapping[str, Any]) -> list[str]:
    """Every result's event ids in rank order, repeats dropped."""
    out: dict[str, None] = {}
    for result in answer.get("results", []):
        for event_id in result.get("event_ids", []):
            out.setdefault(event_id, None)
    return list(out)


def found_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> bool:
    """True when any gold id is among the first ``k`` ranked ids."""
    wanted = set(gold)
    return any(event_id in wanted for event_id in ranked[:k])


# --------------------------------------------------------------------------------------------
# TOC title noise
# --------------------------------------------------------------------------------------------

# A path: two or more segments joined by "/" (src/payments/api.py, ~/.config/x), or a file name
# with a source/config extension (api.py, pyproject.toml).
PATH_RX = re.compile(
    r"(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+"
    r"|\b[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|rs|go|rb|java|toml|json|jsonl|ya?ml|md|sql|txt|cfg|ini|"
    r"lock|sh|env|log|csv)\b",
    re.IGNORECASE,
)
# A hash or id: a run of at least 7 hex digits holding a digit and a letter (commit 3f9a2c1,
# a sha256), or a tool-use id (toolu_01...).
HASH_RX = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b|\btoolu_\w+", re.I)
PLACEHOLDER_RX = re.compile(r"\[REDACTED|\bredacted\b", re.IGNORECASE)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that never name anything a person looks for in a table of contents: pieces of a path or
# a file name, and field names of the tool payloads the hooks record as JSON (Read, Edit, Bash
# results). Any of them in a key phrase makes it noise ("src payments" is src/payments/...).
FRAGMENT_WORDS = _words(
    """py pyi pyc ts tsx js jsx rs toml json jsonl yaml yml md sql txt cfg ini sh src libs usr
    tmp venv site-packages node_modules file_path filepath old_string oldstring new_string
    newstring structuredpatch originalfile numlines startline totallines stdout stderr isimage
    toolu tool_use_id is_error oldstart oldlines newstart newlines replaceall usermodified"""
)
# Words that are noise only when a phrase holds nothing else: programming-language keywords
# and the English words that tool payloads repeat.
KEYWORD_WORDS = _words(
    """def self cls none true false null nil end elif else async await return import from
    const let var fn func lambda kwargs args init __init__ str int float dict bool tuple
    println printf echo fi esac then do done sudo go rb lib bin dist interrupted
    command description"""
)
_CALENDAR_PREFIX = re.compile(
    r"^(?:[A-Z][a-z]{2} \d{4}-\d{2}-\d{2}|Week \d{4}-W\d{2}[^:]*|\w+ \d{4}|\d{4})"
)


def _bare(word: str) -> str:
    return word.lower().strip("_-.")


def _format_named(word: str) -> bool:
    """ "YAML" in "from YAML to TOML" names a format in prose, not a path's suffix."""
    bare = word.strip("_-.,:;")
    return len(bare) > 2 and bare.isupper()


def _keyword_word(word: str) -> bool:
    w = _bare(word)
    return not w or w in KEYWORD_WORDS or w in FRAGMENT_WORDS or w.isdigit()


def title_noise(title: str) -> str | None:
    """Why ``title`` is noise, or None. The first that applies:

    - ``placeholder``: a redaction placeholder ("[REDACTED:...]", "redacted");
    - ``path``: ``PATH_RX`` (a/b/c, api.py);
    - ``hash``: ``HASH_RX`` (7+ hex digits with a digit and a letter, a tool-use id);
    - ``fragment``: a word of ``FRAGMENT_WORDS`` (a piece of a path, a tool-payload field; a
      format named in capitals, "YAML", is prose);
    - ``keyword``: one of its comma-separated phrases holds only ``KEYWORD_WORDS`` and numbers.

    A title is the node's first three key phrases, after a calendar label for rollups
    ("Tue 2026-07-14: ..."); the label is left out.
    """
    body = title
    head, sep, rest = title.partition(": ")
    if sep and _CALENDAR_PREFIX.match(head):
        body = rest
    if PLACEHOLDER_RX.search(body):
        return "placeholder"
    if PATH_RX.search(body):
        return "path"
    if HASH_RX.search(body):
        return "hash"
    phrases = [p.split() for p in body.split(",")]
    if any(_bare(w) in FRAGMENT_WORDS and not _format_named(w) for ws in phrases for w in ws):
        return "fragment"
    if any(words and all(_keyword_word(w) for w in words) for words in phrases):
        return "keyword"
    return None


def keyphrase_title(title: str) -> bool:
    """Whether a segment's title is a list of key phrases ("Claude code, ultrathink, chat",
    "Session, perfect, metadata"): three or more comma-separated phrases of at most four words
    and no sentence. Not noise by ``title_noise``'s rules, yet it names no piece of work: the
    summarizer's fallback when nobody asked for anything it could quote."""
    if " — " in title or title.rstrip().endswith(("?", ".", "!", "…")):
        return False
    phrases = [p.split() for p in title.split(", ")]
    return len(phrases) >= 3 and all(1 <= len(words) <= 4 for words in phrases)


# --------------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float
    support: int
    predicted: int


def kind_scores(
    gold: Sequence[str], predicted: Sequence[str], kinds: Sequence[str]
) -> dict[str, PRF]:
    """Precision, recall, F1 per kind (0 where undefined) and their unweighted mean under the
    key ``macro`` (support and predicted: the totals)."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    out: dict[str, PRF] = {}
    for kind in kinds:
        tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g == kind and p == kind)
        n_gold = sum(1 for g in gold if g == kind)
        n_pred = sum(1 for p in predicted if p == kind)
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / n_gold if n_gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out[kind] = PRF(precision, recall, f1, n_gold, n_pred)
    per = [out[k] for k in kinds]
    out["macro"] = PRF(
        sum(p.precision for p in per) / len(per),
        sum(p.recall for p in per) / len(per),
        sum(p.f1 for p in per) / len(per),
        len(gold),
        len(predicted),
    )
    return out


# --------------------------------------------------------------------------------------------
# ROUGE and the extractive baselines
# --------------------------------------------------------------------------------------------

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


def rouge(reference: str, candidate: str) -> dict[str, float]:
    """ROUGE-1, ROUGE-2 and ROUGE-L F1 of ``candidate`` against ``reference`` (rouge-score,
    stemmed, the ROUGE-1.5.5 tokenization: lower case, non-alphanumerics as spaces)."""
    from rouge_score import rouge_scorer  # imported on use: only the summary benchmark needs it

    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)
    scores = scorer.score(reference, candidate)
    return {name: float(scores[name].fmeasure) for name in ROUGE_TYPES}


def lead(sentences: Sequence[str], n: int = 3) -> list[str]:
    """The first ``n`` sentences."""
    return list(sentences[:n])


def textrank(
    sentences: Sequence[str],
    n: int,
    words: Sequence[Sequence[str]],
    damping: float = 0.85,
    iterations: int = 100,
) -> list[str]:
    """TextRank (Mihalcea and Tarau, 2004): sentences as nodes, edges weighted by the shared
    words over ``log|a| + log|b|``, PageRank by power iteration; the ``n`` best, shown in their
    original order (ties to the earlier sentence). ``words[i]``: the content words of sentence i.
    """
    count = len(sentences)
    if count <= n:
        return list(sentences)
    sets = [set(w) for w in words]
    weights = [[0.0] * count for _ in range(count)]
    for i in range(count):
        for j in range(i + 1, count):
            shared = len(sets[i] & sets[j])
            if not shared:
                continue
            norm = math.log(len(words[i]) + 1) + math.log(len(words[j]) + 1)
            weights[i][j] = weights[j][i] = shared / norm if norm else 0.0
    out_sum = [sum(row) for row in weights]
    score = [1.0 / count] * count
    for _ in range(iterations):
        new = [
            (1 - damping) / count
            + damping
            * sum(weights[j][i] / out_sum[j] * score[j] for j in range(count) if weights[j][i])
            for i in range(count)
        ]
        delta = sum(abs(a - b) for a, b in zip(new, score, strict=True))
        score = new
        if delta < 1e-6:
            break
    best = sorted(range(count), key=lambda i: (-score[i], i))[:n]
    return [sentences[i] for i in sorted(best)]
