"""Supersession: a newer decision, constraint or preference on the same subject replaces the
older one (issue 13 item 4).

Why here: the summarizer already reads every closed segment's events and owns the memory-kind
classifier, so it can tell a rule statement from chatter without a second pass over the log.
Detection is offline, deterministic and pure (this module); ``supersession_store`` keeps the
statements and the links, which search and the TOC routes read.

A **statement** is one natural-language event (a user or assistant message or note, never tool
output) holding at least one sentence of a rule kind; its **subject** is the stemmed content
words of those sentences. A later statement supersedes an earlier one of the same project when

- both are rule kinds, and
- they share at least ``MIN_SHARED`` subject words (two proved too few: "refund" and
  "captured" link a refund rule to an event contract), and
- the newer one says it changes something (``CHANGE_CUE``: "replace", "switch from",
  "instead of", "retire", "from now on"...) and the shared words cover ``MIN_OVERLAP_CUED``
  of the smaller subject; or, without a cue, both are decisions and the shared words cover
  ``MIN_OVERLAP`` of it;
- inside one session, only with a change cue (a decision and its elaboration in the same
  conversation are not a reversal); and never for the same subject words again (a repetition).

Each newer statement keeps its ``MAX_PREDECESSORS`` best matches. The summarizer has no
embedding model (it must stay light and deterministic), so "the same subject" is read from
key-phrase overlap only; the thresholds were set on the coding benchmark's six reversals and
checked against every other pair of its statements (``make bench-coding`` prints the links).

An explicit link needs no detection: an event whose ``metadata.supersedes`` names event ids
(``memory_note(..., supersedes=[...])`` or ``POST /v1/events``) supersedes them, with
``metadata.supersede_note`` (or the event's own words) as the note.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_memory_common.contracts.memory import is_tool_event
from agent_memory_summarizer.salience import classify_sentence, is_question
from agent_memory_summarizer.text import split_sentences, strip_code, tokens

RULE_KINDS: tuple[str, ...] = ("decision", "constraint", "preference")
# Without a change cue, only a decision replaces a decision: conversation is full of
# preferences and "always" sentences (read as constraints) that share words ("I love hiking"
# ... "I love being outdoors", "X is always a blast"); on LoCoMo, with preferences allowed they
# made 32 links (10 demoting an evidence turn), with constraints 9 (2).
UNCUED_KINDS = frozenset({"decision"})
MIN_SHARED = 3
MIN_OVERLAP = 0.6
MIN_OVERLAP_CUED = 0.2
MAX_PREDECESSORS = 2
MAX_TEXT = 600

CHANGE_CUE = re.compile(
    r"\b(replac(e|es|ed|ing)|switch(es|ed|ing)?\b.{0,40}\bfrom|instead\s+of|no\s+longer|"
    r"from\s+now\s+on|retir(e|es|ed|ing)|mov(e|es|ed|ing)\s+(\w+\s+){0,4}to|"
    r"migrat(e|es|ed|ing)|deprecat(e|es|ed|ing)|drop(s|ped|ping)?\b|gone\s+from|"
    r"revers(e|es|ed|ing)|supersed(e|es|ed|ing)|change(s|d)?\s+(\w+\s+){0,3}from)",
    re.IGNORECASE,
)
# Words that say *that* something is decided or changed, never *what*: not the subject.
_NOT_SUBJECT = frozenset(
    """we go use uses used using decide decided decision choose chose chosen pick picked
    replace replaced replacing switch switching switched instead move moving moved retire
    retired migrate migrated drop dropped keep kept prefer preferred always never new old
    now later from onward onwards stay stays start started make made way ll let going
    want wants rule rules should must code""".split()  # noqa: SIM905 - a word list reads best
)
_NOTE_KEYS = ("supersede_note", "supersedes_note", "note")


def stem(word: str) -> str:
    """A crude, deterministic suffix strip: "uploads"/"upload", "drawing"/"draw"."""
    for suffix in ("ing", "ies", "ed", "ly", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def subject_of(text: str) -> tuple[str, ...]:
    """The stemmed content words of ``text``, sorted (stored, compared as a set)."""
    words = {stem(t) for t in tokens(strip_code(text)) if len(t) >= 3}
    return tuple(sorted(w for w in words if w not in _NOT_SUBJECT and len(w) >= 3))


@dataclass(frozen=True)
class Statement:
    """A rule stated by a person in one event."""

    event_id: str
    project_id: str
    session_id: str
    ts: datetime
    kind: str
    subject: tuple[str, ...]
    text: str  # the rule sentences, for the cue and for showing
    cue: bool


@dataclass(frozen=True)
class Link:
    older_event_id: str
    newer_event_id: str
    project_id: str
    source: str  # "detected" | "explicit"
    score: float
    note: str | None = None


def statement_of(event: Mapping[str, Any]) -> Statement | None:
    """The rule sentences of one stored event (``events`` row as a mapping), or None."""
    if is_tool_event(event.get("role"), event.get("type"), event.get("metadata")):
        return None
    if event.get("role") not in ("user", "assistant"):
        return None
    ruled: list[tuple[str, str]] = []  # (kind, sentence)
    for sentence in split_sentences(str(event.get("text") or "")):
        if sentence.is_code or is_question(sentence.text):
            continue
        kind: str = classify_sentence(sentence.text)
        if kind in RULE_KINDS:
            ruled.append((kind, sentence.text.strip()))
    if not ruled:
        return None
    kind = next(k for k in RULE_KINDS if any(r[0] == k for r in ruled))
    text = " ".join(s for _, s in ruled)[:MAX_TEXT]
    return Statement(
        event_id=str(event["event_id"]),
        project_id=str(event["project_id"]),
        session_id=str(event.get("session_id") or ""),
        ts=event["ts"],
        kind=kind,
        subject=subject_of(text),
        text=text,
        cue=bool(CHANGE_CUE.search(text)),
    )


def match(newer: Statement, older: Statement) -> float:
    """How surely ``newer`` replaces ``older``: 0.0 when it does not."""
    a, b = set(newer.subject), set(older.subject)
    return _scored(newer, older, len(a & b), len(a), len(b))


def _scored(newer: Statement, older: Statement, shared: int, n_newer: int, n_older: int) -> float:
    """``match``, given how many subject words the two share and each one's count."""
    if (older.ts, older.event_id) >= (newer.ts, newer.event_id):
        return 0.0
    if newer.project_id != older.project_id or newer.event_id == older.event_id:
        return 0.0
    if newer.session_id == older.session_id and not newer.cue:
        return 0.0
    if shared == n_newer == n_older:
        return 0.0  # the same words again: a repetition, not a replacement
    if shared < MIN_SHARED or not n_newer or not n_older:
        return 0.0
    overlap = shared / min(n_newer, n_older)
    if newer.cue and overlap >= MIN_OVERLAP_CUED:
        return round(overlap + 0.25, 4)
    uncued = newer.kind == older.kind and newer.kind in UNCUED_KINDS
    if uncued and overlap >= MIN_OVERLAP:
        return round(overlap, 4)
    return 0.0


