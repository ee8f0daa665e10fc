"""Dedup at ingest: is this event a repeat of one the same session said a moment ago?

Agents retry a prompt, re-send the same tool output, re-run a command that prints the same
thing. Each copy is still appended to ``events`` (append-only is a promise), but the recorder
marks it ``duplicate_of`` the first one and does not announce it on ``mem.recorded``, so it is
neither segmented, summarised nor indexed a second time.

Two tests, both within the same tenant, project and session, the same role and type, and a
window of event time (``|ts - ts_original| <= window``):

- **exact**: the texts are equal after normalisation (Unicode NFKC, case-folded, runs of
  whitespace made one space). A BLAKE2b digest of the normalised text is compared.
- **near**: the cosine of the two texts' sets of words (``|A & B| / sqrt(|A| |B|)``) is at
  least the threshold (0.85), for texts of at least 24 words. In a short text one word is the
  message ("run 1 of 5" and "run 2 of 5" are not the same thing), so short texts are duplicates
  only when exact.

Why sets of words and not the embedder's vectors: the recorder is on the hot path (the gateway
takes ~37k events/s), and one MiniLM embedding costs milliseconds on a CPU, a hundred times the
recorder's whole per-event budget (docs/lifecycle.md has the measurement). A bag-of-words cosine
catches what agents actually repeat (the same output with a different timestamp or counter, a
retried prompt with a word changed) for a few microseconds, before the event fans out, which is
what lets every later stage skip it without a race. Sets, not word counts: the intersection of
two sets is one C call, and the cosine of sets is bounded by their sizes
(``sqrt(min/max)``), so texts of very different lengths are ruled out without comparing a
word. Word counts cost nearly twice as much per event (63 µs against 34 on the ingest bench's
texts) and mark the same five repeats of the coding corpus (docs/lifecycle.md).

The originals of recent sessions are kept in a bounded in-memory index; a session it does not
hold is loaded from Postgres (its latest originals), so a restarted recorder decides as the old
one did. The decision is stored in ``event_duplicates`` in the batch's transaction, and a
redelivered event reads its stored decision back instead of deciding again.
"""

from __future__ import annotations

import hashlib
import math
import string
import unicodedata
from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from agent_memory_common.contracts.memory import MARKER_TYPES

SessionKey = tuple[str, str, str]  # tenant, project_id, session_id
Method = Literal["exact", "near"]

# Events that are never duplicates: a session opening or closing twice is information.
SKIPPED_TYPES = MARKER_TYPES
# Punctuation (but ``_``, which joins identifiers) becomes a space before splitting into words:
# ``str.translate`` then ``split`` is a third of what ``re.findall(r"\w+")`` costs.
_PUNCTUATION = str.maketrans(dict.fromkeys(string.punctuation.replace("_", ""), " "))


@dataclass(frozen=True, slots=True)
class DedupRules:
    enabled: bool = True
    window_s: float = 3600.0
    cosine: float = 0.85
    min_chars: int = 16  # shorter normalised texts ("ok", "yes") are never duplicates
    near_min_words: int = 24  # shorter texts must match exactly: one word changes their sense
    vector_chars: int = 8000  # the near test reads this much of the normalised text
    recent_per_session: int = 16
    compared: int = 4  # at most this many originals of the same role and type are compared
    sessions_cached: int = 2048


@dataclass(frozen=True, slots=True)
class Seen:
    """One original event as the index keeps it."""

    event_id: str
    ts: float  # epoch seconds
    role: str
    type: str
    digest: bytes
    words: frozenset[str]  # empty for texts shorter than ``near_min_words``


@dataclass(frozen=True, slots=True)
class Verdict:
    duplicate_of: str
    method: Method
    similarity: float


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def fingerprint(
    event_id: str, ts: float, role: str, type_: str, text: str, rules: DedupRules
) -> Seen | None:
    """What the index compares, or None when the event is never a duplicate nor an original
    worth comparing with (a session boundary, or too short to mean the same thing twice)."""
    if type_ in SKIPPED_TYPES:
        return None
    norm_text = normalise(text)
    if len(norm_text) < rules.min_chars:
        return None
    digest = hashlib.blake2b(norm_text.encode(), digest_size=16).digest()
    words = norm_text[: rules.vector_chars].translate(_PUNCTUATION).split()
    vocabulary = frozenset(words) if len(words) >= rules.near_min_words else frozenset()
    return Seen(event_id, ts, role, type_, digest, vocabulary)


def cosine(a: Seen, b: Seen) -> float:
    """The cosine of the two texts' word sets (0 when either is too short to compare)."""
    if not a.words or not b.words:
        return 0.0
    return len(a.words & b.words) / math.sqrt(len(a.words) * len(b.words))


def could_match(a: Seen, b: Seen, threshold: float) -> bool:
    """Whether the cosine of the two word sets can reach ``threshold`` at all: it is at most
    ``sqrt(min(|A|, |B|) / max(|A|, |B|))``, so sets of very different sizes never match."""
    small, large = sorted((len(a.words), len(b.words)))
    return small > 0 and small >= threshold * threshold * large


class DedupIndex:
    """The recent originals of the sessions the recorder saw last (bounded, LRU)."""

    def __init__(self, rules: DedupRules) -> None:
        self.rules = rules
        self._sessions: OrderedDict[SessionKey, deque[Seen]] = OrderedDict()

    def missing(self, keys: Iterable[SessionKey]) -> list[SessionKey]:
        """The sessions to load from Postgres before ``check`` can be trusted."""
        return [k for k in dict.fromkeys(keys) if k not in self._sessions]

    def load(self, key: SessionKey, originals: Iterable[Seen]) -> None:
        """A session's latest originals, oldest first (from Postgres)."""
        recent: deque[Seen] = deque(maxlen=self.rules.recent_per_session)
        recent.extend(originals)
        self._sessions[key] = recent
        self._sessions.move_to_end(key)
        while len(self._sessions) > self.rules.sessions_cached:
            self._sessions.popitem(last=False)

    def check(self, key: SessionKey, seen: Seen) -> Verdict | None:
        """The original this event repeats, if any: exact first, then the most similar."""
        rules = self.rules
        best: Verdict | None = None
        budget = rules.compared
        for orig in reversed(self._sessions.get(key, ())):  # newest first
            if orig.event_id == seen.event_id or orig.role != seen.role or orig.type != seen.type:
                continue
            if abs(seen.ts - orig.ts) > rules.window_s:
                continue
            if orig.digest == seen.digest:
                return Verdict(orig.event_id, "exact", 1.0)
            budget -= 1
            if budget < 0:
                break
            if not could_match(orig, seen, rules.cosine):
                continue
            sim = cosine(orig, seen)
            if sim >= rules.cosine and (best is None or sim > best.similarity):
                best = Verdict(orig.event_id, "near", round(sim, 4))
        return best

    def add(self, key: SessionKey, seen: Seen) -> None:
        recent = self._sessions.get(key)
        if recent is None:
            self.load(key, (seen,))
            return
        if all(s.event_id != seen.event_id for s in recent):
            recent.append(seen)
        self._sessions.move_to_end(key)

    def forget(self, key: SessionKey) -> None:
        """Drop a session (its batch was rolled back: reload what was committed next time)."""
        self._sessions.pop(key, None)
