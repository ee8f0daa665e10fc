"""Who said a sentence changes what it states: the user sets the course, the agent works.

The same words mean different things in the two mouths of a coding session. The user's "don't
try to implement the negation just yet" or "NO work on implementation yet!" is a rule the agent
must keep; "It seems like we should build the rock and push it to a registry as part of CI."
settles what is done. The agent's "We need to push the rock we built." is its next step,
"You'll need to log in to Docker Hub." an instruction for this once, "- Power users love it" a
selling point and "it's always imported" a description of the code. On the labelled real
sessions (``tests/bench/real/kinds_real.jsonl`` and ``kinds_heldout_real.jsonl``) 14 of the 16
sentences wrongly called a memory were the agent's, and half of the memories missed were the
user's, in words no rule for both read as one.

So, with the speaker known (``salience.classify(text, role)``; the summarizer knows each
sentence's event), two sets of rules apply on top of the shared ones, and an unknown speaker
(``role=""``, as in the written labelled sets) gets the shared rules alone:

- the user's (``users_kind``): a prohibition in the imperative ("don't change the type",
  "don't ever force-push", "do nit use it", "NO commits until the tests pass"; not one for
  the moment: "don't push just yet", "NO work on implementation yet"), a "should" said
  of a thing ("it should be self-describing"), what they do not want done ("I don't want you
  to open PRs"), a warning ("be careful not to lose my progress", "make sure you don't push
  to main") and the way it has to be done ("the right fix is to ...") are constraints; "we
  should <do>", "we should do that", "I don't want to do that" and "keep it as is" are
  decisions. Not: "I don't know", "maybe we should", "you mentioned that we should",
  a feeling ("I don't want to bother you", "make sure you don't give up"), a question;
- a choice in words no shared cue reads (``users_choice``, the user's; ``agents_choice``, the
  agent's; both checked before the shared rules, whose "I'd like" is a taste's word): the shape
  of what the project produces, asked for or approved ("let's remove the reviewed line from
  the template", "a folder for each team", "yes, link format sounds good"; not a trial,
  "please draft a template and we can iterate", nor one item, "let's remove bug 5 from the
  write-up"), a name picked ("a better name would be ..."), one of the ways shown liked more
  ("I like this design better"), what the work is to hold ("we'll want to describe the
  issue, then ..."), in and out of scope at once ("commit the script but not the generated
  files"), and a way dropped for another ("we don't need a virtualenv - let me use the system
  Python", in either mouth): decisions;
- the agent's sentence is a memory only as a decision it announces (``salience``): its rules,
  tastes and steps were wrong 30 times in 31 on two projects no rule was written from (a
  rule it restates is the user's, kept where they said it); and a decision cue in its
  aside (``agent_aside``) is none either: a sentence that holds a cue word but states no
  memory: its next step with "we need to" / "you'll need to" and a verb of doing, what
  others like
  ("users love it"), a description with "always" ("it's always imported"), what a thing
  needs ("the server needs to be reachable from the pod"), a heading or list
  intro ending in a colon, a quotation it opens (a role-played critic), a "step-by-step
  guide" or "the natural next step" of its own advice.
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
# said to cheer someone on, not to bind the work: "Don't give up!", "don't let it get you down"
_CHEER = (
    r"(?:give\s+up|quit|worry|forget|let|stop|be|feel|miss|hesitate|lose|sweat|panic|rush|"
    r"overthink|beat|push\s+yourself|stress|doubt)"
)
# "don't change the type", "(don't try to implement ...", "**Do nit use it ...**"; at a clause's
# start, so "I don't know" and "it doesn't" are not read ("never" is a shared cue already)
_PROHIBITION = _rx(
    r"(?:^|[,;:.!(\u2014-]|\b(?:and|but|please|just|so|also|then|again))[\s(*\"'_]*"
    rf"(?:do\s+not|don'?t|do\s+nit)\s+(?:ever\s+)?(?!ever\b|{_NOT_A_RULE}\b|{_CHEER}\b)\w+"
    r"(?![^.?!]*\byourself\b)"  # "don't overwork yourself"
)
# shouted: "NO commits until the tests pass", "NO merges BEFORE review" (in capitals only:
# "no details until Friday" is news)
_NOT_YET = re.compile(r"\bNO\s+(?:\w+\s+){1,3}(?:until|UNTIL|before|BEFORE)\b")
# an order for this moment, not a rule: "don't implement the negation just yet", "NO work on
# implementation yet!", "don't push for now" (``tests/bench/real/LABELLING.md``: "don't commit
# yet" is an observation; the user lifts it within the session)
_FOR_NOW = _rx(r"\byet\b|\bfor\s+(?:now|the\s+moment|the\s+time\s+being)\b|\bright\s+now\b")
_SHOULD = r"(?:should|shoudl|shuold|sould)"
# "it should be self-describing", "the story names should match": a thing's rule; not "we"
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
# "It seems like we should build the rock ...", "we should do that", "I don't want to do that"
_WE_SHOULD = _rx(rf"\bwe\s+{_SHOULD}\s+(?:really\s+|definitely\s+|also\s+)?(?!not\b)\w+")
_HEDGED = _rx(
    rf"\b(?:maybe|perhaps|mentioned|said|suggested|wonder|whether|if)\b[^.?!]*\bwe\s+{_SHOULD}"
    rf"|\bwe\s+{_SHOULD}\s+(?:think|consider|discuss|talk)\b"
    rf"|\bwe\s+{_SHOULD}\b[^.?!]{{0,40}}\b(?:maybe|perhaps|probably)\b"
)
_REFUSAL = _rx(
    r"\bi\s+(?:really\s+)?(?:don'?t|do not)\s+want\s+(?:you\s+)?to\s+do\s+(?:that|this)\b"
)
# "keep it as is", "no, leave the docs as they are": settled. ("I've changed my mind" is not:
# what follows it says whether a choice was made or the work reordered, "I changed my mind,
# let's leave these for last": ``tests/bench/real/LABELLING.md``, "Order of work")
_AS_IS = _rx(
    r"\b(?:keep|leave)\s+(?:it|this|that|them|these|those|the\s+\w+(?:\s+\w+)?\s+)?\s*as\s+"
    r"(?:is|it\s+is|they\s+are)\b"
)
# what the user does not want done, in the first person: "I don't want you to touch the
# migrations", "i don't want to open PRs directly"; not a feeling ("I don't want to bother
# you", "... to miss it", "... to be late")
_UNWANTED = _rx(
    r"\bi\s+(?:really\s+|still\s+)?(?:don'?t|do not|dont)\s+want\s+(?:you\s+|anyone\s+)?to\s+"
    r"(?!be\b|bother|miss|lose|hurt|sound|seem|feel|get\b|go\b|leave|think|worry|rush|wait|"
    r"hear|know|see|say|jinx|spoil|overdo|intrude|impose|keep\s+you|let\b|give\s+up)\w+"
)
# a warning to keep: "please be careful not to lose my progress in the database", "be careful
# with the production config", "make sure you don't push to main"
_CAREFUL = _rx(
    r"\bbe\s+(?:very\s+|extra\s+|really\s+)?careful\s+(?:not\s+to|to\s+not|to|with|about|when|"
    r"that)\b|\bmake\s+sure\s+(?:not\s+to|to\s+not|(?:you|we)\s+(?:don'?t|do\s+not|never))\s+"
    rf"(?!{_CHEER}\b)"
)
# "the right fix is to pass the values in": how it has to be done
_RIGHT_WAY = _rx(
    r"\bthe\s+(?:right|correct|proper)\s+(?:fix|way|approach|thing\s+to\s+do)\s+"
    r"(?:here\s+)?(?:is|would\s+be)\s+to\b"
)


# --- choices, in either mouth, that the shared decision cues do not read --------------------------

# What a lasting shape of the project's output looks like in words: something done for every
# item ("a folder for each team", "take the background out of each individual file", "a
# write-up we can provide to each team"), a template, a naming scheme, a layout, a format.
# (``tests/bench/real/LABELLING.md``, "Edits to what the project produces": a decision; one
# item removed from one file is not.) Not "each of the repos", "each one", "each time".
_SCHEME = (
    r"(?:\b(?:for|in|to|from|into|out\s+of)\s+(?:each|every)\s+(?:individual\s+|single\s+)?"
    r"(?!one\b|of\b|time\b|step\b|other\b)\w+|\btemplates?\b|\bnaming\s+(?:scheme|convention)\b|"
    r"\b(?:layout|format|structure)\b)"
)
# ... asked for as the way it is to be ("let's", "please", "I'd like") or approved ("yes, link
# format sounds good"); not an order to look or to try first ("please draft a template and we
# can iterate on it": an observation)
_TRIAL = (
    r"(?:draft|sketch|propose|suggest|show|try|review|check|look|see|think|consider|explore|agree|"
    r"discuss|find|test|run|figure|investigate|circle|update\s+based)"
)
_SHAPED = _rx(
    r"\b(?:let'?s|please|i(?:'d|\s+would)\s+(?:like|love|want))\s+(?:also\s+|just\s+|to\s+)?"
    rf"(?!{_TRIAL}\b)\w+\b[^.?!]*" + _SCHEME
)
_APPROVED = _rx(r"^\s*(?:yes|yeah|yep|ok(?:ay)?|sure|great|perfect)\b[^.?!]*" + _SCHEME)
# a name picked: "a better name for the third story would be filter-by-multiple-criteria"
_BETTER_NAME = _rx(r"\b(?:a|the)\s+better\s+name\s+(?:for\s+[^.?!]+?\s+)?(?:would\s+be|is)\b")
# one of the ways offered picked by liking it more: "I like this design better" (a taste of
# these people's is "I like small commits"; LABELLING.md: a choice comes before a taste)
_LIKED_MORE = _rx(
    r"\bi\s+(?:like|prefer)\s+(?:this|that|your|the\s+(?:new|old|first|second|other|last))"
    r"\s+(?:\w+\s+)?(?:one\s+)?(?:better|more)\b"
)
# what the work is to contain: "we'll want to describe the issue and then provide a snippet";
# not wanting to know or to find out
_WE_WANT = _rx(
    r"^\s*(?:so,?\s+|and\s+|also,?\s+|then,?\s+)?we(?:'ll|\s+will)?\s+want\s+to\s+"
    rf"(?!{_TRIAL}\b|know\b|see\b|make\s+sure\b|be\b|understand\b|wait\b)\w+"
)
# in and out of scope in one breath: "I'd like to commit the script but not the generated
# files" (not "but not yet", an order for now)
_BUT_NOT = _rx(
    r"\b(?:let'?s|i(?:'d|\s+would)\s+like\s+to|we(?:'ll|\s+will))\s+\w+\b[^.?!]*\bbut\s+not\s+"
    r"(?!yet\b|now\b|right\s+now\b)"
)
# one way dropped for another: "we don't actually need a virtualenv - let me use the system
# Python", "we don't need to fork the whole operator: we just need a wrapper charm"
_NOT_NEEDED = _rx(
    r"\bwe\s+(?:don'?t|do\s+not)\s+(?:actually\s+|really\s+)?need\s+(?:a|an|to|the|any)\b"
    r"[^.?!]*?(?:\u2014|\u2013|\s-\s|;|:)\s*(?:we\s+(?:can\s+)?(?:just|only)|just|let\s+me|"
    r"instead)\b"
)


# what they want, said as the aim: "What we want is for ruff format to run on every edit"
_WHAT_WE_WANT = _rx(r"^\s*(?:so\s+|but\s+)?what\s+(?:we|i)\s+(?:really\s+)?want\s+is\b")
# a change made for a lasting reason: "let's add that back for compatibility with the Go
# version", "to keep things compatible, let's add a script in that location"
_COMPATIBLE = (
    r"(?:for\s+(?:compatibility|consistency)|to\s+(?:keep|stay|be)\s+(?:\w+\s+)?"
    r"(?:compatible|consistent))\b"
)
_FOR_COMPATIBILITY = _rx(
    rf"\blet'?s\s+\w+\b[^.?!]*\b{_COMPATIBLE}|\b{_COMPATIBLE}[^.?!]*\blet'?s\s+\w+"
)
# one way over another in the agent's plan: "We need to MERGE them, not choose one or the other"
_THIS_NOT_THAT = _rx(r"^\s*we\s+(?:really\s+)?need\s+to\s+\w+[^.?!]*?,\s*not\s+(?:just\s+)?\w+")


def users_choice(sentence: str) -> bool:
    """True when the user's sentence settles how the work is to be, in words the shared
    decision cues do not read (module docstring); checked before the shared rules, since "I'd
    like" and "I like" are a taste's words there."""
    if _FOR_NOW.search(sentence):
        return False
    return any(
        p.search(sentence)
        for p in (
            _SHAPED,
            _APPROVED,
            _BETTER_NAME,
            _LIKED_MORE,
            _WE_WANT,
            _BUT_NOT,
            _NOT_NEEDED,
            _WHAT_WE_WANT,
            _FOR_COMPATIBILITY,
        )
    )


