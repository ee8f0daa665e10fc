"""Recall and precision of a redactor over the labelled secrets corpus.

Shared by the gateway's corpus test (``services/gateway/tests/test_redaction_corpus.py``) and
the comparison with detect-secrets (``tests/bench/bench_redaction.py``).

The corpus (``libs/server/agent_memory_common/tests/fixtures/secrets_recall_corpus.jsonl``) has
two kinds of case. A *secret* case is a realistic text with the exact secret substrings listed in
``secrets``; a *lookalike* is a text that must come back unchanged. All values are fake.

Scoring works on the redacted output, so any redactor can be scored: its output must replace
what it hides with a placeholder matching ``PLACEHOLDER``. The output is aligned with the input
(the text between placeholders is found again, in order) to tell, for every input character,
whether it survived.

- A secret is **caught** only if no character of it survives.
- A lookalike is a **false positive** if its text changed at all.
- A secret case is **over-redacted** if a letter or digit outside its secrets was lost
  (``password: x`` losing the key, a URL losing its host).

recall = caught / secrets; precision = caught / (caught + false positives + over-redacted
cases), so over-redaction costs precision as a false positive does.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

CORPUS_PATH = (
    Path(__file__).resolve().parent.parent
    / "libs/server/agent_memory_common/tests/fixtures/secrets_recall_corpus.jsonl"
)
PLACEHOLDER = re.compile(r"\[REDACTED:[A-Za-z0-9_.\-]+\]")


@dataclass(frozen=True)
class Case:
    id: str
    category: str  # "secret" or "lookalike"
    family: str
    text: str
    secrets: tuple[str, ...] = ()


def load_corpus(path: Path = CORPUS_PATH) -> list[Case]:
    cases = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                raw = json.loads(line)
                cases.append(
                    Case(
                        raw["id"],
                        raw["category"],
                        raw["family"],
                        raw["text"],
                        tuple(raw.get("secrets", ())),
                    )
                )
    return cases


def surviving(text: str, output: str) -> list[bool]:
    """For each character of ``text``, whether it is still in ``output``."""
    if output == text:
        return [True] * len(text)
    kept = [False] * len(text)
    segments = PLACEHOLDER.split(output)
    pos = 0
    for i, seg in enumerate(segments):
        if not seg:
            continue
        if i == 0:
            at = 0 if text.startswith(seg) else -1
        elif i == len(segments) - 1 and text.endswith(seg) and len(text) - len(seg) >= pos:
            at = len(text) - len(seg)
        else:
            at = text.find(seg, pos)
        if at < 0:
            continue  # text that is not in the input: nothing of the input survived there
        for j in range(at, at + len(seg)):
            kept[j] = True
        pos = at + len(seg)
    return kept


def secret_spans(case: Case) -> list[tuple[int, int]]:
    """Where each listed secret occurs in the text (every occurrence)."""
    spans = []
    for secret in case.secrets:
        start = case.text.find(secret)
        if start < 0:
            raise ValueError(f"{case.id}: secret not found in its text: {secret!r}")
        while start >= 0:
            spans.append((start, start + len(secret)))
            start = case.text.find(secret, start + 1)
    return spans


@dataclass
class Score:
    name: str
    secrets: int = 0
    caught: int = 0
    lookalikes: int = 0
    false_positives: int = 0
    secret_cases: int = 0
    over_redacted: int = 0
    seconds: float = 0.0
    missed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    overreached: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.caught / self.secrets if self.secrets else 1.0

    @property
    def precision(self) -> float:
        flagged = self.caught + self.false_positives + self.over_redacted
        return self.caught / flagged if flagged else 1.0

    @property
    def lookalikes_kept(self) -> float:
        return 1 - self.false_positives / self.lookalikes if self.lookalikes else 1.0

    @property
    def us_per_text(self) -> float:
        return self.seconds / (self.secret_cases + self.lookalikes) * 1e6


def score(name: str, redact: Callable[[str], str], cases: Sequence[Case]) -> Score:
    result = Score(name)
    if cases:
        redact(cases[0].text)  # warm-up: lazy set-up is not per-text cost
    outputs = []
    start = time.thread_time()  # CPU time: the machine is shared, wall time is noisy
    for case in cases:
        outputs.append(redact(case.text))
    result.seconds = time.thread_time() - start
    for case, out in zip(cases, outputs, strict=True):
        if case.category == "lookalike":
            result.lookalikes += 1
            if out != case.text:
                result.false_positives += 1
                result.changed.append(case.id)
            continue
        result.secret_cases += 1
        kept = surviving(case.text, out)
        spans = secret_spans(case)
        for secret in case.secrets:
            result.secrets += 1
            occurrences = [(a, b) for a, b in spans if case.text[a:b] == secret]
            if any(any(kept[a:b]) for a, b in occurrences):
                result.missed.append(f"{case.id}: {secret[:40]!r}")
            else:
                result.caught += 1
        inside = [False] * len(case.text)
        for a, b in spans:
            inside[a:b] = [True] * (b - a)
        lost_outside = any(
            not k and not s and ch.isalnum()
            for ch, k, s in zip(case.text, kept, inside, strict=True)
        )
        if lost_outside:
            result.over_redacted += 1
            result.overreached.append(case.id)
    return result


def table(scores: Sequence[Score]) -> str:
    head = (
        "| redactor | secrets caught | recall | look-alikes changed | over-redacted secret texts"
        " | precision | look-alikes kept | µs per text |"
    )
    rows = [head, "|" + " --- |" * 8]
    for s in scores:
        rows.append(
            f"| {s.name} | {s.caught}/{s.secrets} | {s.recall:.3f} "
            f"| {s.false_positives}/{s.lookalikes} | {s.over_redacted}/{s.secret_cases} "
            f"| {s.precision:.3f} | {s.lookalikes_kept:.3f} | {s.us_per_text:.1f} |"
        )
    return "\n".join(rows)
