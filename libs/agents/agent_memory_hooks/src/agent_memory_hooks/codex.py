"""Codex CLI: the ``notify`` program (``notify = ["agent-memory", "hook", "codex"]``).

Codex runs the program once per finished turn with one extra argument, a JSON string
(github.com/openai/codex docs/config.md, "notify"): ``type`` (``agent-turn-complete`` is the
only one), ``thread-id`` (the session), ``turn-id``, ``cwd``, ``input-messages`` (the user's
messages of the turn) and ``last-assistant-message``. Each becomes an event keyed by thread,
turn and position, so a repeated notification is stored once. Codex has no tool hooks: what
the agent did is in its reply; reading memory back goes through the MCP server.
"""

from __future__ import annotations

from agent_memory_hooks.digest import sha256_hex
from agent_memory_hooks.events import RUNTIME_TYPE, HookContext, make_event, str_field

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

    from agent_memory_hooks.events import Event, Payload

RUNTIME = "codex"
STDOUT = ""
PAYLOAD_FROM_ARGV = True
# What Codex puts into a user message that the user did not type (codex-rs: the turn's
# ``<environment_context>`` (cwd, sandbox, approval policy, shell), the project's AGENTS.md and
# the user's instructions, wrapped in ``<user_instructions>`` or, in newer releases, under a
# "# AGENTS.md instructions for <folder>" heading with ``<INSTRUCTIONS>``), by how it opens.
CONTEXT_OPENERS: tuple[tuple[str, str], ...] = (
    ("<environment_context>", "environment_context"),
    ("<user_instructions>", "user_instructions"),
    ("# AGENTS.md", "user_instructions"),
    ("<INSTRUCTIONS>", "user_instructions"),
    ("<user_shell_command>", "command"),
)


def runtime_kind(text: str) -> str | None:
    """What Codex wrote of a user message (a ``runtime_kind``), None for what the user typed."""
    stripped = text.lstrip()
    return next((what for opener, what in CONTEXT_OPENERS if stripped.startswith(opener)), None)


def normalize(payload: Payload, ctx: HookContext) -> list[Event]:
    kind = str_field(payload, "type") or ""
    if kind != "agent-turn-complete":
        return []
    cwd = str_field(payload, "cwd")
    session = str_field(payload, "thread-id", "thread_id")
    if not session:  # releases before thread-id: one session per folder
        session = "codex-" + sha256_hex(cwd or "")[:16]
    turn = str_field(payload, "turn-id", "turn_id") or str(ctx.now_ms)
    meta: dict[str, Any] = {"hook_event": kind, "turn_id": turn}
    events: list[Event] = []
    inputs = payload.get("input-messages", payload.get("input_messages"))
    if isinstance(inputs, list):
        for index, message in enumerate(inputs):
            if isinstance(message, str) and message.strip():
                wrote = runtime_kind(message)
                events.append(
                    make_event(
                        ctx,
                        key=("turn", turn, "input", index),
                        session_id=session,
                        role="user" if wrote is None else "system",
                        type="message" if wrote is None else RUNTIME_TYPE,
                        text=message,
                        cwd=cwd,
                        ts=ctx.now_ms - 1,  # asked before it was answered
                        metadata=meta if wrote is None else {**meta, "runtime_kind": wrote},
                    )
                )
    reply = str_field(payload, "last-assistant-message", "last_assistant_message")
    if reply:
        events.append(
            make_event(
                ctx,
                key=("turn", turn, "reply"),
                session_id=session,
                role="assistant",
                type="message",
                text=reply,
                cwd=cwd,
                metadata=meta,
            )
        )
    return events
