"""The prefilter: one regex over every rule's trigger literals, so clean text costs one pass.

Why it is fast: Python's ``re`` has no multi-pattern (Aho-Corasick) search, and one big
alternation, or 30 regexes each scanning the whole text, costs tens of microseconds per event.
Instead, every rule names short *trigger* literals (``AKIA``, ``ghp_``, ``password``...). One
prefilter regex is built from all triggers, each anchored on its rarest character (or on one
that other triggers already anchor on, see ``Trigger.anchor``). sre's
first-character set then skips most of a clean text in C, and fixed-width look-arounds confirm
the rest of the literal. An empty marker group says which rule fired and where, and only that
rule's regex is then run, with ``match`` at that position rather than a full scan. Clean text
costs one prefilter pass of a few microseconds per 300 bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory_common.redaction.rules import Rule, Trigger

# Printable ASCII from rarest to most common, as counted over a mix of Python, Markdown, YAML
# and JSON (this repository plus parts of the standard library), with digits and "/" moved
# towards the common end because logs, timestamps and paths are full of them. Only used to pick
# the anchor of each trigger: a poor choice costs speed, never correctness.
_RARITY_ORDER = (
    "~&@QX!Z^K;$<WV?J%BYzHU+\\*GqF|>MjDL#CPIOR}{A][SxTN'E`kwbvy=()7896543/210:_,gh-.umpfcd\""
    "lainosrte \t\n"
)
_RARITY = {ch: i for i, ch in enumerate(_RARITY_ORDER)}


def _anchor_index(trigger: Trigger) -> int:
    if trigger.anchor:
        return trigger.literal.index(trigger.anchor)

    def cost(i: int) -> int:
        ch = trigger.literal[i]
        if trigger.ci and ch.isalpha():
            ch = ch.lower()  # both cases get scanned; lowercase is the common one
        return _RARITY.get(ch, len(_RARITY_ORDER) // 2)

    return min(range(len(trigger.literal)), key=cost)


@dataclass(frozen=True, slots=True)
class _Entry:
    rule: int
    trigger: Trigger
    anchor: int  # index of the anchor character in the literal

    def compatible(self, other: _Entry, anchor_char: str) -> bool:
        """Whether ``other`` could match at the same anchor position as this entry.

        sre reports only the first alternative that matches at a position, so an entry must
        also schedule every rule whose literal could match there at the same time
        (``sk-ant-`` and ``sk-``; ``ACCA`` and ``AC``). Scheduling one too many costs a failed
        ``match``; one too few would miss a secret. Case only folds if either side ignores it.
        """
        fold = self.trigger.ci or other.trigger.ci
        mine, theirs = self.trigger.literal, other.trigger.literal
        if fold:
            mine, theirs, anchor_char = mine.lower(), theirs.lower(), anchor_char.lower()
        if theirs[other.anchor] != anchor_char:
            return False
        a, b = mine[: self.anchor], theirs[: other.anchor]
        c, d = mine[self.anchor + 1 :], theirs[other.anchor + 1 :]
        return (a.endswith(b) or b.endswith(a)) and (c.startswith(d) or d.startswith(c))


def _quick_reject(group: Sequence[_Entry]) -> str:
    """A one-character look-ahead shared by a whole anchor group.

    Most candidates are ordinary letters that are not part of any trigger. Checking the next
    character once, instead of trying every alternative's look-arounds, makes rejecting them
    cost a single assertion.
    """
    nxt: set[str] = set()
    for e in group:
        rest = e.trigger.literal[e.anchor + 1 :]
        if not rest:
            return ""
        nxt.update({rest[0].lower(), rest[0].upper()} if e.trigger.ci else {rest[0]})
    return "(?=[" + "".join(re.escape(c) for c in sorted(nxt)) + "])"


def build_prefilter(
    rules: Sequence[Rule],
) -> tuple[re.Pattern[str] | None, list[tuple[tuple[int, int], ...]]]:
    """One regex over all triggers, plus for each marker group the (rule, offset) pairs to run.

    ``offset`` is how far the literal starts before the anchor, so the rule is matched at
    ``prefilter_match.start() - offset``.
    """
    entries = [
        _Entry(i, t, _anchor_index(t)) for i, rule in enumerate(rules) for t in rule.triggers
    ]
    if not entries:
        return None, [()]
    by_anchor: dict[str, list[_Entry]] = {}
    for e in entries:
        ch = e.trigger.literal[e.anchor]
        variants = {ch.lower(), ch.upper()} if e.trigger.ci else {ch}
        for v in sorted(variants):
            by_anchor.setdefault(v, []).append(e)

    markers: list[tuple[tuple[int, int], ...]] = [()]  # group 0 is the whole match
    branches = []
    # At each candidate position sre tries the top-level branches in order; putting the most
    # common anchor characters first keeps that walk short for the bulk of the candidates.
    common_first = sorted(by_anchor, key=lambda c: -_RARITY.get(c, len(_RARITY_ORDER) // 2))
    for ch in common_first:
        group = by_anchor[ch]
        group.sort(key=lambda e: -len(e.trigger.literal))
        alternatives = []
        emitted: set[tuple[str, bool, str]] = set()
        for e in group:
            lit_key = e.trigger.literal.lower() if e.trigger.ci else e.trigger.literal
            key = (lit_key, e.trigger.ci, e.trigger.guard)
            if key in emitted:
                continue  # same literal for another rule: already in the first one's marker
            emitted.add(key)
            lit, flags = e.trigger.literal, "(?i:" if e.trigger.ci else "(?:"
            behind = f"(?<={flags}{re.escape(lit[: e.anchor + 1])}))" if e.anchor else ""
            rest = lit[e.anchor + 1 :]
            ahead = f"{flags}{re.escape(rest)})" if rest else ""
            if e.trigger.guard:
                ahead += e.trigger.guard
            alternatives.append(f"{behind}(?={ahead})()" if ahead else f"{behind}()")
            implied = [(o.rule, o.anchor) for o in entries if e.compatible(o, ch)]
            markers.append(tuple(dict.fromkeys([(e.rule, e.anchor), *implied])))
        branches.append(f"{re.escape(ch)}{_quick_reject(group)}(?:{'|'.join(alternatives)})")
    return re.compile("|".join(branches)), markers
