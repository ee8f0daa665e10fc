"""The pipeline's phases as ``GET /v1/status`` tells them (issue 53, point 3).

``agent-memory status`` prints them, and ``agent-memory import --wait`` follows them until
``drained``: the imported events stored, their sessions' last segments closed (a historical
session's closes seconds after its events are in), summarised into the TOC, embedded and
indexed. Standard library only: ``status`` loads nothing heavier than the client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_memory_client import AgentMemoryClient

# (phase, the durable consumers doing it), in pipeline order
PHASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("events stored", ("recorder",)),
    ("segments", ("segmenter",)),
    ("summaries (TOC)", ("summarizer",)),
    ("vectors", ("embedder", "embedder-toc")),
    ("text index", ("bm25-indexer", "bm25-indexer-toc")),
    ("topics", ("topics",)),
)


def phase_lines(status: Mapping[str, Any]) -> list[str]:
    """One line per phase: done or working, with what is left when the status says it
    (the consumers' counts in local mode; the segments of this tenant always)."""
    consumers = {c["name"]: c for c in status.get("consumers", [])}
    lines = []
    for phase, names in PHASES:
        mine = [consumers[n] for n in names if n in consumers]
        missing = len(mine) < len(names) or not all(c.get("exists") for c in mine)
        done = not missing and all(c.get("caught_up") for c in mine)
        left = [
            int(c.get("pending", 0)) + int(c.get("ack_pending", 0)) for c in mine if "pending" in c
        ]
        detail = f"{sum(left)} message(s) to go" if left and not done else ""
        if phase == "events stored":
            detail = f"{status.get('events_stored', 0)} stored" + (f", {detail}" if detail else "")
        if phase == "segments":
            closing = int(status.get("segments_closing", 0))
            opened = int(status.get("segments_open", 0))
            done = done and closing == 0
            detail = ", ".join([f"{opened} open, {closing} closing", *([detail] if detail else [])])
        state = "not started" if missing else ("done" if done else "working")
        lines.append(f"  {phase:<16} {state:<12} {detail}".rstrip())
    return lines


async def wait_drained(
    client: AgentMemoryClient,
    *,
    within_s: float,
    interval: float = 2.0,
    out: Callable[[str], None] = print,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Poll the status until it is drained (True) or ``within_s`` seconds passed (False),
    printing the phases whenever they change."""
    started = clock()
    shown: Sequence[str] = ()
    while True:
        status = await client.status()
        lines = phase_lines(status)
        if lines != shown:
            state = "drained" if status["drained"] else "not drained yet"
            out(f"after {clock() - started:.0f} s: {state}")
            for line in lines:
                out(line)
            shown = lines
        if status["drained"]:
            return True
        if clock() - started >= within_s:
            return False
        await asyncio.sleep(interval)
