"""Questions about what was run or changed want the command or the edit, not the talk around it.

"Which command merged the two Alembic heads?", "show the diff that installed the panic hook",
"what did we change in conftest.py?": the answer is a tool's call (``$ uv run alembic merge
...``, ``Edit src/terminal.rs`` with its diff). Everywhere else a tool's words weigh as if they
said nothing (``memory.event_salience``) and an old observation goes stale, so that prompts and
replies lead; asked for the command itself, the tiers found it (fused in the first ten) and
the ranking buried it below rules and decisions that merely share a word: on ``make
bench-coding`` no such question had its command or edit first.

For such a question (``is_artifact_question``) a command or an edit (``is_artifact``, read
from the shapes the capture hooks give them: ``$ <command>`` for a shell call or its result,
``<Tool> <path>`` followed by a diff or a file's head for an edit or a write) weighs
``factor`` and is spared staleness: what was run or changed stays what was run or changed.
A read or an "applied" acknowledgement is neither: it shows no command and no change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent_memory_query.search.brainstem.fusion import Candidate

ARTIFACT_QUESTION = re.compile(
    r"\b(commands?|diffs?|patch(es)?|code\s+changes?|invocation|cli\s+flags?|"
    r"(change|changed|edit|edited)\s+in\s+[\w./-]+\.\w+|"
    r"(which|what)\s+(files?|lines?|flags?|scripts?|edits?|changes?)|"
    r"(from|in)\s+the\s+(shell|terminal|command\s+line)|ran\s+to|run\s+to)\b",
    re.IGNORECASE,
)
# ``shape.call_text`` and ``shape.result_text`` of the capture hooks: "$ cmd  # what for",
# "$ cmd\nexit 1\n<output>"; "Edit /path\n@@ -1 +1 @@ ..."; "Write /path (12 lines)\n<head>".
ARTIFACT = re.compile(r"^\$ \S|^\w+ \S+\n@@ |^\w+ \S+ \(\d+ lines?\)", re.IGNORECASE)


def is_artifact_question(query: str) -> bool:
    return bool(ARTIFACT_QUESTION.search(query))


def is_artifact(text: str) -> bool:
    """Whether a moment is a command (its call or its result) or an edit with its change."""
    return bool(ARTIFACT.match(text))


def prefer_artifacts(candidates: Iterable[Candidate], *, factor: float) -> list[Candidate]:
    """Weigh each command and edit by ``factor`` (``explain.ranking``: ``artifact``), no longer
    demoted for its age (its ``staleness`` factor back to 1); sorted."""
    out = list(candidates)
    for cand in out:
        if getattr(cand.doc, "type", "event") != "event":
            continue
        if not is_artifact(getattr(cand.doc, "text", "") or ""):
            continue
        cand.factors["artifact"] = factor
        cand.score *= factor
        stale = cand.factors.get("staleness", 1.0)
        if 0.0 < stale < 1.0:
            cand.factors["staleness"] = 1.0
            cand.score /= stale
    out.sort(key=lambda c: -c.score)
    return out
