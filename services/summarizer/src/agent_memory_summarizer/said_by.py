"""Who said a sentence changes what it states: the user sets the course, the agent works.

The same words mean different things in the two mouths of a coding session. The user's "don't
touch the public API in this change" or "NO merges before review!" is a rule the agent must
keep; "I guess we should ship the client as a wheel from CI." settles what is done. The agent's
"We need to rerun the migration we wrote." is its next step and "You'll need to sign in to the
registry first." an instruction for this once. On the labelled real sessions
(``tests/bench/real/kinds_real.jsonl`` and ``kinds_heldout_real.jsonl``) 14 of the 16
sentences wrongly called a memory were the agent's, and half of the memories missed were the
user's, in words no rule for both read as one.

So, with the speaker known (``salience.classify(text, role)``; the summarizer knows each
sentence's event), two sets of rules apply on top of the shared ones, and an unknown speaker
(``role=""``, as in the written labelled sets) gets the shared rules alone:

- the user's (``users_kind``): a prohibition in the imperative ("don't rename the table",
  "don't ever rebase main", "NO releases until the audit is done"; not one for the moment:
  "don't deploy just yet", "NO refactoring yet") and a "should" said of a thing ("each
  handler should stay small") are constraints; "we should <do>", "we should do that" and
  "keep it as is" are decisions. Not: "I don't know", "maybe we should", "you mentioned that
  we should", a feeling ("make sure you don't give up"), a question;
- a choice in words no shared cue reads (``users_choice``; checked before the shared rules,
  whose "I'd like" is a taste's word): the shape of what the project produces, asked for
  ("let's drop the footer from the template", "I'd like a page for each service"; not a
  trial, "please sketch a template first"): a decision;
- the agent's sentence is a memory only as a decision it announces (``salience``): its rules,
  tastes and steps were wrong 30 times in 31 on two projects no rule was written from (a
  rule it restates is the user's, kept where they said it); and a decision cue in its
  aside (``agent_aside``) is none either: a sentence that holds a cue word but states no
  memory: its next step with "we need to" / "you'll need to" and a verb of doing, what a
  thing needs ("the worker needs to be reachable from the host"), a heading or list intro
  ending in a colon, a quotation it opens (a role-played critic), a "step-by-step guide" or
  "the natural next step" of its own advice.

Rules that matched one or two labelled sentences of the sets read while writing them and none
of the blind sets (``kinds_heldout4_real.jsonl``, ``kinds_heldout5_real.jsonl``) were removed
(issue 52): a refusal, what the user does not want done, a warning, "the right way is to",
approval of a shape, a better name, a way liked more, "we'll want to", in and out of scope at
once, a way dropped for another (either mouth), "what we want is", a change for
compatibility, "X, not Y" in the agent's plan, a soft target, what others like and "it's
always <done>" in the agent's asides; and the spellings of typos ("do nit", "shoudl"). A rule
comes back when it also holds on a set nobody read while writing it.
"""

from __future__ import annotations

import re

from agent_memory_common.contracts.memory import MemoryKind

USER = "user"
AGENT = "assistant"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# --- the user's --------------------------------------------------------------------------------

_NOT_A_RULE = r"(?:know|see|think|understand|remember|get|care|mind|mean|believe|recall|have)"
# said to cheer someone on, not to bind the work: "Don't give up!", "don't let that stop you"
_CHEER = (
    r"(?:give\s+up|quit|worry|forget|let|stop|be|feel|miss|hesitate|lose|sweat|panic|rush|"
    r"overthink|beat|push\s+yourself|stress|doubt)"
)
# "don't change the type", "(don't add ...", "**Do not use it ...**"; at a clause's start, so "I
# don't know" and "it doesn't" are not read ("never" is a shared cue already). Spelled right:
# a typo of one labelled sentence ("do nit") is no rule of the language (issue 52).
_PROHIBITION = _rx(
    r"(?:^|[,;:.!(\u2014-]|\b(?:and|but|please|just|so|also|then|again))[\s(*\"'_]*"
    rf"(?:do\s+not|don'?t)\s+(?:ever\s+)?(?!ever\b|{_NOT_A_RULE}\b|{_CHEER}\b)\w+"
    r"(?![^.?!]*\byourself\b)"  # "don't overwork yourself"
)
# shouted: "NO commits until the tests pass", "NO merges BEFORE review" (in capitals only:
# "no details until Friday" is news)
_NOT_YET = re.compile(r"\bNO\s+(?:\w+\s+){1,3}(?:until|UNTIL|before|BEFORE)\b")
# an order for this moment, not a rule: "don't deploy just yet", "NO refactoring yet!", "don't
# push for now" (``tests/bench/real/LABELLING.md``: "don't commit
# yet" is an observation; the user lifts it within the session)
_FOR_NOW = _rx(r"\byet\b|\bfor\s+(?:now|the\s+moment|the\s+time\s+being)\b|\bright\s+now\b")
_SHOULD = r"should"
# "each handler should stay small", "the file names should match": a thing's rule; not "we"
# (a course, below), "you" (a request), nor a prediction ("this should fix it")
_THING_SHOULD = _rx(
    rf"\b(?:it|each|every|all|the\s+\w+(?:\s+\w+)?)\s+{_SHOULD}\s+(?:always\s+|only\s+|"
    r"never\s+|not\s+|also\s+)?(?:be|have|stay|remain|match|name|use|keep|contain|live|go)\b"
    # a hope, not a rule: "it should be fun", "the trip should be great"
    r"(?!\s+(?:\w+\s+)?(?:fun|great|good|nice|ok|okay|fine|easy|interesting|amazing|awesome|"
    r"exciting|cool|lovely|wonderful|beautiful|a\s+blast)\b)"
)
_PREDICTION = _rx(
    rf"\b(?:this|that|it|which|now)\s+{_SHOULD}\s+(?:now\s+|also\s+)?(?:fix|resolve|help|work|"
    r"pass|allow|make|solve|be\s+(?:fixed|resolved|ready|fine|enough|working|able))\b"
)
# "I guess we should ship it as a wheel", "we should do that"
_WE_SHOULD = _rx(rf"\bwe\s+{_SHOULD}\s+(?:really\s+|definitely\s+|also\s+)?(?!not\b)\w+")
_HEDGED = _rx(
    rf"\b(?:maybe|perhaps|mentioned|said|suggested|wonder|whether|if)\b[^.?!]*\bwe\s+{_SHOULD}"
    rf"|\bwe\s+{_SHOULD}\s+(?:think|consider|discuss|talk)\b"
    rf"|\bwe\s+{_SHOULD}\b[^.?!]{{0,40}}\b(?:maybe|perhaps|probably)\b"
)
# "keep it as is", "no, leave the docs as they are": settled. ("I've changed my mind" is not:
# what follows it says whether a choice was made or the work reordered:
# ``tests/bench/real/LABELLING.md``, "Order of work")
_AS_IS = _rx(
    r"\b(?:keep|leave)\s+(?:it|this|that|them|these|those|the\s+\w+(?:\s+\w+)?\s+)?\s*as\s+"
    r"(?:is|it\s+is|they\s+are)\b"
)


