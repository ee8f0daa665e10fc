"""Memory kind and salience, decided once at write time and stored on grips and nodes.

Kinds: ``decision`` ("we go with", "let's use", "we decided", "Decision:", "switching to";
see ``kinds``), ``constraint`` ("must", "never", "always", "required", "need to"),
``definition`` ("is defined as", "means", "we call"), ``procedure`` ("step", "first ... then",
"follow"), ``preference`` ("prefer", "like", "avoid", "don't use"), ``observation`` (the
default) and ``episode`` (task records; only ever set explicitly, never guessed).

Bare keywords misfire in ways that are cheap to avoid, so the classifier works per sentence on
the prose only and:

- drops code (fenced blocks and inline code): ``if x must_be: ...`` is not a rule;
- treats a question as an observation: "must we always use UTC?" states no constraint;
- honours negations that cancel the cue: "not required", "no need to", "doesn't mean",
  "not always";
- tells a cue word from its other uses: "looks like" (comparison), "the following" (list),
  "this means that" (consequence), "must have crashed" (inference), "never seen" / "was never
  sent" (a past event), "never runs on a panic" / "always retried on 500" (what a thing does
  or did), "you'll need to log in" (an instruction for this once), "is called from" (a
  call), "to avoid" (purpose);
- calls what an agent says while it works neither a rule nor a taste: its next step ("Let me
  see if the schema needs a bump, then rerun the suite.", "Now I need to adjust the parser:"),
  a to-do ("- Need to add PDF support"), a cause ("failing because it requires Docker"), a
  feature ("No hardware required"), a consequence ("This avoids the cache misses"), a
  question to the user ("which format you'd like me to use"): on real sessions (``make
  bench-real``'s transcripts, labelled in ``tests/bench/real/kinds_real.jsonl``) these made
  most of the constraints it found;
- calls a line in a tool's format (lint codes, ``file:line:col``, ``error[E0502]:``,
  ``warning:``, ``fatal:``, tracebacks; ``kinds.is_tool_line``) and a report ("Cause: ...",
  "Fixed: ...") an observation. The summarizer also calls everything a tool event holds an
  observation (``memory.is_tool_event``): nobody stated it.

A text's kind is the strongest kind among its sentences, in the order decision, constraint,
definition, procedure, preference: a rule buried in a long message still marks the message.

The kinds and the salience formula are shared rules: ``agent_memory_common.contracts.memory``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from agent_memory_common.contracts.memory import MEMORY_KINDS, MemoryKind
from agent_memory_summarizer.kinds import is_decision, is_tool_line, without_tool_lines
from agent_memory_summarizer.said_by import (
    AGENT,
    USER,
    agent_aside,
    users_choice,
    users_kind,
)
from agent_memory_summarizer.text import split_sentences, strip_code

KINDS: tuple[MemoryKind, ...] = MEMORY_KINDS
# Strongest first: used when a text holds sentences of several kinds.
PRIORITY: tuple[MemoryKind, ...] = (
    "decision",
    "constraint",
    "definition",
    "procedure",
    "preference",
)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_QUESTION_START = _rx(
    r"^\s*(?:so\s+|and\s+|but\s+)?(?:should|shall|must|do|does|did|can|could|would|will|is|are|"
    r"what|why|how|when|where|who|which)\s+(?:we|i|you|they|it|he|she|this|that|there)\b"
)

# --- constraint -----------------------------------------------------------------------------
_CONSTRAINT = _rx(
    r"\b(?:must|never|always|required|requires|mandatory|forbidden|need(?:s)? to|have to|has to|"
    r"(?:is|are) not allowed|keep in mind|bear in mind|should only|"
    r"(?:you|we|i) (?:should(?: not|n't)|shall not))\b"
)
_CONSTRAINT_CANCEL = [
    # the agent's own next step ("Now I need to adjust the parser:", "let me see if we need to
    # bump the schema"), a to-do ("- Need to add support for PDFs"), a condition
    # ("research if you need to"): work to do, not a rule (``make bench-real``)
    _rx(r"\bi(?:'ll|\s+will)?\s+(?:also\s+|still\s+|first\s+|now\s+|just\s+|then\s+)?need to\b"),
    _rx(r"\b(?:check|see|find out|verify)\s+(?:if|whether|what)\s+[^.?!]*?\bneeds? to\b"),
    _rx(r"^\s*(?:[-*\u2022]\s*)?needs? to\b"),
    _rx(r"\bif (?:you|we|i) (?:really )?need to\b"),
    _rx(r"\bneeds? to be (?:updat|chang|implement|fix|done|add|remov|mov|renam)\w*"),
    _rx(r"\bshould(?:n't| not) need to\b"),
    _rx(r"\bneeds? to change\b|\bjust needs? to\b|\b(?:we|you|i)(?:'d| would) need to\b"),
    _rx(r"\bthe required\b|\bcan always\b"),  # "the required Git operations", "you can always"
    # a cause ("The build is failing because it requires Docker") or a feature ("No hardware
    # required"), not a rule
    _rx(r"\bbecause\s+(?:it|they|this|that)\s+requires?\b"),
    _rx(r"\bno\s+(?:\w+\s+){0,2}required\b"),
    _rx(r"\b(?:not|n't|no longer|never)\s+(?:strictly\s+|really\s+)?(?:required|mandatory)\b"),
    _rx(r"\b(?:do|does|did)(?: not|n't)\s+(?:really\s+)?(?:need|have) to\b"),
    _rx(r"\bno need to\b|\bneedn't\b|\bnot necessar"),
    _rx(r"\b(?:not|almost|nearly|as)\s+always\b"),
    _rx(r"\bmust(?:'ve| have)\s+(?:been|gone|done|seen|run|had|\w+(?<!e)ed|\w+en)\b"),  # inference
    # inference: "that must be the cache", "so this must be one of the recent changes"
    _rx(r"\bmust be (?:a|an|the|because|why|that|it|one\s+of|due\s+to|caused|related|coming)\b"),
    # what would have happened, not a rule: "it would never complete, so the retry could not
    # kick in"
    _rx(r"\b(?:would|could)(?:n't| not)?\s+(?:\w+\s+)?(?:never|always)\b"),
    # a program's message quoted, not a rule stated: 'the parser fails with "Input must be a
    # JSON object"' (a rule quoted from its source stays one: 'the README says "Never edit the
    # generated files"')
    _rx(
        r"\b(?:fail\w*|errors?|exception|message|print\w*|output\w*|logs?|logged|rais\w*|"
        r"warn\w*|complain\w*|reject\w*)\b[^\"\u201c.?!]{0,40}"
        r'(?:"[^"]{3,}"|\u201c[^\u201d]{3,}\u201d)'
    ),
    _rx(r"\bnever\s+(?:seen|heard|noticed|had|been|happened|worked|managed|tried|used)\b"),
    _rx(r"\bhave\s+never\b|\bhas\s+never\b|\b(?:was|were|had)\s+never\b|\bnever mind\b"),
    # a past event, not a rule: "we never saw this before", "it was never sent"
    _rx(
        r"\bnever\s+(?:\w+(?<!e)ed|saw|sent|ran|went|got|came|did|knew|found|made|took|gave|told|"
        r"thought|said|wrote|built|caught|left|lost|met|paid|heard|seen|been|had)\b"
    ),
    # what a thing does, not what must be done: "That branch never runs on Windows", "the
    # framework always sets the header", "the old worker always retried on timeouts" (a verb in
    # -s or -ed
    # after it; "always need a restart", "always require auth", "never exceeds"... the rule
    # words stay cues)
    _rx(
        r"\b(?:always|never)\s+(?!(?:needs|requires|has|is|does|exceeds|goes|gets|stays|"
        r"remains|takes|uses|makes|runs\s+as)\b)(?:\w+[^s\W]s|\w+(?<!e)ed)\b"
    ),
    # an instruction for this once, by either party: "You'll need to sign in to the registry"
    _rx(r"\byou(?:'ll|\s+will)\s+(?:also\s+|still\s+|first\s+|just\s+|then\s+)?need to\b"),
]

# --- definition -----------------------------------------------------------------------------
_DEFINITION = _rx(
    r"\b(?:is|are) defined as\b|\bmeans\b|\bwe call\b|\brefers? to\b|\bstands for\b|"
    r"\bis short for\b|\bis called\b|\bis what we call\b|"
    # "A tenant is the account that owns...", "A grace period is the 30 days during which"
    r"^\s*an?\s+[\w-]+(?:\s+[\w-]+){0,2}\s+is\s+(?:an?|the)\s+[^,;:]*?"
    r"\b(?:that|which|who|whom|where|when|during which|in which|of which)\b"
)
_DEFINITION_CANCEL = [
    _rx(r"\b(?:doesn't|does not|don't|do not|didn't|did not)\s+(?:\w+\s+)?mean"),
    _rx(r"\b(?:this|that|it|which|which also|which then)\s+means\b"),  # a consequence
    _rx(r"\bmeans that\b"),
    _rx(r"\bby (?:all|no|any|some) means\b|\bby means of\b|\bmeans to an end\b"),
    # the passive of "call": "the helper is called from two modules"
    _rx(r"\bis called\s+(?:from|by|in|at|on|with|when|once|twice|every|each|before|after|\d)"),
]

# --- procedure ------------------------------------------------------------------------------
_IMPERATIVE = (
    r"(?:run|install|open|start|stop|click|copy|create|add|set|call|build|restart|deploy|"
    r"check out|checkout|clone|edit|apply|commit|push|pull|export|source|enable|disable|"
    r"remove|delete|upgrade|migrate|rebuild|configure|go to|navigate to|type|press|execute)"
)
_SAME_SENTENCE = r"(?:[^.?!]|\.(?=\S))*?"  # a dot inside a name (vX.Y.Z, pyproject.toml) goes on
_PROCEDURE = [
    _rx(r"\bsteps?\s*(?:\d+|one|two|three|four|five)\b|\bstep[- ]by[- ]step\b"),
    _rx(r"\b(?:first|next|final|last|second|third) step\b|\bthe steps? (?:is|are)\b"),
    _rx(r"\bfirst\b" + _SAME_SENTENCE + r"\bthen\b"),
    _rx(r"^\s*" + _IMPERATIVE + r"\b" + _SAME_SENTENCE + r"\bthen\b"),
    _rx(r"^\s*to \w+[^,.?!]*,[^.?!]*\bthen\b"),  # "to release, bump ..., then tag ..."
    _rx(
        r"\bfollow (?:these|the|this|our|my) (?:steps|instructions|procedure|process|recipe|"
        r"runbook|checklist)\b|\bas follows:"
    ),
    _rx(r"\bthen\b[^.?!]*\bfinally\b"),
]
_STEP = r"(?:\d+[.)]|step \d+)"  # "1.", "2)", "Step 3"
_NUMBERED_LINE = re.compile(r"^\s*" + _STEP + r"\s+\S", re.IGNORECASE | re.MULTILINE)
# Two numbered lines, the first right after an intro (blank lines allowed).
_TWO_STEPS = re.compile(
    r"\s*" + _STEP + r"[ \t]+\S[^\n]*\n\s*" + _STEP + r"[ \t]+\S", re.IGNORECASE
)
# A line announcing steps: "Here is how to add a plugin:", "Steps to reproduce:", "To cut a
# release:". Not "Here is what I changed:", whose numbered lines report what was done.
_STEPS_INTRO = _rx(
    r"(?:\bhow to\b|\bsteps?\b|\binstructions\b|\bprocedure\b|\bchecklist\b|\brunbook\b|"
    r"^\s*to \w+)[^.?!]*:\s*$"
)

# --- preference -----------------------------------------------------------------------------
_PREFERENCE = [
    _rx(r"\bprefer(?:s|red|ably|ence)?\b"),
    _rx(
        r"\b(?:i|we|they|team|user|users|he|she|(?:my|our) \w+)"
        r"(?:'d| would| really| also| all| do)?\s+(?:like|love|likes|loves|liked)\b"
    ),
    # "would rather" by anyone; "would like" only said of oneself (above): "tell me which
    # format you'd like me to use" asks, it states no taste
    _rx(r"(?:\bwould|'d) rather\b|\bnot a fan of\b|\bfavou?r(?:s|ed)?\b(?! of)"),
    _rx(r"\b(?:don't|do not|dont|please don't|please do not) (?:use|add)\b"),
    # dislikes and leanings: "I disliked the verbose flag", "I'm not sold on the new naming
    # rule", "the short form works for me", "a better name would be ..."
    _rx(r"\b(?:i|we)\s+(?:really\s+)?(?:dislike[sd]?|hate[sd]?)\b|\bworks for me\b"),
    _rx(r"\bnot (?:fully |really |entirely )?(?:on board with|married to|sold on)\b"),
    _rx(r"\ba better (?:name|way|approach|option)\b[^.?!]*\bwould be\b"),
    _rx(r"\b(?:probably |much )?better (?:renamed|named|called)\b"),
]
_AVOID = _rx(r"\bavoid(?:s|ed|ing)?\b")
# purpose or consequence, not taste: "to avoid ...", "This avoids the cache misses"
_TO_AVOID = _rx(
    r"\b(?:in order |so as )?to avoid\b|\b(?:this|that|it|which)\s+(?:also\s+)?avoids\b|"
    # what a thing does or did: "the Go version avoids this by installing a binary"
    r"\b(?<!we )(?<!i )(?:\w+ly\s+)?avoid(?:s|ed)\b|"
    r"^\s*(?:[-*\u2022]\s*)?avoids\b"  # a listed benefit: "- Avoids awkward naming"
)


def _any(patterns: list[re.Pattern[str]], text: str) -> bool:
    return any(p.search(text) for p in patterns)


def _constraint(s: str) -> bool:
    return bool(_CONSTRAINT.search(s)) and not _masked(_CONSTRAINT, _CONSTRAINT_CANCEL, s)


def _definition(s: str) -> bool:
    return bool(_DEFINITION.search(s)) and not _masked(_DEFINITION, _DEFINITION_CANCEL, s)


_STATED_TASTE = _rx(r"\bprefer|(?:\bwould|'d) rather\b|\bnot a fan of\b")


def _procedure(s: str) -> bool:
    if _STATED_TASTE.search(s):  # "I'd rather see the benchmark first, then the change"
        return False
    return _any(_PROCEDURE, s) or len(_NUMBERED_LINE.findall(s)) >= 2


def _preference(s: str) -> bool:
    if _any(_PREFERENCE, s):
        return True
    return bool(_AVOID.search(s)) and not _masked(_AVOID, [_TO_AVOID], s)


def _masked(cue: re.Pattern[str], cancels: list[re.Pattern[str]], s: str) -> bool:
    """True when every cue occurrence lies inside a cancelling phrase."""
    spans = [m.span() for c in cancels for m in c.finditer(s)]
    for m in cue.finditer(s):
        if not any(lo <= m.start() < hi or lo < m.end() <= hi for lo, hi in spans):
            return False
    return True


_CHECKS: dict[MemoryKind, Callable[[str], bool]] = {
    "decision": is_decision,
    "constraint": _constraint,
    "definition": _definition,
    "procedure": _procedure,
    "preference": _preference,
}


# What happened, reported: "Cause: the task never closes its session", "Fixed: it is always..."
_REPORT = _rx(r"^\s*(?:root cause|cause|fixed|fix|outcome|result|symptom|repro)\s*:")


def is_question(sentence: str) -> bool:
    s = sentence.strip()
    return s.endswith("?") or bool(_QUESTION_START.match(s) and not s.endswith("."))


# An agent announcing its next step: "First, let me see if the schema needs a bump, then rerun
# the suite." is neither a rule nor a procedure anyone stated (``make bench-real``).
_AGENT_STEP = _rx(
    r"^(?:(?:now|next|first|then|so|ok(?:ay)?|good|great|perfect|alright|right)\b[,!.]?\s+)*"
    r"let me\b|^[^.!?]{0,80},\s*let me\b"
)


def classify_sentence(sentence: str, role: str = "") -> MemoryKind:
    """``role``: who said it (``said_by``), "" when unknown."""
    if is_tool_line(sentence) or _REPORT.match(sentence):
        return "observation"
    prose = strip_code(sentence).strip()
    if not prose or is_question(prose) or _AGENT_STEP.match(prose):
        return "observation"
    if role == AGENT:
        # the agent's words are a memory only as a choice it announces: its rules, tastes and
        # steps were wrong 30 times in 31 on the two projects no rule was written from
        # (``tests/bench/README.md``, "The agent's words"); a rule it restates was the user's
        # first, and is kept there.
        chose = is_decision(prose) and not agent_aside(prose)
        return "decision" if chose else "observation"
    if role == USER and users_choice(prose):  # before the taste's words ("I'd like")
        return "decision"
    for kind in PRIORITY:
        if _CHECKS[kind](prose):
            return kind
    return (users_kind(prose) if role == USER else None) or "observation"


@functools.lru_cache(maxsize=8192)  # sessions repeat themselves; the rules are pure
def classify(text: str, role: str = "") -> MemoryKind:
    """The strongest kind stated by any non-question sentence of ``text``; ``role`` is who said
    it (``said_by``: "user", "assistant"), "" when unknown."""
    found: list[MemoryKind] = []
    prose = without_tool_lines(strip_code(text))
    if _procedure_list(prose) and role != AGENT:  # the agent's numbered lists: its plans
        found.append("procedure")
    for sentence in split_sentences(prose):
        if not sentence.is_code:
            found.append(classify_sentence(sentence.text, role))
    for kind in PRIORITY:
        if kind in found:
            return kind
    return "observation"


def introduces_steps(sentence: str, text: str, end: int) -> bool:
    """Whether ``sentence``, ending at ``end`` of ``text``, announces numbered steps ("Here is
    how to add a plugin:" then "1. implement the Plugin trait", "2. register it"): a
    procedure, although none of its lines says so when read alone (a sentence of a summary
    is one of them). At least two steps must follow. The text after it is read in place
    (this runs for every sentence the summarizer weighs)."""
    return bool(_STEPS_INTRO.search(sentence)) and bool(_TWO_STEPS.match(text, end))


def _procedure_list(prose: str) -> bool:
    """A numbered list spans several "sentences" once split, so it is checked whole."""
    return len(_NUMBERED_LINE.findall(prose)) >= 2


def strongest(kinds: list[str]) -> MemoryKind:
    """The kind of a node: the most frequent non-observation kind of its bullets (ties by
    priority), else observation. An ``episode`` child keeps its parent an episode only if most
    bullets are episodes, which never happens by accident."""
    best: MemoryKind = "observation"
    best_count = 0
    for kind in (*PRIORITY, "episode"):
        count = kinds.count(kind)
        if count > best_count:
            best, best_count = kind, count
    return best
