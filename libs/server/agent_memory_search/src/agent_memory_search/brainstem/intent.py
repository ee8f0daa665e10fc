"""What kind of question is this? Four intents, told apart by cheap surface cues.

- ``locate``: the caller wants a pointer to a specific moment or artefact ("where did we set
  the timeout", "find the migration error", a quoted phrase, a file path or an error code).
  Exact words matter most, so BM25 leads.
- ``answer``: a question whose answer is in a few moments ("what port does the gateway use?").
  Hybrid, moments first (events and grips).
- ``explore``: a topic to survey ("auth refactor", "tell me about the indexer", "which topics
  came up?"). Overviews (TOC nodes) are welcome, and diversity matters more than the single
  best hit. Only the plural "topics" and "themes" ask for a survey: in a coding session the
  singular is mostly a thing asked about ("which theme do new users get?").
- ``time-boxed``: the question is mostly a period ("what did we do yesterday?"): the time range
  is the main filter and the remaining words are too generic to rank by.

No model is involved: the rules run in microseconds and their mistakes are cheap, because every
intent still searches every tier that is up; intent only changes weights, types and depth.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

Intent = Literal["explore", "answer", "locate", "time-boxed"]
INTENTS: tuple[str, ...] = get_args(Intent)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words(
    """a about above after again all also am an and any are as at be been before being below
    between both but by can could did do does doing done down during each few for from further
    get got had has have having he her here hers him his how i if in into is it its itself just
    me more most my no nor not now of off on once only or other our ours out over own same she
    should so some such than that the their theirs them then there these they this those through
    to too under until up us very was we were what when where which while who whom why will with
    would you your yours happen happened happening anything something thing things stuff going
    went go tell show me let lets know please"""
)
# Words that, once the time expression is gone, still say nothing about *what* is sought.
GENERIC_WORDS = STOPWORDS | _words(
    """work worked working doing did done discuss discussed talk talked say said decide decided
    make made change changed changes session sessions day days week summary summarize recap
    overview activity activities progress everything new latest recent recently"""
)

_LOCATE_START = re.compile(
    r"^\s*(where\b|find\b|locate\b|search\b|look\s+up\b|show\s+me\s+(the|where|which)\b|"
    r"which\s+(file|session|commit|event|message|conversation|day|line|command|error|pr|branch)\b|"
    r"when\s+(did|was|were|have|has)\b|in\s+which\b|at\s+what\s+(time|point)\b)",
    re.IGNORECASE,
)
_ARTEFACT = re.compile(
    r"""("[^"]{2,}"|'[^']{3,}'|`[^`]+`|"""  # quoted text
    r"""[\w.-]*/[\w./-]+|"""  # a path
    r"""\b[\w-]+\.(py|ts|js|go|rs|sql|md|json|yaml|yml|toml|sh|txt|cfg|ini)\b|"""  # a file
    r"""\b[A-Z]{1,5}-?\d{2,}\b|\b[0-9a-f]{7,40}\b|"""  # an error code, ticket or hash
    r"""\b\w+(Error|Exception)\b|\w+::\w+|\b\w+\(\))""",
    re.IGNORECASE,
)
_EXPLORE = re.compile(
    r"(\boverview\b|\bsummar(y|ise|ize)\b|\brecap\b|\beverything\b|\btell\s+me\s+about\b|"
    r"\bwhat\s+do\s+(we|i|you)\s+know\b|\bhistory\s+of\b|\ball\s+about\b|\bwhat\s+have\s+we\b|"
    r"\bwhat\s+has\s+been\b|\btopics\b|\bthemes\b|\bbackground\s+on\b|\bexplore\b)",
    re.IGNORECASE,
)
# "Where did we leave off?": a period not named but meant, the last day of work in scope
# (``search/period.py``). Only when nothing else is asked: "where did we stop on the billing
# refactor?" is about the refactor, wherever in time it was last touched.
_RESUME = re.compile(
    r"(\bwhere\s+(did|do|had)\s+(we|i|you)\s+(leave|left|stop|stopped)\b(\s+off)?|"
    r"\b(we|i|you)\s+left\s+off\b|\bwhere\s+were\s+we\b|\bcatch\s+(me|us)\s+up\b|"
    r"\b(bring|get)\s+(me|us)\s+up\s+to\s+speed\b|"
    r"\bwhat\s+(were|was)\s+(we|i|you)\s+(doing|working\s+on|up\s+to)\b|"
    r"\b(last|previous|latest)\s+(session|time)\b|\blast\s+thing\s+(we|i|you)\b)",
    re.IGNORECASE,
)
RESUME_WORDS = GENERIC_WORDS | _words(
    """leave left stop stopped off catch speed bring last previous previously latest time
    thing project repo codebase today yet remind"""
)
_QUESTION_START = re.compile(
    r"^\s*(what|why|how|who|whom|whose|which|when|is|are|was|were|do|does|did|can|could|should|"
    r"would|will|has|have|had)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[\w']+")


def content_words(text: str, generic: frozenset[str] = STOPWORDS) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in generic and not w.isdigit()]


def resumes(rest: str) -> bool:
    """Whether a question (its period out) asks where the work was left, and nothing else."""
    return bool(_RESUME.search(rest)) and not content_words(rest, RESUME_WORDS)


def classify(query: str, rest: str, has_time: bool) -> Intent:
    """``query`` as written, ``rest`` with its time expression removed."""
    if has_time and not content_words(rest, GENERIC_WORDS):
        return "time-boxed"
    if _LOCATE_START.search(rest) or _ARTEFACT.search(rest):
        return "locate"
    if _EXPLORE.search(rest):
        return "explore"
    if rest.rstrip().endswith("?") or _QUESTION_START.search(rest):
        return "answer"
    # a short noun phrase is a topic; a longer statement is a question without a question mark
    return "explore" if len(content_words(rest)) <= 3 else "answer"
