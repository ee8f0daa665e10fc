"""The coding-session rules of the memory-kind classifier: what tools print, and decisions.

``salience.classify`` reads natural-language turns. In a coding session two thirds of the text
is tool output, whose words look like rules ("SIM108 Use ternary operator instead of ...",
"fatal: You must specify a repository to clone.", clippy's "help: you should avoid..."), but
nobody stated them: they are observations. So:

- an event a tool produced (role ``tool``, type ``tool_call`` / ``tool_result``, a hook's
  ``PreToolUse`` / ``PostToolUse`` / ``PostToolUseFailure`` or a ``tool_name`` in its metadata)
  is an observation whatever it says (``agent_memory_common.contracts.memory.is_tool_event``, shared
  with the salience of raw events);
- inside any text, a line in a tool's format is an observation too (``is_tool_line``): a
  ``file:line[:col]`` prefix, a lint code first (``B006``, ``E501``, ``TRY003``, ``PT011``), a
  compiler's ``error[E0502]:``, ``warning:``, ``note:``, ``help:``, git's ``fatal:`` and
  ``hint:``, a traceback, an ``ExceptionName: message`` line, pytest's ``E   `` lines, npm's
  ``npm WARN``, an eslint row (``12:5  error  message  rule-name``), rustc's ``-->`` and
  ``= help:``. A person pasting lint output into a prompt pastes an observation as well.

Decisions ("what did we decide?" is the first question developers ask) are recognised by how
people announce a choice: "we go with X", "let's use X", "we'll use X", "we decided",
"Decision: ...", "we're switching to X", "we replace X with Y", "from now on", "going forward",
"we picked / chose / opted for / settled on X", "X it is", "yes, option A". A question
("should we use X?"), an open choice ("we haven't decided", "not decided yet") or a report of
someone else's choice in the past tense with "before"/"used to" is not a decision.

All of it is regular expressions: deterministic, offline, microseconds per sentence.
"""

from __future__ import annotations

import re


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# --- tool output ----------------------------------------------------------------------------

# Lint codes: ruff/flake8 (E501, B006, TRY003, PERF401, RUF005, SIM102, UP007, PT011, PTH123),
# pylint (C0114, W0611), clippy/rustc (E0502), TypeScript (TS2322). Upper case, so not with _rx.
_LINT_CODE = r"(?:[A-Z]{1,5}\d{3,4}|TS\d{4})"
_TOOL_LINE = [
    # file:line[:col]: ..., "./tdk: ...", "src/app.ts(14,7): ..."
    re.compile(r"^\s*[\w./\\~-]*[\w-]\.\w{1,6}:\d+(?::\d+)?(?::|\s-\s|\s)"),
    re.compile(r"^\s*[\w./\\~-]+\(\d+,\d+\):"),
    re.compile(r"^\s*\.{0,2}/[\w./-]+:\s"),
    # a lint code first: "B006 Do not use ...", "E501 line too long"
    re.compile(r"^\s*" + _LINT_CODE + r"\b\s"),
    # compilers and git: "error[E0502]:", "warning:", "error:", "note:", "help:", "fatal:"
    re.compile(r"^\s*(?:=\s*)?(?:error|warning|note|help|hint|fatal)(?:\[\w+\])?:"),
    _rx(r"^\s*(?:-->|\|\s|\d+\s+\|)"),
    # Python: tracebacks, "File "x.py", line 3", "ValueError: ...", "psycopg.errors.X: ..."
    _rx(r"^\s*traceback \(most recent call last\)"),
    re.compile(r'^\s*File "[^"]+", line \d+'),
    re.compile(r"^\s*(?:[a-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Warning|Violation|Failure)\b:"),
    # pytest: "E   AssertionError: ...", "FAILED tests/x.py::test_y - ...", "==== 3 passed ===="
    re.compile(r"^\s*E\s{2,}\S"),
    re.compile(r"^\s*(?:FAILED|PASSED|ERROR|SKIPPED|XFAIL)\s+\S+::"),
    re.compile(r"^\s*[=_-]{3,}\s.*[=_-]{3,}\s*$"),
    # package managers, docker, make: "npm WARN ...", "ERROR: failed to solve", "make: *** ..."
    re.compile(r"^\s*(?:npm|yarn|pnpm|pip|cargo|make|docker)(?:\s+(?:WARN|ERR!|error|notice)|:)\s"),
    re.compile(r"^\s*(?:ERROR|WARNING|WARN|INFO|DEBUG|CRITICAL|FATAL)\b:?\s"),
    # eslint rows: "8:3  error  'x' is assigned a value but never used  no-unused-vars"
    _rx(r"^\s*\d+:\d+\s+(?:error|warning)\s"),
    # a rule id or a mypy error code at the end: "... [var-annotated]", "... no-console"
    re.compile(r"\s\[[a-z]+(?:-[a-z]+)+\]\s*$"),
]


