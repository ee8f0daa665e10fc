"""The bare-keyword memory-kind classifier of the issue: the yardstick the product's must beat.

A measure for the tests and benchmarks only (``test_salience`` and ``bench-coding``), so it
lives here, not in the service.
"""

from __future__ import annotations

import re

from agent_memory_common.contracts.memory import MemoryKind

# The keyword lists of the issue, matched as bare words.
BASELINE_KEYWORDS: tuple[tuple[MemoryKind, tuple[str, ...]], ...] = (
    ("constraint", ("must", "never", "always", "required", "need to")),
    ("definition", ("is defined as", "means", "we call")),
    ("procedure", ("step", "follow")),
    ("preference", ("prefer", "like", "avoid", "don't use")),
)


def classify_baseline(text: str) -> MemoryKind:
    low = text.lower()
    for kind, words in BASELINE_KEYWORDS:
        if any(re.search(r"\b" + re.escape(w) + r"\b", low) for w in words):
            return kind
        if kind == "procedure" and re.search(r"\bfirst\b.*\bthen\b", low, re.DOTALL):
            return kind
    return "observation"
