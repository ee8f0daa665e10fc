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

And a fix question is asked in the words of the problem, not of its solution: "why did the
dev server stop reloading my changes, and how was that repaired?" is closest to the moment the
problem was reported ("since the move, saving a file no longer reloads the page"), while the
fix ("Fixed: the watcher follows symlinked folders") shares no word with it. The arc says where
the answer is: later in the same session. ``arc_sources`` picks the best moments that do not
state a resolution themselves; the cause and the fix said after each of them
(``arc_store.following_messages``) join the candidates with the source's fused score times
``follow`` (``bring_resolutions``), and are weighed as any resolution is.

Asked for the change itself ("show the code change that fixed the signatures", an
``artifacts`` question too), the answer is the edit made last before a fix was stated (the
edits before it were attempts): the best moments stating a fix (``fix_statements``) bring it
(``arc_store.edits_before``, ``bring_fix_edits``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from agent_memory_retrieval.docs import Hit
from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.ranking import reweigh_all

FIX_QUESTION = re.compile(
    r"\b(fix(ed|es|ing)?|solv(e|ed|ing)|resolv(e|ed|ing)|cur(e|ed|es)|repair(ed|s)?|"
    r"sort(ed)?\s+out|work\s?around|root\s+cause|caus(e|ed|es)|what\s+was\s+wrong|"
    r"went\s+wrong|leak(ed|s|ing)?|why\s+(did|was|were|does|do|is|are|would)\b)",
    re.IGNORECASE,
)
# A cause or a fix is stated at the start of a sentence ("Fixed: ...", "The cause was ...");
# mid-sentence the same words are usually a question or a plan ("can you fix it?").
_SAID = r"(^|[.!?:;]\s+|\n)\s*"
# A coding agent says it its own way: "I see the issue - the client library renamed that
# call", "Now I see the problem! The image pins an old base", "I've fixed the lint job", "I
# found and fixed the flaky upload".
_AGENT = r"((now\s+)?i\s+(see|found|spotted)|i'?ve\s+found)\s+the\s+(issue|problem|bug|cause)\b"
_FIX = (
    r"fixed\b|the\s+fix\b|fix:|solved\b|resolved\b|that\s+fixed\b|"
    r"(i'?ve|i\s+have|i)\s+((?!not\b)\w+\s+)?(fixed|found\s+and\s+fixed)\b"
)
_CAUSE = (
    r"cause:|the\s+cause\b|root\s+cause\b|found\s+the\s+(cause|bug|problem)\b|"
    rf"the\s+culprit\b|the\s+(issue|problem)\s+(was|is)\b|{_AGENT}"
)
_AGAIN = r"\b(works|passes|green)\s+again\b"  # a fix shown by its effect
# Both are narrowed from ``arc_store._MAY_RESOLVE``, the looser SQL prefilter of the messages
# followed after a report: a text matching either also matches it (tested).
RESOLUTION = re.compile(rf"{_SAID}({_FIX}|{_CAUSE})|{_AGAIN}", re.IGNORECASE)
# The end of an arc: the fix itself (a cause comes before it). Followed from a report, the
# messages after it are read up to the first that states the fix, not beyond: a long session
# goes on to fix other things.
FIX_STATED = re.compile(rf"{_SAID}({_FIX})|{_AGAIN}", re.IGNORECASE)
ATTEMPT = re.compile(
    # "Still at 99.7.", "Still failing", "Not that." - but not chat's "Still, I love it"
    r"(^|[.!?]\s+|\n)\s*(still\s+(at|fails?|failing|broken|the\s+same|red|hangs?|spinning|"
    r"slow|there|happening|\d)\b|not\s+that\s*[.:;]|no\s+luck\b|didn'?t\s+help\b|"
    r"did\s+not\s+help\b|same\s+(error|failure)\b)|"
    r"(^|\n)\s*exit\s+(code\s+|status\s+)?[1-9]|"
    r"\b(failed|error)\b.{0,40}\bexit\s+(code|status)\s+[1-9]",
    re.IGNORECASE,
)

# A moment that reports a problem: a symptom, an error, something that does not work. Only
# such a moment (or a failed attempt) is followed to the cause and the fix said after it: the
# best candidates of a fix question also hold the session's other work ("Edit conftest.py:
# applied", "New project: ..."), whose session goes on to fix something else.
PROBLEM = re.compile(
    r"\b(broken|breaks?|fail(s|ed|ing|ures?)?|errors?|exceptions?|crash(es|ed|ing)?|"
    r"panic(s|ked|king)?|hang(s|ing)?|stuck|slow(er|s)?|leak(s|ed|ing)?|wrong|bugs?|"
    r"misaligned|short\s+by|missing|refused|rejected|invalid|tim(es|ed|ing)\s+out|timeouts?|"
    r"flaky|warnings?|spin(s|ning)?|(do|does|did)\s+not|(don|doesn|didn|won|can)'?t|cannot)\b|"
    r"\b100\s?%",
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

    def weigh(cand: Candidate) -> tuple[float, bool] | None:
        if getattr(cand.doc, "type", "event") not in ("event", "grip"):
            return None
        text = getattr(cand.doc, "text", "") or ""
        factor = arc_factor(text, resolution=resolution, attempt=attempt)
        # how it was solved stays true
        return None if factor is None else (factor, states_resolution(text))

    return reweigh_all(candidates, "arc", weigh)


def reports_problem(text: str) -> bool:
    """Whether a moment reports a problem or a failed attempt (not its cause or fix)."""
    return bool(PROBLEM.search(text) or ATTEMPT.search(text)) and not states_resolution(text)


def _first_moments(
    candidates: Sequence[Candidate], count: int, keep: Callable[[str], bool]
) -> list[Candidate]:
    """The first ``count`` moments (events, grips, with event ids) whose text ``keep``s."""
    out: list[Candidate] = []
    for cand in candidates:
        if len(out) >= count:
            break
        doc = cand.doc
        if getattr(doc, "type", "event") not in ("event", "grip") or not doc.event_ids:
            continue
        if keep(getattr(doc, "text", "") or ""):
            out.append(cand)
    return out


def arc_sources(candidates: Sequence[Candidate], count: int) -> list[Candidate]:
    """The first ``count`` moments that report a problem or a failed attempt
    (``reports_problem``): those whose session may go on to solve them."""
    return _first_moments(candidates, count, reports_problem)


def states_fix(text: str) -> bool:
    """Whether a moment states the fix itself (not only a cause)."""
    return states_resolution(text) and bool(FIX_STATED.search(text))


def _raise_to(
    hit: Hit,
    fused: float,
    source_place: int,
    out: list[Candidate],
    by_id: dict[str, Candidate],
    changed: set[str],
) -> None:
    """``hit`` joins the candidates with ``fused``, or is raised to it (``ranks``: ``arc``)."""
    known = by_id.get(hit.id)
    if known is None:
        known = Candidate(id=hit.id, doc=hit.doc)
        by_id[hit.id] = known
        out.append(known)
    if known.fused < fused:
        known.fused = known.score = fused
        known.ranks.setdefault("arc", source_place)
        changed.add(hit.id)


def bring_resolutions(
    candidates: Sequence[Candidate],
    sources: Sequence[Candidate],
    following: Mapping[str, Sequence[Hit]],
    *,
    per_source: int,
    follow: float,
) -> tuple[list[Candidate], int]:
    """The candidates with the causes and fixes said after each source (``following``: the
    messages after each event id, in order; the first ``per_source`` that state a resolution
    are taken, up to the first that states the fix). Each gets at least its source's fused
    score times ``follow``: one no tier found joins with it (``ranks``: ``arc``, the source's
    place), one found lower is raised to it (its ranks gain ``arc``). Returns the candidates
    and how many were brought or raised."""
    out = list(candidates)
    by_id = {c.id: c for c in out}
    place = {c.id: i + 1 for i, c in enumerate(candidates)}
    changed: set[str] = set()
    for src in sources:
        taken = 0
        fused = src.fused * follow
        for event_id in src.doc.event_ids:
            for hit in following.get(event_id, ()):
                if taken >= per_source:
                    break
                text = getattr(hit.doc, "text", "") or ""
                if not states_resolution(text):
                    continue
                taken += 1
                if states_fix(text):
                    taken = per_source  # the arc ends at its fix
                _raise_to(hit, fused, place[src.id], out, by_id, changed)
    return out, len(changed)


def fix_statements(candidates: Sequence[Candidate], count: int) -> list[Candidate]:
    """The first ``count`` moments that state a fix (``states_fix``)."""
    return _first_moments(candidates, count, states_fix)


def bring_fix_edits(
    candidates: Sequence[Candidate],
    fixes: Sequence[Candidate],
    edits: Mapping[str, Hit],
    *,
    follow: float,
) -> tuple[list[Candidate], int]:
    """The candidates with the edit made last before each stated fix (``edits``: per event
    id), at the fix's fused score times ``follow``, joined or raised as in
    ``bring_resolutions``. Returns the candidates and how many edits were brought or raised."""
    out = list(candidates)
    by_id = {c.id: c for c in out}
    place = {c.id: i + 1 for i, c in enumerate(candidates)}
    changed: set[str] = set()
    for fix in fixes:
        for event_id in fix.doc.event_ids:
            edit = edits.get(event_id)
            if edit is not None:
                _raise_to(edit, fix.fused * follow, place[fix.id], out, by_id, changed)
    return out, len(changed)