def agents_choice(sentence: str) -> bool:
    """True when the agent announces a way of doing it chosen over another (module
    docstring)."""
    return bool(_NOT_NEEDED.search(sentence) or _THIS_NOT_THAT.search(sentence))


# a soft target (LABELLING.md): "Coverage of 80%+ would be good"
_SOFT_TARGET = _rx(
    r"\b\d+(?:\.\d+)?\s*%\s*\+?[^.?!]*\bwould\s+be\s+(?:good|nice|great|ideal|enough)\b"
)


def users_kind(sentence: str) -> MemoryKind | None:
    """The kind the user's sentence states beyond the shared rules, or None (module
    docstring). The caller has already called a question an observation."""
    if _REFUSAL.search(sentence) or _AS_IS.search(sentence):
        return "decision"
    if _WE_SHOULD.search(sentence) and not _HEDGED.search(sentence):
        return "decision"
    if (_PROHIBITION.search(sentence) or _NOT_YET.search(sentence)) and not _FOR_NOW.search(
        sentence
    ):
        return "constraint"
    if _UNWANTED.search(sentence) or _CAREFUL.search(sentence) or _RIGHT_WAY.search(sentence):
        return "constraint"
    if _THING_SHOULD.search(sentence) and not _PREDICTION.search(sentence):
        return "constraint"
    if _SOFT_TARGET.search(sentence):
        return "preference"
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
_OTHERS_LIKE = _rx(
    r"\b(?:users?|people|developers|teams?|they|he|she|everyone|power\s+users)\s+"
    r"(?:really\s+|all\s+)?(?:love|like|likes|loves|prefer|prefers)\b"
)
_DESCRIBED = _rx(r"\b(?:it|this|that|which)(?:'s|\s+is|\s+are)\s+always\s+\w+(?:ed|en)\b")
# what a thing needs, explained: "the mock server needs to be accessible from the pod", "an
# AwaitRemove that needs to be awaited", "it needs to be co-located with postgresql"; the
# agent explaining how things work, not a rule of the project (the user's "the config needs
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
        or _OTHERS_LIKE.search(sentence)
        or _DESCRIBED.search(sentence)
        or _THING_NEEDS.search(sentence)
        or _LIST_INTRO.search(sentence)
        or _QUOTED.match(sentence)
        or _ADVICE.search(sentence)
    )
