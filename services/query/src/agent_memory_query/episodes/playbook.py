"""The ACE curator's logic: embed lessons, decide merge-or-add, rank entries for a task.

Pure functions and a tiny embedder, no I/O, so the rules are testable on their own and the store
only moves rows. The curator merges by meaning: a lesson whose embedding is close enough to an
entry's (cosine >= the embedder's threshold) counts as that entry again instead of adding a
near-duplicate, which is what keeps a playbook that many runs feed short and useful.

Embedders: the query service's sentence embedder (``agent_memory_retrieval``'s Embedder port,
all-MiniLM-L6-v2) once it has loaded, else ``HashingEmbedder``: deterministic feature hashing of
stemmed words and word pairs. The hashing embedder only sees shared words (so "run pytest before
committing" and "before you commit, run the pytest suite" merge, but synonyms do not); it exists
so that the playbook works, and tests are exact, without a model. Entries remember which embedder
made their vector and are re-embedded when it changes.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

HASHING_NAME = "hashing-v1-512"
_WORD = re.compile(r"[a-z0-9]+(?:[._/-][a-z0-9]+)*")
_STOPWORDS = (
    "a an the and or but if then else of to in on at by for with from as is are was were be "
    "been being it its this that these those you your we our they their i me my do does did "
    "done so not no can could should would will shall may might must have has had when while "
    "before after into over under again always never also just only very any all each every"
)
_STOP = frozenset(_STOPWORDS.split())
_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ed", "ies", "es", "s", "ly")


class Embedder(Protocol):
    """The shape of ``agent_memory_retrieval.ports.Embedder`` (unit-length vectors)."""

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def stem(word: str) -> str:
    """A crude suffix stripper: enough for "committing" and "commit" to meet."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            if suffix in ("ing", "ed") and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # committ -> commit, runn -> run
            return word
    return word


def terms(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


class HashingEmbedder:
    """Words and adjacent word pairs hashed (signed) into a fixed number of buckets."""

    def __init__(self, dimension: int = 512) -> None:
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "big")
        return value % self._dimension, (1.0 if value >> 63 else -1.0)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vec = [0.0] * self._dimension
            words = terms(text)
            features = [(w, 1.0) for w in words]
            features += [(f"{a} {b}", 0.5) for a, b in itertools.pairwise(words)]
            for feature, weight in features:
                index, sign = self._bucket(feature)
                vec[index] += sign * weight
            out.append(normalise(vec))
        return out


def normalise(vec: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm else list(vec)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Both vectors are unit length (or zero), so the dot product is the cosine."""
    if len(a) != len(b):
        return 0.0
    return float(sum(x * y for x, y in zip(a, b, strict=True)))


@dataclass(frozen=True)
class EmbedderChoice:
    embedder: Embedder
    name: str
    merge_threshold: float


def choose_embedder(
    search_embedder: Embedder | None,
    *,
    mode: str,
    hashing_threshold: float,
    model_threshold: float,
) -> EmbedderChoice:
    """``auto``: the service's sentence embedder when loaded, else hashing; ``hashing``: always
    hashing (deterministic, what the tests use)."""
    if mode == "auto" and search_embedder is not None:
        name = f"{type(search_embedder).__name__}-{search_embedder.dimension}"
        return EmbedderChoice(search_embedder, name, model_threshold)
    return EmbedderChoice(HashingEmbedder(), HASHING_NAME, hashing_threshold)


@dataclass
class EntryVector:
    entry_id: str
    section: str
    vector: list[float]


def nearest(
    vector: Sequence[float], entries: Sequence[EntryVector], section: str | None
) -> tuple[EntryVector | None, float]:
    """The most similar entry (of the same section when one is given) and its similarity."""
    best: EntryVector | None = None
    best_sim = -1.0
    for entry in entries:
        if section is not None and entry.section != section:
            continue
        sim = cosine(vector, entry.vector)
        if sim > best_sim:
            best, best_sim = entry, sim
    return best, best_sim


def usefulness(helpful: int, harmful: int, neutral: int) -> float:
    """How much an entry has earned its place, in (0, 1): helpful marks count, harmful ones
    count against, observations count a little; Laplace smoothing keeps a new entry at 0.5."""
    return (helpful + 0.25 * neutral + 1.0) / (helpful + harmful + 0.25 * neutral + 2.0)


def relevance(similarity: float, helpful: int, harmful: int, neutral: int) -> float:
    """The generator's order: relevance to the task first, tempered by the entry's record; the
    record alone orders the entries that share nothing with the task."""
    useful = usefulness(helpful, harmful, neutral)
    return max(similarity, 0.0) * (0.5 + useful) + 0.01 * useful