# --- choices the shared decision cues do not read ------------------------------------------------

# What a lasting shape of the project's output looks like in words: something done for every
# item ("a page for each service", "strip the header from every single file"), a template, a
# naming scheme, a layout, a format. (``tests/bench/real/LABELLING.md``, "Edits to what the
# project produces": a decision; one item removed from one file is not.) Not "each of the
# repos", "each one", "each time".
_SCHEME = (
    r"(?:\b(?:for|in|to|from|into|out\s+of)\s+(?:each|every)\s+(?:individual\s+|single\s+)?"
    r"(?!one\b|of\b|time\b|step\b|other\b)\w+|\btemplates?\b|\bnaming\s+(?:scheme|convention)\b|"
    r"\b(?:layout|format|structure)\b)"
)
# ... asked for as the way it is to be ("let's", "please", "I'd like"); not an order to look or
# to try first ("please sketch a template first": an observation)
_TRIAL = (
    r"(?:draft|sketch|propose|suggest|show|try|review|check|look|see|think|consider|explore|agree|"
    r"discuss|find|test|run|figure|investigate|circle|update\s+based)"
)
_SHAPED = _rx(
    r"\b(?:let'?s|please|i(?:'d|\s+would)\s+(?:like|love|want))\s+(?:also\s+|just\s+|to\s+)?"
    rf"(?!{_TRIAL}\b)\w+\b[^.?!]*" + _SCHEME
)


def users_choice(sentence: str) -> bool:
    """True when the user's sentence settles the shape of what the project produces, in words
    the shared decision cues do not read (module docstring); checked before the shared rules,
    since "I'd like" is a taste's word there."""
    if _FOR_NOW.search(sentence):
        return False
    return bool(_SHAPED.search(sentence))


def users_kind(sentence: str) -> MemoryKind | None:
    """The kind the user's sentence states beyond the shared rules, or None (module
    docstring). The caller has already called a question an observation."""
    if _AS_IS.search(sentence):
        return "decision"
    if _WE_SHOULD.search(sentence) and not _HEDGED.search(sentence):
        return "decision"
    if (_PROHIBITION.search(sentence) or _NOT_YET.search(sentence)) and not _FOR_NOW.search(
        sentence
    ):
        return "constraint"
    if _THING_SHOULD.search(sentence) and not _PREDICTION.search(sentence):
        return "constraint"
    return None


# --- the agent's -------------------------------------------------------------------------------

_DOING = (
    r"(?:push|pull|update|fix|add|run|check|create|install|log\s+in|login|build|rebuild|commit|"
    r"change|remove|restart|wait|make|set\s+up|configure|write|move|rename|delete|verify|test|"
    r"look|find|investigate|refresh|deploy|redeploy|re-run|rerun|pass|provide|modify|edit)"
)
_NEXT_STEP = _rx(
    rf"^\s*(?:[-*\u2022]\s*)?(?:so\s+|now\s+|first,?\s+|then\s+)?(?:we|you)(?:'ll|\s+will)?\s+"
    rf"(?:also\s+|still\s+|first\s+|just\s+)?need\s+to\s+{_DOING}\b"
)
# what a thing needs, explained: "the worker needs to be reachable from the host", "a promise
# that needs to be awaited", "it needs to be installed next to the database"; the agent
# explaining how things work, not a rule of the project (the user's "the config needs
# to be TOML" stays one). Not a person's need: "we (really) need to be careful"
_THING_NEEDS = _rx(
    r"\b(?!(?:we|you|i|really|also|still|just|first|now|then|definitely|actually)\b)\w+\s+"
    r"needs?\s+to\s+be\s+\w+"
)
_LIST_INTRO = re.compile(r":\s*$")
_QUOTED = re.compile(r"^\s*[\"\u201c]")
_ADVICE = _rx(r"\bstep[- ]by[- ]step\s+guide\b|\bnatural next step\b|^\s*recommended next step\b")


def agent_aside(sentence: str) -> bool:
    """True when the agent's sentence states no memory although a cue word is in it (module
    docstring)."""
    return bool(
        _NEXT_STEP.search(sentence)
        or _THING_NEEDS.search(sentence)
        or _LIST_INTRO.search(sentence)
        or _QUOTED.match(sentence)
        or _ADVICE.search(sentence)
    )
