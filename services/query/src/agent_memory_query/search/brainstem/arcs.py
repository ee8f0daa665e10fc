"""Problem/fix questions want the end of the arc: the cause and the fix, not the dead ends.

A debugging session runs: symptom, failed attempts ("still 99.7", "not that", a red test run),
then the cause and the fix ("Cause: ...", "Fixed: ..."). All of it shares the question's
words, and the attempts are many, so on words alone they crowd out the answer (issue 13: for
a question about a type-checker warning the top five were failed attempts and the real cause
ranked seventh). For a question about a fix or a cause (``is_fix_question``), a moment that
states a cause or a fix weighs ``resolution`` and one that reports a failed attempt or a
failing run weighs ``attempt``; other questions are left alone.

A stated cause or fix also does not go stale in such a question. Staleness demotes an old
observation because the state it reports ("the build is red") passes; how a problem was solved
stays true as long as the code stands, and the question asks for exactly that, however long
ago. Demoted with age, the fix lost its first place to the evergreen bullets of other episodes
(a procedure, a definition) that share a few of its words: on ``make bench-coding`` the fix
ranked second in 4 of its 8 fix questions, below such a bullet, with a higher fused score.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent_memory_query.search.brainstem.fusion import Candidate

FIX_QUESTION = re.compile(
    r"\b(fix(ed|es|ing)?|solv(e|ed|ing)|resolv(e|ed|ing)|cur(e|ed|es)|repair(ed|s)?|"
    r"sort(ed)?\s+out|work\s?around|root\s+cause|caus(e|ed|es)|what\s+was\s+wrong|"
    r"went\s+wrong|leak(ed|s|ing)?|why\s+(did|was|were|does|do|is|are|would)\b)",
    re.IGNORECASE,
)
RESOLUTION = re.compile(
    r"(^|[.!?:;]\s+|\n)\s*(fixed\b|the\s+fix\b|fix:|cause:|the\s+cause\b|root\s+cause\b|"
    r"found\s+the\s+(cause|bug|problem)\b|solved\b|resolved\b|that\s+fixed\b|the\s+culprit\b)|"
    r"\b(works|passes|green)\s+again\b",
    re.IGNORECASE,
)
ATTEMPT = re.compile(
    # "Still at 99.7.", "Still failing", "Not that." - but not chat's "Still, I love it"
    r"(^|[.!?]\s+|\n)\s*(still\s+(at|fails?|failing|broken|the\s+same|red|hangs?|spinning|"
    r"slow|there|happening|\d)\b|not\s+that\s*[.:;]|no\s+luck\b|didn'?t\s+help\b|"
    r"did\s+not\s+help\b|same\s+(error|failure)\b)|"
    r"(^|\n)\s*exit\s+(code\s+|status\s+)?[1-9]|"
    r"\b(failed|error)\b.{0,40}\bexit\s+(code|status)\s+[1-9]",
    re.IGNORECASE,
)


# A command and its result as the capture hooks shape it ("$ uv lock\nexit 0\n<output>"): the
# tool's own words ("Resolved 61 packages", "Fixed 3 errors") are not a person stating the cause
# or the fix; only its exit status counts, as an attempt when it failed.
COMMAND_RESULT = re.compile(r"^\s*\$ ")


def is_fix_question(query: str) -> bool:
    return bool(FIX_QUESTION.search(query))


def states_resolution(text: str) -> bool:
    """Whether a moment states a cause or a fix (a person's words, not a tool's output)."""
    return bool(RESOLUTION.search(text)) and not COMMAND_RESULT.match(text)


def arc_factor(text: str, *, resolution: float, attempt: float) -> float | None:
    """The factor of one moment's text in a fix question; None when it is neither."""
    if states_resolution(text):
        return resolution
    if ATTEMPT.search(text):
        return attempt
    return None


def prefer_resolution(
    candidates: Iterable[Candidate], *, resolution: float, attempt: float
) -> list[Candidate]:
    """Weigh each moment by where it sits in its arc (``explain.ranking``: ``arc``), a cause
    or a fix no longer demoted for its age (its ``staleness`` factor back to 1); sorted."""
    out = list(candidates)
    for cand in out:
        if getattr(cand.doc, "type", "event") not in ("event", "grip"):
            continue
        text = getattr(cand.doc, "text", "") or ""
        factor = arc_factor(text, resolution=resolution, attempt=attempt)
        if factor is None:
            continue
        cand.factors["arc"] = factor
        cand.score *= factor
        stale = cand.factors.get("staleness", 1.0)
        if 0.0 < stale < 1.0 and states_resolution(text):  # how it was solved stays true
            cand.factors["staleness"] = 1.0
            cand.score /= stale
    out.sort(key=lambda c: -c.score)
    return out
