"""Pure functions of recall: which search results become lines, and how many fit a budget.

The search engine ranks; recall only decides what to leave out and how to fit the rest. What it
leaves out, and why:

- everything, for a prompt of fewer than ``min_words`` words ("continue", "run the tests"): an
  instruction about the turn at hand, too little to ground a recall on;
- everything, when the search is not confident (``no_match``, or a best cosine under the
  recall threshold): a prompt such as "thanks" or "run the tests" matches something weakly, and
  a wrong memory in front of an agent costs its tokens and may mislead it; a question about a
  period the search found work in (a date named, or the last day of work for a question of
  where the work stopped) is answered by that period (``by_period``);
- the current session's own events: the agent has them in its context already (or had them
  before a compaction, which the brief covers);
- what the session was already given (``exclude_ids``): the same line twice is paid twice;
- a result whose events another line already quotes (a summary and its event).

A token is estimated as four characters, the rule of thumb for English text and code; the
budget is a ceiling, so the estimate errs on the side of fewer lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

HEADER = (
    "Recalled from agent-memory (past sessions of this project; open an id with memory_expand):"
)
ELLIPSIS = " [...]"
MIN_LINE_TOKENS = 40
# a line's share when the budget is spread: its id, date, kind and about 190 characters
SNIPPET_TOKENS = 60


def word_count(text: str) -> int:
    """Words of ``text``: runs of letters or digits (an identifier's parts count apart)."""
    return len(re.findall(r"[^\W_]+", text))


def by_period(found: Mapping[str, Any]) -> bool:
    """The search answered a question about a period it found work in (a date the prompt
    names, or the last day of work when it asks where the work stopped): its confidence is the
    period's, not a cosine, which such a question has none of (``match_score`` is null). A
    period that held nothing was widened by the search (``relaxed``): that is no answer."""
    period = found.get("time_range") or {}
    return bool(
        found.get("intent") == "time-boxed"
        and found.get("match_score") is None
        and period.get("since")
        and period.get("until")
        and not period.get("relaxed")
        and found.get("results")
    )


def estimate_tokens(text: str) -> int:
    """Tokens of ``text``, as four characters each (rounded up)."""
    return (len(text) + 3) // 4


def clip(text: str, tokens: int) -> str:
    """``text`` on one line, cut to ``tokens`` (with a mark when cut)."""
    flat = " ".join(text.split())
    room = tokens * 4
    if len(flat) <= room:
        return flat
    return flat[: max(0, room - len(ELLIPSIS))].rstrip() + ELLIPSIS


def cited_id(result: Mapping[str, Any]) -> str:
    """The id a line cites, as ``memory_expand`` opens it: an event's own id; a grip's or a
    node's without the index's ``<kind>:<tenant>:`` prefix (tokens paid on every line)."""
    ids = result.get("event_ids") or []
    if result.get("type") == "event" and ids:
        return str(ids[0])
    doc_id = str(result["id"])
    kind, _, rest = doc_id.partition(":")
    if kind in ("grip", "node") and ":" in rest:
        return rest.split(":", 1)[1]
    return doc_id


def line_of(result: Mapping[str, Any], tokens: int) -> str:
    """``- [id] date kind: text``, within ``tokens``."""
    when = str(result.get("ts") or "")[:10]
    kind = str(result.get("memory_kind") or "")
    label = f" {kind}" if kind and kind != "observation" else ""
    head = f"- [{cited_id(result)}] {when}{label}: "
    body = str(result.get("text") or "")
    title = str(result.get("title") or "")
    if result.get("type") != "event" and title:
        body = f"{title}. {body}" if body else title
    return head + clip(body, max(1, tokens - estimate_tokens(head)))


@dataclass
class Packed:
    lines: list[str] = field(default_factory=list)
    chosen: list[tuple[Mapping[str, Any], str]] = field(default_factory=list)
    left_out: int = 0  # results dropped by session, exclusion or duplication

    @property
    def context(self) -> str:
        return "\n".join([HEADER, *self.lines]) if self.lines else ""


def pack(
    results: Sequence[Mapping[str, Any]],
    *,
    budget_tokens: int,
    session_id: str | None,
    exclude_ids: Iterable[str],
    max_items: int,
) -> Packed:
    """The results, in their rank order, that fit ``budget_tokens`` with the header: none of
    the current session, none already given, none whose events a line above quotes.

    Breadth before depth: results in rank order get a snippet each (``SNIPPET_TOKENS`` at
    most, enough to tell what a memory is about; ``memory_expand`` opens the rest) while the
    budget lasts, up to ``max_items``; then each line, in rank order, grows into what is left,
    up to a third of the budget, so that one long tool output cannot take the place of three
    short decisions."""
    out = Packed()
    excluded = set(exclude_ids)
    quoted: set[str] = set()
    chosen: list[Mapping[str, Any]] = []
    for result in results:
        events = {str(e) for e in result.get("event_ids") or []}
        own = session_id is not None and result.get("session_id") == session_id
        seen = str(result.get("id")) in excluded or cited_id(result) in excluded
        if own or seen or (events and events <= (excluded | quoted)):
            out.left_out += 1
            continue
        chosen.append(result)
        quoted |= events
    left = budget_tokens - estimate_tokens(HEADER) - 1
    snippets: list[tuple[Mapping[str, Any], str]] = []
    for result in chosen[:max_items]:  # breadth: a snippet each while the budget lasts
        room = min(SNIPPET_TOKENS, left - 1)
        if room < MIN_LINE_TOKENS:
            break
        line = line_of(result, room)
        snippets.append((result, line))
        left -= estimate_tokens(line) + 1  # the newline
    per_line = max(MIN_LINE_TOKENS, budget_tokens // 3)
    for result, snippet in snippets:  # depth: the best ranked grow into what is left
        paid = estimate_tokens(snippet)
        grown = min(per_line, paid + left)
        line = line_of(result, grown) if grown > paid else snippet
        left -= estimate_tokens(line) - paid
        out.lines.append(line)
        out.chosen.append((result, line))
    return out
