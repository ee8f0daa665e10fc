"""Memory kinds and salience: the rules every writer and reader of a memory shares.

The summarizer decides a text's kind (``agent_memory_summarizer.salience.classify``) and stores
the salience below on grips and nodes; the indexers give raw events the same salience; the query
service shows a node's salience with the pin bonus. The database holds two of these facts too
(the kinds in the ``CHECK`` constraints of ``migrations/0003_toc.sql``, the pin bonus in the
generated ``toc_grips.salience`` column); a test keeps them equal to the constants here.

Salience = min(len/500, 1) * 0.45 + 0.20 if the kind is not an observation + 0.20 if pinned.
"""

from __future__ import annotations

from typing import Literal

MemoryKind = Literal[
    "decision", "constraint", "definition", "procedure", "preference", "observation", "episode"
]
MEMORY_KINDS: tuple[MemoryKind, ...] = (
    "decision",
    "constraint",
    "definition",
    "procedure",
    "preference",
    "observation",
    "episode",
)
DEFAULT_KIND: MemoryKind = "observation"  # an unclassified moment

LENGTH_WEIGHT = 0.45
LENGTH_SCALE = 500
KIND_BONUS = 0.20
PIN_BONUS = 0.20


def salience(length: int, kind: str, pinned: bool = False) -> float:
    """The write-time importance of a memory of ``length`` characters, in [0, 0.85]."""
    value = min(max(length, 0) / LENGTH_SCALE, 1.0) * LENGTH_WEIGHT
    if kind != "observation":
        value += KIND_BONUS
    if pinned:
        value += PIN_BONUS
    return round(value, 4)


def pinned_salience(base: float, pinned: bool) -> float:
    """A stored (unpinned) salience as shown and indexed: with the pin bonus, rounded."""
    return round(float(base) + (PIN_BONUS if pinned else 0.0), 4)
