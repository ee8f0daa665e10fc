"""The brief of a project: what an agent starting work on it should know now, within a budget.

Read from what the pipeline already wrote, no search: the grips the summarizer classified as
decisions, constraints, preferences and procedures (none that a newer statement replaced), and
the last session's first prompt and last reply. Rules come before the last session because
they hold whatever the next task is; within the rules, decisions and constraints before
preferences and procedures (a broken constraint costs more than an unmet preference), newest
first. Each line cites the id ``memory_expand`` opens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db.postgres import load_queries
from agent_memory_query.recall.logic import MIN_LINE_TOKENS, clip, estimate_tokens
from agent_memory_query.sharing.policy import BOUNDS_SQL, ReadBounds

Q = {
    name: query.replace("{bounds}", BOUNDS_SQL)
    for name, query in load_queries(__package__ or "", "sql/brief.sql").items()
}
RULES_READ = 300  # grips read: far more than any budget shows
LINE_TOKENS = 80  # one rule's line at most: a brief lists, the id opens the rest
SECTIONS = (
    ("Decisions and constraints in force:", ("decision", "constraint")),
    ("Preferences and procedures:", ("preference", "procedure")),
)


async def read_brief(
    conn: AsyncConnection[Any],
    tenant: str,
    project: str,
    current_session: str | None,
    bounds: ReadBounds,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rules in force and the last session's goal and outcome rows."""
    params = {"tenant": tenant, "project": project, **bounds.params}
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q["rules"], {**params, "limit": RULES_READ})
        rules = await cur.fetchall()
        await cur.execute(Q["last_session"], {**params, "current": current_session or ""})
        last = await cur.fetchone()
        ends: list[dict[str, Any]] = []
        if last is not None:
            await cur.execute(Q["session_ends"], {**params, "session": last["session_id"]})
            ends = await cur.fetchall()
    return rules, ends


def compose(
    project: str,
    rules: Sequence[Mapping[str, Any]],
    ends: Sequence[Mapping[str, Any]],
    budget_tokens: int,
) -> tuple[str, list[str]]:
    """The brief's text within ``budget_tokens`` and the ids it cites, in order."""
    header = f"Project brief from agent-memory ({project}); open an id with memory_expand:"
    lines = [header]
    cited: list[str] = []
    left = budget_tokens - estimate_tokens(header) - 1

    def add(text: str, ident: str) -> bool:
        nonlocal left
        if left < MIN_LINE_TOKENS // 2:
            return False
        line = clip(text, min(LINE_TOKENS, left - 1))
        lines.append(line)
        cited.append(ident)
        left -= estimate_tokens(line) + 1
        return True

    # the last session is kept room for: a quarter of the budget at most
    session_room = min(left // 4, 2 * LINE_TOKENS + 20) if ends else 0
    left -= session_room
    for title, kinds in SECTIONS:
        chosen = [r for r in rules if r["memory_kind"] in kinds]
        if not chosen or left < MIN_LINE_TOKENS:
            continue
        lines.append(title)
        left -= estimate_tokens(title) + 1
        for row in chosen:
            ident = str(row["event_ids"][0]) if row["event_ids"] else str(row["grip_id"])
            when = str(row["ts"])[:10]
            if not add(f"- [{ident}] {when} {row['memory_kind']}: {row['excerpt']}", ident):
                break
    left += session_room
    if ends and left >= MIN_LINE_TOKENS:
        when = str(ends[0]["ts"])[:10]
        lines.append(f"Last session ({when}):")
        left -= estimate_tokens(lines[-1]) + 1
        for row in ends:
            add(f"- {row['part']} [{row['event_id']}]: {row['text']}", str(row["event_id"]))
    return ("\n".join(lines) if len(lines) > 1 else ""), cited
