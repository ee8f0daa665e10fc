"""Questions about what the user said want the user's own words, not the replies around them.

"What did I say about parallel builds?", "which database did I want the tests to use?",
"what did I tell you about the log directory?": the answer is a prompt
the user typed. The agent's replies repeat and elaborate it, in more words that match the
question, so they outrank it (``make bench-real``: the prompt 10th under replies about the
same thing). The indexes keep no role, so for such a question (``asks_own_words``) the roles
of the candidates' events are read from Postgres and a prompt weighs ``factor``
(``explain.ranking``: ``own_words``); what the user said stays said, so it is spared
staleness.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.ranking import reweigh_all

_SAID = (
    r"(?:say|said|ask|asked|want|wanted|tell|told|mention|mentioned|request|requested|"
    r"prefer|preferred|insist|insisted|specify|specified|decide|decided|like|liked|choose|chose)"
)
OWN_WORDS_QUESTION = re.compile(
    rf"\b(?:did|do|have|had)\s+i\s+(?:\w+\s+)?{_SAID}\b"
    r"|\bi\s+(?:told|asked|wanted|said|mentioned)\b"
    r"|\bmy\s+(?:own\s+)?(?:words|requests?|instructions?|preferences?|ask)\b",
    re.IGNORECASE,
)
USER = "user"


def asks_own_words(query: str) -> bool:
    """Whether a question asks for what the user (the one asking) said or wanted."""
    return bool(OWN_WORDS_QUESTION.search(query))


def event_ids_of(candidates: Iterable[Candidate]) -> list[str]:
    """The events whose role decides: every event candidate's."""
    return [
        e
        for c in candidates
        if getattr(c.doc, "type", "event") == "event"
        for e in (c.doc.event_ids or ())
    ]


def prefer_own_words(
    candidates: Iterable[Candidate], *, roles: Mapping[str, str], factor: float
) -> list[Candidate]:
    """Weigh each event the user said (``roles[event_id] == "user"``) by ``factor``; sorted."""

    def weigh(cand: Candidate) -> tuple[float, bool] | None:
        ids = cand.doc.event_ids or ()
        if getattr(cand.doc, "type", "event") != "event" or not ids:
            return None
        return (factor, True) if all(roles.get(e) == USER for e in ids) else None

    return reweigh_all(candidates, "own_words", weigh)