def is_tool_line(sentence: str) -> bool:
    """True when the sentence is in a tool's output format (see the module docstring)."""
    return any(p.search(sentence) for p in _TOOL_LINE)


def without_tool_lines(text: str) -> str:
    """``text`` without its lines in a tool's format: the sentences after a tool line's first
    one ("npm WARN deprecated x: ... Do not use it.") are the tool's words too."""
    if "\n" not in text:
        return "" if is_tool_line(text) else text
    return "\n".join(line for line in text.split("\n") if not is_tool_line(line))


def in_tool_line(text: str, offset: int) -> bool:
    """True when the character at ``offset`` of ``text`` lies on a line in a tool's format."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return is_tool_line(text[start : end if end >= 0 else len(text)])


# --- decisions ------------------------------------------------------------------------------

_WE = r"(?:we|i|the team|everyone)"
_LETS_VERB = (
    r"(?:use|go with|stick with|stick to|keep|switch to|adopt|pick|choose|drop|replace|"
    r"standardi[sz]e on|settle on|move to|migrate to|rely on)"
)
_WILL_VERB = (
    r"(?:use|go with|stick with|switch|adopt|pick|choose|drop|replace|standardi[sz]e on|"
    r"settle on|move to|migrate to|rely on|ship|store)"
)
# "Agreed, httpx it is.", "OK, Postgres it is for the queue": the choice, then "it is", at the
# start of a sentence; not "look how cute it is", "that's what it is".
_IT_IS = _rx(
    r"^\s*(?:(?:agreed|ok(?:ay)?|fine|alright|right|so|then|good)[,.!]?\s+)?((?:\S+\s+){1,4})"
    r"it is\b(?=\s*(?:[.!,;:]|$|for\b|then\b))"
)
_NOT_A_CHOICE_TEXT = """
    what how where when why as because so whatever which if and but that this whether know see
    think sure is was yes no well now here there look who
