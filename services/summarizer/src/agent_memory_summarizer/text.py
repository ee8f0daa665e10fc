"""Text plumbing for the extractive summarizer: sentences, tokens, stop words.

Everything here is pure and deterministic (no sets are iterated to build output), because the
same segment must give byte-identical summaries on every replica and on every replay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# English function words plus chat filler; small on purpose: rare words carry the meaning and
# TF-IDF already discounts what is frequent inside a segment.
_STOP_TEXT = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing
    don down during each else even ever every few for from further get gets getting got had
    hadn has hasn have haven having he her here hers herself him himself his how however i if
    in into is isn it its itself just let lets ll me might more most much must mustn my myself
    need needs no nor not now of off ok okay on once one only or other our ours ourselves out
    over own per please re really same say says see seems shall shan she should shouldn so
    some still such sure than thank thanks that the their theirs them themselves then there
    these they this those though through thus to too under until up upon us use used using ve
    very via want was wasn way we well were weren what when where whether which while who whom
    why will with within without won would wouldn yes yet you your yours yourself yourselves
    let's i'm it's that's there's we're we'll you're don't doesn't isn't can't won't didn't
    actually maybe like just going go gonna think know right thing things something anything
    """
STOP_WORDS = frozenset(_STOP_TEXT.split())

_TOKEN = re.compile(r"[a-z0-9][a-z0-9_\-]*[a-z0-9]|[a-z]")
_CODE_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
# A sentence ends at . ! ? followed by space and something that can start a sentence, or at a
# line break; dotted names (agent_memory.db, v1.2) are left alone.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[`A-Z0-9])|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")
_SPACES = re.compile(r"\s+")
_NUMERIC = re.compile(r"^[0-9_\-]+$")
# The gateway's secret placeholder: its words ("redacted", "aws", "key") are not the topic.
_REDACTED = re.compile(r"\[REDACTED:[A-Za-z0-9_.\-]+\]")


def tokens(text: str) -> list[str]:
    """Lower-case content words in order, without stop words or bare numbers."""
    out = []
    for tok in _TOKEN.findall(_REDACTED.sub(" ", text).lower()):
        tok = tok.strip("-_")
        if len(tok) < 2 or tok in STOP_WORDS or _NUMERIC.match(tok):
            continue
        out.append(tok)
    return out


def squash(text: str) -> str:
    """Collapse runs of whitespace, for bullets and excerpts that fit on one line."""
    return _SPACES.sub(" ", text).strip()


def shorten(text: str, limit: int) -> str:
    """Cut at a word boundary and mark the cut, so a bullet never ends mid-word."""
    text = squash(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


@dataclass(frozen=True)
class Sentence:
    """A sentence and where it sits in its event's text (for the grip's excerpt)."""

    text: str
    start: int
    end: int
    is_code: bool = False


def split_sentences(text: str) -> list[Sentence]:
    """Sentences of one event's text; a fenced code block stays one unit."""
    out: list[Sentence] = []
    pos = 0
    for match in _CODE_FENCE.finditer(text):
        out.extend(_split_prose(text, pos, match.start()))
        block = text[match.start() : match.end()]
        if block.strip("`").strip():
            out.append(Sentence(block, match.start(), match.end(), is_code=True))
        pos = match.end()
    out.extend(_split_prose(text, pos, len(text)))
    return out


def _split_prose(text: str, start: int, end: int) -> list[Sentence]:
    out: list[Sentence] = []
    pos = start
    chunk = text[start:end]
    for match in _SENTENCE_END.finditer(chunk):
        piece_end = start + match.start()
        _append(out, text, pos, piece_end)
        pos = start + match.end()
    _append(out, text, pos, end)
    return out


def _append(out: list[Sentence], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return
    lead = len(piece) - len(piece.lstrip())
    begin = start + lead
    out.append(Sentence(stripped, begin, begin + len(stripped)))


def strip_code(text: str) -> str:
    """Prose only: fenced blocks and inline code removed (cue words inside code are not cues)."""
    return _INLINE_CODE.sub(" ", _CODE_FENCE.sub(" ", text))


NAME_CHARS = 40
NAME_WORDS = 3  # `charmcraft pack` names a command; a longer span is code


def names_kept(text: str) -> str:
    """Prose with inline code that is a short name (`ubuntu-22.04`, `--destructive-mode`,
    `charmcraft pack`) kept without its backticks, and other code removed: in a title, a
    removed name leaves a hole ("the tests run on , but when using")."""

    def keep(match: re.Match[str]) -> str:
        body = match.group(0)[1:-1].strip()
        short = len(body) <= NAME_CHARS and len(body.split()) <= NAME_WORDS
        return f" {body} " if body and short else " "

    return _INLINE_CODE.sub(keep, _CODE_FENCE.sub(" ", text))


def excerpt_around(text: str, start: int, end: int, limit: int = 320) -> str:
    """The sentence plus as much surrounding text as fits, for a grip's excerpt."""
    if end - start >= limit:
        return shorten(text[start:end], limit)
    spare = limit - (end - start)
    lo = max(0, start - spare // 3)
    hi = min(len(text), end + spare - (start - lo))
    piece = squash(text[lo:hi])
    return ("…" if lo > 0 else "") + piece + ("…" if hi < len(text) else "")
