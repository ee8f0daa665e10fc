"""The words that frame a question about a conversation are no words of its answer.

"What did we decide about publishing the image?" is answered by "I guess the image should go
to the registry from the release job." A decision, a rule or a request in a
coding session is rarely announced as one: nobody types "we decided". Yet "decide" is a rare
word of the store, so BM25 weighs it most, and the turns that happen to hold it ("let me
decide", "the user decides") outranked the one that settled the matter: on ``make
bench-real`` that prompt was not among the first 40 BM25 hits; without the frame, first. The
verb that says how something was said (decide, say, tell, agree, settle on) is dropped from
what the tiers match when it is the verb of a question about us ("did we decide", "have you
told", "did I say"); the rest of the question stays as asked. "How does the script pick the
session" keeps its "pick": it is not asked of us. "want", "prefer" and "like" stay: people
say them in the very turns asked about ("I would prefer ...").
"""

from __future__ import annotations

import re

_ASKED_OF_US = r"\b(?:did|do|does|have|has|had)\s+(?:we|i|you)\s+(?:\w+\s+)?"
_FRAME_VERB = (
    r"(?:decide|decided|say|said|tell|told|ask|asked|mention|mentioned|agree|agreed|settle|"
    r"settled|choose|chose|chosen|pick|picked|discuss|discussed|talk|talked)"
)
_FRAME = re.compile(rf"({_ASKED_OF_US}){_FRAME_VERB}\b(?:\s+(?:on|about|upon)\b)?", re.IGNORECASE)
_SPACES = re.compile(r"\s{2,}")


def without_frame(question: str) -> str:
    """``question`` without the verb of its asking frame (module docstring); unchanged when
    it has none."""
    stripped = _FRAME.sub(r"\1", question)
    return question if stripped == question else _SPACES.sub(" ", stripped).strip()
