"""Questions about what was run or changed want the command or the edit, not the talk around it.

"Which command regenerated the lock file?", "show the diff that added the retry", "what did
we edit in settings.py?": the answer is a tool's call (``$ uv lock --upgrade``, ``Edit
src/client.rs`` with its diff). Everywhere else a tool's words weigh as if they
said nothing (``memory.event_salience``) and an old observation goes stale, so that prompts and
replies lead; asked for the command itself, the tiers found it (fused in the first ten) and
the ranking buried it below rules and decisions that merely share a word: on ``make
bench-coding`` no such question had its command or edit first.

For such a question a command or an edit, whichever it asks for (``asked_artifacts``: "which
command" wants commands, "the diff" edits, "which file did we touch" either), read from the
shapes the capture hooks give them (``artifact_kind``: ``$ <command>`` for a shell call or
its result, ``<Tool> <path>`` followed by a diff or a file's head for an edit or a write),
weighs ``factor`` and is spared staleness: what was run or changed stays what was run or changed.
A read or an "applied" acknowledgement is neither: it shows no command and no change. Asked
for the diff, the test runs around it are not the answer: on ``make bench-coding`` they came
first in three of the four questions asking for an edit while every command was weighed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.ranking import reweigh_all

Kind = Literal["command", "edit"]
KINDS: frozenset[Kind] = frozenset(("command", "edit"))

# What the question asks for: a command ("which command", "from the shell"), an edit ("the
# diff", "the code change", "what did we edit in settings.py"), or either ("which file did
# we change").
COMMAND_QUESTION = re.compile(
    r"\b(commands?|invocation|cli\s+flags?|(from|in)\s+the\s+(shell|terminal|command\s+line)|"
    r"ran\s+to|run\s+to)\b",
    re.IGNORECASE,
)
EDIT_QUESTION = re.compile(
    r"\b(diffs?|patch(es)?|code\s+changes?|(change|changed|edit|edited)\s+in\s+[\w./-]+\.\w+|"
    # "show the edit that renamed the option": the noun, not "edit the file"
    r"(which|what)\s+(edits?|changes?)|(the|that|this|an?)\s+edits?)\b",
    re.IGNORECASE,
)
# "Which file did we touch?" asks what was changed; "which files does an export create?" and
# "which file holds the retry settings?" ask what something is or does (``make bench-real``:
# taken for commands, every shell call outranked the reply that listed the files).
_WORK = r"(chang|edit|touch|modif|updat|fix|patch|wr[io]t|delet|remov|mov|renam|add)\w*"
EITHER_QUESTION = re.compile(
    r"\b(which|what)\s+(files?|lines?|flags?|scripts?)\s+"
    rf"((did|have|had)\s+(we|you|i)\s+(\w+\s+)?{_WORK}|(were|was|got)\s+{_WORK})",
    re.IGNORECASE,
)
# ``shape.call_text`` and ``shape.result_text`` of the capture hooks: "$ cmd  # what for",
# "$ cmd\nexit 1\n<output>"; "Edit /path\n@@ -1 +1 @@ ..."; "Write /path (12 lines)\n<head>".
COMMAND = re.compile(r"^\$ \S")
EDIT = re.compile(r"^\w+ \S+\n@@ |^\w+ \S+ \(\d+ lines?\)")


def asked_artifacts(query: str) -> frozenset[Kind]:
    """What a question asks for among commands and edits; empty when it asks for neither."""
    if EITHER_QUESTION.search(query):
        return KINDS
    kinds: set[Kind] = set()
    if COMMAND_QUESTION.search(query):
        kinds.add("command")
    if EDIT_QUESTION.search(query):
        kinds.add("edit")
    return frozenset(kinds)


def artifact_kind(text: str) -> Kind | None:
    """A moment as a command (its call or its result) or an edit with its change, or None."""
    if COMMAND.match(text):
        return "command"
    if EDIT.match(text):
        return "edit"
    return None


def prefer_artifacts(
    candidates: Iterable[Candidate], *, kinds: frozenset[Kind], factor: float
) -> list[Candidate]:
    """Weigh each command or edit of the ``kinds`` asked for by ``factor`` (``explain.ranking``:
    ``artifact``), no longer demoted for its age (its ``staleness`` factor back to 1); sorted."""

    def weigh(cand: Candidate) -> tuple[float, bool] | None:
        if getattr(cand.doc, "type", "event") != "event":
            return None
        asked = artifact_kind(getattr(cand.doc, "text", "") or "") in kinds
        return (factor, True) if asked else None

    return reweigh_all(candidates, "artifact", weigh)