"""
_NOT_A_CHOICE = frozenset(_NOT_A_CHOICE_TEXT.split())
# "Now let's move on to step 2": the next step of a plan, not a technology moved to
_NEXT_PHASE = _rx(r"\bmove (?:on )?to (?:phase|step|stage|part|the next)\b")
# "let's keep going", "let's keep it up", "let's keep each other motivated": encouragement
_LETS_KEEP_ON = _rx(
    r"\blet'?s\s+keep\s+(?:\w+(?:ing\b|in')|it\b|on\b|at\b|up\b|each\b|us\b|that\b|this\b|"
    r"in touch\b|an eye\b|things\b|the (?:\w+ )?(?:going|vibes?|spirit)\b)"
)
_DECISION = [
    _rx(r"(?:^|[:;,.]\s*)decision\s*:|\bdecision is\b|\bfinal call\b|\bmade the call\b"),
    _rx(r"\b" + _WE + r"(?:'ve| have| had)?\s+(?:(?:finally|now|just|all)\s+)?decided\b"),
    _rx(r"\bit(?:'s| is| was| has been)\s+decided\b|\bdecided\s*:|\bdecided on\b"),
    _rx(r"\b" + _WE + r"\s+(?:(?:now|then|finally)\s+)?go with\b"),
    _rx(r"\b(?:let's|lets|let us)\s+(?:just\s+)?" + _LETS_VERB + r"\b"),
    _rx(
        r"\b(?:we|the team)(?:'ll| will| are going to|'re going to)\s+(?:just\s+|now\s+)?"
        + _WILL_VERB
        + r"\b"
    ),
    _rx(
        r"\b" + _WE + r"(?:'re| are|'m| am)\s+(?:going with|replacing|dropping|adopting|"
        r"standardi[sz]ing on|sticking with(?! it\b)|(?:switching|moving|migrating)\b[^.?!]*\bto)\b"
    ),
    _rx(r"^\s*(?:so\s+|ok(?:ay)?,?\s+)?(?:switching|moving|migrating)\b[^.?!]*\bto\b"),
    _rx(r"\b" + _WE + r"\s+(?:now\s+)?(?:switch|replace|migrate)\b[^.?!]*\b(?:to|with|by)\b"),
    _rx(
        r"\b" + _WE + r"(?:'ve| have)?\s+(?:picked(?! up\b)|chose|chosen|opted for|settled on|"
        r"went with|gone with|agreed on|agreed to|standardi[sz]ed on|landed on)\b"
    ),
    _rx(r"\b(?:the team|everyone|we all)\s+agreed\b"),
    _rx(r"\bfrom now on\b|\bgoing forward\b|\bfrom here on\b|\bhenceforth\b"),
    # an option picked from the ones offered: "yes, option a, but ...", "go with option 2"
    _rx(r"^\s*(?:yes|yeah|yep|ok(?:ay)?|sure|agreed)\b[,.!]?\s+(?:let's\s+)?option\s+\w\b"),
    _rx(r"\b(?:go|going|we'll go|let's go) with option\s+\w+\b"),
    # a deferral is a choice too: "let's leave the caching for another day"
    _rx(r"\blet'?s\s+leave\s+[^.?!]*\bfor\s+(?:later|another|the next|next)\b"),
    _rx(r"^\s*for now,?\s+" + _WE + r"\b"),
    _rx(
        r"^\s*we (?:use|draw|build|ship|write|keep|store|run) \S+[^.?!]*(?:\bfor\b|,\s*no\b|"
        r"\binstead\b|\brather than\b)"
    ),
]
_DECISION_CANCEL = [
    _rx(
        r"\b(?:not|haven't|hasn't|have not|has not|didn't|did not|never|un)\s*"
        r"(?:yet\s+)?decided\b|\bnot decided\b|\bundecided\b"
    ),
    _rx(
        r"\b(?:can't|cannot|couldn't|could not|won't|will not|didn't|did not)\s+"
        r"(?:\w+\s+)?decide\b"
    ),
    _rx(r"\b(?:used to|would have|could have|should have|might)\b"),
    _rx(r"\bif (?:we|i)\b"),  # a hypothesis: "if we go with X, the tests change"
]


def is_decision(sentence: str) -> bool:
    """True when the sentence announces a choice (see the module docstring)."""
    if any(p.search(sentence) for p in _DECISION):
        cued = not _LETS_KEEP_ON.search(sentence) or _cue_outside(sentence, _LETS_KEEP_ON)
    else:
        found = _IT_IS.match(sentence)
        words = {w.strip(",.!'\"").lower() for w in found.group(1).split()} if found else set()
        cued = found is not None and not words & _NOT_A_CHOICE
    if cued and _NEXT_PHASE.search(sentence):
        rest = _NEXT_PHASE.sub(" ", sentence)
        cued = any(p.search(rest) for p in _DECISION)
    return cued and not any(p.search(sentence) for p in _DECISION_CANCEL)


def _cue_outside(sentence: str, mask: re.Pattern[str]) -> bool:
    """True when some decision cue lies outside every ``mask`` span."""
    spans = [m.span() for m in mask.finditer(sentence)]
    for pattern in _DECISION:
        for m in pattern.finditer(sentence):
            if not any(lo <= m.start() < hi for lo, hi in spans):
                return True
    return False
