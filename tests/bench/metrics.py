"""The scoring shared by ``bench_coding`` and ``bench_summary``: pure functions, unit-tested in
``tests/test_bench_metrics.py``.

- ``ranked_ids`` / ``found_at``: the LoCoMo metric of ``bench_locomo`` (each answer's
  ``event_ids`` flattened in rank order, repeats dropped; found@k = any gold id among the first
  k ids).
- ``title_noise``: whether a TOC title is a path, a hash, a placeholder, a piece of code or of
  the transcript format, or reserved words (defined below from sources independent of the
  product's own filters, so a reader can check every verdict and the product cannot pass it
  by construction).
- ``kind_scores``: precision, recall and F1 per class, and the macro average.
- ``rouge``: ROUGE-1/2/L F1 as ROUGE-1.5.5 computes them (Google's ``rouge-score`` package,
  Porter stemmer on), and two extractive baselines: ``lead`` and ``textrank``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import keyword
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
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


# Why no word list of the product's: the summarizer filters titles with its own lists of path
# pieces, payload fields and code words (``agent_memory_summarizer.keyphrases``, ``headline``).
# A detector that used the same words could only ever find the product's misses of its own
# list, so "0 noisy titles" would hold by construction (issue 52); ``tests/leak_lint.py`` fails
# ``make lint`` when a benchmark module copies or imports one. Noise is defined here from other
# sources: the shape of a word, the transcript format itself (the field names, file names and
# roles of the transcripts the benchmarks replay, read from them: Claude Code's JSON lines and
# the other runtimes' JSON documents) and the reserved words of the languages as their own
# definitions give them.

TRANSCRIPTS = (
    Path(__file__).resolve().parent / "real" / "transcripts",
    Path(__file__).resolve().parent / "coding" / "transcripts",
)
# an identifier in a title: snake_case, camelCase, a dotted name (file_path, oldString, os.path)
_IDENTIFIER_RX = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|^[a-z]+[A-Z]|[a-z]\.[a-z]")
_FIELD_NAME_RX = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*$")
_PATH_KEYS = ("file_path", "filePath", "notebook_path", "path")
_JSON_LITERALS = ("true", "false", "null")  # RFC 8259, section 3
# bash's reserved words, from its manual ("Reserved Words"): the words among them that are not
# Python keywords already
_BASH_RESERVED = "then fi until do done esac coproc select function time"


@dataclass(frozen=True)
class TranscriptFormat:
    """What the transcripts' own format says about a title's words."""

    fields: frozenset[str]  # compound field names, lower case, separators dropped
    files: frozenset[str]  # the file names (lower case) of the paths the tools were given
    roles: frozenset[str]  # the speakers of the format ("user", "assistant", ...)

    @property
    def extensions(self) -> frozenset[str]:
        return frozenset(name.rsplit(".", 1)[-1] for name in self.files if "." in name)


def _walk_format(value: Any, fields: set[str], files: set[str], roles: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if _FIELD_NAME_RX.match(key) and ("_" in key or re.search(r"[a-z][A-Z]", key)):
                fields.add(key.lower().replace("_", ""))
            if key in _PATH_KEYS and isinstance(item, str):
                name = item.rsplit("/", 1)[-1].lower()
                if "." in name.strip("."):
                    files.add(name)
            if key == "role" and isinstance(item, str):
                roles.add(item.lower())
            _walk_format(item, fields, files, roles)
    elif isinstance(value, list):
        for item in value:
            _walk_format(item, fields, files, roles)


@functools.lru_cache(maxsize=1)
def transcript_format() -> TranscriptFormat:
    """The field names, file names and roles of the benchmark transcripts (read once)."""
    fields: set[str] = set()
    files: set[str] = set()
    roles: set[str] = set()
    for folder in TRANSCRIPTS:
        for path in sorted(folder.rglob("*.json*")):  # JSON lines, and JSON documents
            lines = path.read_text().splitlines() if path.suffix == ".jsonl" else [path.read_text()]
            for line in lines:
                with contextlib.suppress(ValueError):
                    _walk_format(json.loads(line), fields, files, roles)
    return TranscriptFormat(frozenset(fields), frozenset(files), frozenset(roles))


# Reserved words of the languages, from their own definitions: Python's ``keyword`` module,
# JSON's literals, bash's reserved words. A phrase of nothing else names no work.
RESERVED_WORDS = frozenset(
    [w.lower() for w in [*keyword.kwlist, *keyword.softkwlist] if w.strip("_")]
    + list(_JSON_LITERALS)
    + _BASH_RESERVED.split()
)
_CALENDAR_PREFIX = re.compile(
    r"^(?:[A-Z][a-z]{2} \d{4}-\d{2}-\d{2}|Week \d{4}-W\d{2}[^:]*|\w+ \d{4}|\d{4})"
)


def _bare(word: str) -> str:
    return word.lower().strip("_-.,:;")


def _format_named(word: str) -> bool:
    """ "YAML" in "from YAML to TOML" names a format in prose, not a path's suffix."""
    bare = word.strip("_-.,:;")
    return len(bare) > 2 and bare.isupper()


KEY_PHRASE_WORDS = 3  # a phrase this short is a key phrase, not a sentence


def _fragment(words: list[str], fmt: TranscriptFormat) -> bool:
    """A phrase holding a piece of code or of the transcript format: a compound field name of
    the format (``structuredPatch`` lower-cased by the keyphraser), a file name the tools were
    given split at its dot ("api py" for api.py), or, in a key phrase (``KEY_PHRASE_WORDS``
    words at most), an identifier ("file_path, old_string"). In a sentence an identifier is
    what the person named ("test_refund_twice fails on CI"), so it stays."""
    bare = [_bare(w) for w in words]
    key_phrase = len(words) <= KEY_PHRASE_WORDS
    for i, word in enumerate(words):
        if bare[i].replace("_", "") in fmt.fields:
            return True
        if key_phrase and _IDENTIFIER_RX.search(word.strip("_-.,:;")):
            return True
        if i > 0 and f"{bare[i - 1]}.{bare[i]}" in fmt.files and not _format_named(word):
            return True
    return False


def _reserved(word: str, fmt: TranscriptFormat) -> bool:
    """A reserved word, a number, or a file extension of the transcripts: a phrase of nothing
    else ("toml", "def", "true 3") names no work."""
    w = _bare(word)
    return not w or w in RESERVED_WORDS or w.isdigit() or w in fmt.extensions


def title_noise(title: str) -> str | None:
    """Why ``title`` is noise, or None. The first that applies:

    - ``placeholder``: a redaction placeholder ("[REDACTED:...]", "redacted");
    - ``path``: ``PATH_RX`` (a/b/c, api.py);
    - ``hash``: ``HASH_RX`` (7+ hex digits with a digit and a letter, a tool-use id);
    - ``speaker``: it opens with a role of the transcript format and a colon ("user: ...");
    - ``fragment``: a phrase holds a compound field name of the transcript format or a file
      name of the transcripts split at its dot, or a key phrase holds an identifier
      (``_fragment``);
    - ``keyword``: one of its comma-separated phrases holds only ``RESERVED_WORDS``, numbers
      and file extensions of the transcripts.

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
    fmt = transcript_format()
    first, colon, _ = body.partition(":")
    if colon and first.strip().lower() in fmt.roles:
        return "speaker"
    phrases = [p.split() for p in body.split(",")]
    if any(_fragment(words, fmt) for words in phrases):
        return "fragment"
    if any(words and all(_reserved(w, fmt) for w in words) for words in phrases):
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