def detect(new: Sequence[Statement], known: Sequence[Statement]) -> list[Link]:
    """Links between ``new`` statements and every statement of their projects (``known``,
    which may include ``new``), whichever side is older: segments are summarized in any
    order, so a reversal is found whether its predecessor was seen before or after it.

    Only pairs with a new statement on a side are scored (an old pair was decided when the
    later of the two arrived): len(new) x len(known), not the project's square. Each new
    statement's words are bits of an int, so the words a pair shares are one ``&`` and a
    bit count, and a statement sharing none is passed over at once. A project's statements
    grow with its history (5,000 per project on the 1,000,000-event bench store, thousands
    sharing a word with a segment's rules), which made a set per pair the largest part of
    summarizing a segment there.
    """
    pool = {s.event_id: s for s in [*known, *new]}
    fresh = [pool[i] for i in dict.fromkeys(s.event_id for s in new)]
    new_ids = {s.event_id for s in fresh}
    bit: dict[str, int] = {}
    for statement in fresh:
        for word in statement.subject:
            bit.setdefault(word, 1 << len(bit))
    fresh_masks = [(f, _mask(f.subject, bit), len(set(f.subject))) for f in fresh]
    scored: dict[str, list[tuple[float, float, str]]] = defaultdict(list)  # newer -> olders
    for other in pool.values():
        mask = _mask(other.subject, bit)
        if mask.bit_count() < MIN_SHARED:
            continue
        n_other = len(set(other.subject))
        for statement, own, n_own in fresh_masks:
            shared = (mask & own).bit_count()
            if shared < MIN_SHARED:
                continue
            # the new statement as the newer; the other as the newer when it is not new too
            # (a pair of new ones is met from both sides)
            score = _scored(statement, other, shared, n_own, n_other)
            if score > 0:
                scored[statement.event_id].append((-score, -other.ts.timestamp(), other.event_id))
            if other.event_id not in new_ids:
                score = _scored(other, statement, shared, n_other, n_own)
                if score > 0:
                    scored[other.event_id].append(
                        (-score, -statement.ts.timestamp(), statement.event_id)
                    )
    pairs: dict[tuple[str, str], float] = {}
    for newer_id, olders in scored.items():
        for neg, _, older_id in sorted(olders)[:MAX_PREDECESSORS]:
            pairs[(older_id, newer_id)] = -neg
    return [
        Link(older, newer, pool[newer].project_id, "detected", score)
        for (older, newer), score in sorted(pairs.items())
    ]


def _mask(subject: Sequence[str], bit: Mapping[str, int]) -> int:
    """The bits of ``subject``'s words that ``bit`` numbers (each word once)."""
    mask = 0
    for word in subject:
        mask |= bit.get(word, 0)
    return mask


def explicit_links(events: Sequence[Mapping[str, Any]]) -> list[Link]:
    """Links an event asks for in ``metadata.supersedes`` (one id or a list of ids)."""
    out: list[Link] = []
    for event in events:
        meta = event.get("metadata") or {}
        wanted = meta.get("supersedes")
        ids = [wanted] if isinstance(wanted, str) else wanted if isinstance(wanted, list) else []
        note = next((str(meta[k]) for k in _NOTE_KEYS if isinstance(meta.get(k), str)), None)
        for older in dict.fromkeys(i for i in ids if isinstance(i, str) and i.strip()):
            if older == event["event_id"]:
                continue
            text = note or str(event.get("text") or "")[:MAX_TEXT]
            newer, project = str(event["event_id"]), str(event["project_id"])
            out.append(Link(older, newer, project, "explicit", 1.0, text))
    return out
