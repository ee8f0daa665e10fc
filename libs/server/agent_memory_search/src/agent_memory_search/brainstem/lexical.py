"""How much the words of a query found: how many of its content words the best BM25 hits hold.

Fusion (``fusion.rrf``) counts ranks, not scores, so a BM25 list is worth as much when its first
hit shares one common word with the question as when it shares them all. On the coding
benchmark the questions asked in other words ("the bank's callbacks got rejected as fakes"
for a sentence about webhook signatures) share one word in six with the best BM25 hit, and
BM25's guesses pushed out the vector tier's first three, which were right; questions in the
session's own words share half or more. ``coverage`` measures that, and the engine lets the
vectors lead when it is low.

The word tiers still search the question as asked. Searching its content words only
(``FUNCTION_WORDS`` removed) was measured and left out: LoCoMo turn recall@5 0.654 -> 0.669,
but session recall@10 0.940 -> 0.934 and coding found@1 0.786 -> 0.771 (docs/search.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agent_memory_search.brainstem.fusion import HitLike
from agent_memory_search.brainstem.intent import STOPWORDS

_WORD = re.compile(r"[\w']+")
# Words that ask or glue, never what is asked about: the intent's STOPWORDS less the verbs and
# nouns a conversation uses for things ("what show did she watch", "where they went"). Not
# counted as words of the query.
FUNCTION_WORDS = STOPWORDS - frozenset(
    """happen happened happening anything something thing things stuff going went go tell
    show know please let lets""".split()  # noqa: SIM905 - a word list reads best
)
COVERAGE_DEPTH = 3  # the best of the first few hits: one lucky long turn does not decide


def stem(word: str) -> str:
    """A crude suffix strip, applied to both sides alike ("charge", "charges", "charged" ->
    "charg"; "nightly" -> "night")."""
    word = word.lower()
    for suffix in ("ing", "ies", "ed", "ly", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def terms(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text) if w.lower() not in FUNCTION_WORDS}


def coverage(query: str, hits: Sequence[HitLike]) -> float | None:
    """The largest share of the query's content words that one of the first hits holds (its
    title, text and the context BM25 matched it on); None without words or hits."""
    wanted = terms(query)
    if not wanted or not hits:
        return None
    best = 0
    for hit in hits[:COVERAGE_DEPTH]:
        best = max(best, len(wanted & terms(hit.doc.match_text())))
    return best / len(wanted)


def vectors_lead(
    weights: Mapping[str, float], covered: float | None, below: float
) -> dict[str, float] | None:
    """``weights`` with the vector tier's and BM25's swapped when the words covered less than
    ``below`` of the query and BM25 weighed more; None when they stay as they are."""
    w_vector, w_bm25 = weights.get("vector", 1.0), weights.get("bm25", 1.0)
    if covered is None or covered >= below or w_vector >= w_bm25:
        return None
    return {**weights, "vector": w_bm25, "bm25": w_vector}
