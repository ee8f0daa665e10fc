"""Recall that reaches the agent: what a hook prints so the runtime puts memories in context.

Capture (``runner.run``) writes; this module reads. On a prompt (Claude Code's
``UserPromptSubmit``, Gemini CLI's ``BeforeAgent``) the hook asks the query service's
``POST /v1/recall`` for the few memories the prompt needs within a token budget and prints them
in the runtime's documented shape
(``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}``): the runtime adds
``additionalContext`` to what the model reads. The service decides what is worth giving (one
implementation behind every runtime); the hook only remembers, per session, the ids it already
gave, so that they are never paid for twice.

OpenCode has no command hooks whose output it reads: our plugin (``assets/opencode-plugin.js``)
runs this same hook with a payload of its own, ``{"event": "recall.prompt", "session_id",
"prompt", "cwd"}`` from its ``chat.message`` hook and ``{"event": "recall.start", "session_id",
"cwd"}`` before a session's first model call, reads the same JSON from stdout and puts
``additionalContext`` where OpenCode reads it (a synthetic text part of the user message; the
system prompt).

Never in the agent's way: the exchange has its own deadline (``AGENT_MEMORY_RECALL_TIMEOUT_MS``,
default 600 ms, so that a slow service still leaves the hook well inside one second), and any
failure (service down, slow, an error status, a body that is not the expected JSON) means
nothing is printed: a hook's stdout is read by the runtime, so it holds the expected JSON or
nothing at all. Settings (environment; per project in the runtime's own settings, e.g. the
``env`` block of ``.claude/settings.json``):

- ``AGENT_MEMORY_RECALL``: ``off`` (or ``0``, ``false``, ``no``) turns injection off;
- ``AGENT_MEMORY_RECALL_PROMPT_TOKENS``: the budget of one prompt's recall (default 600);
- ``AGENT_MEMORY_RECALL_BRIEF_TOKENS``: the budget of the brief a session starts with (default
  1,500; ``GET /v1/projects/{id}/brief``), given at a start, a ``/clear`` and after a
  compaction, not on a resume (the resumed conversation holds it already);
- ``AGENT_MEMORY_QUERY_URL`` or ``AGENT_MEMORY_QUERY__HOST``/``__PORT``: the query service.
"""

from __future__ import annotations

import os
import time

from agent_memory_hooks import lite
from agent_memory_hooks.digest import sha256_hex
from agent_memory_hooks.wire import exchange

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

DEFAULT_PROMPT_TOKENS = 600
DEFAULT_BRIEF_TOKENS = 1500
DEFAULT_TIMEOUT_MS = 600
MAX_PROMPT_CHARS = 4000  # what /v1/recall takes; a longer prompt is asked by its opening
MAX_REMEMBERED = 2000  # ids kept per session (what /v1/recall takes as exclude_ids)
OFF = frozenset({"off", "0", "false", "no"})
# runtime -> the hook events whose output the runtime adds to the model's context
# (Gemini CLI: ``BeforeAgent`` and ``SessionStart`` may return
# ``hookSpecificOutput.additionalContext``, geminicli.com/docs/hooks/reference; OpenCode: the
# names our plugin gives the payloads it sends to ask, in their ``event`` field)
PROMPT_EVENTS = {
    "claude-code": "UserPromptSubmit",
    "gemini-cli": "BeforeAgent",
    "opencode": "recall.prompt",
}
START_EVENTS = {
    "claude-code": "SessionStart",
    "gemini-cli": "SessionStart",
    "opencode": "recall.start",
}
NO_BRIEF_SOURCES = frozenset({"resume"})


def enabled(env: Mapping[str, str]) -> bool:
    return env.get("AGENT_MEMORY_RECALL", "").strip().lower() not in OFF


def query_url(env: Mapping[str, str]) -> str:
    explicit = env.get("AGENT_MEMORY_QUERY_URL", "").strip()
    if explicit:
        return explicit.rstrip("/")
    host = env.get("AGENT_MEMORY_QUERY__HOST", "127.0.0.1").strip()
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    port = env.get("AGENT_MEMORY_QUERY__PORT", "8701").strip() or "8701"
    return f"http://{host}:{port}"


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    try:
        value = int(env.get(name, "").strip() or default)
    except ValueError:
        return default
    return value if value > 0 else default


def prompt_output(
    runtime: str,
    event_name: str | None,
    payload: Mapping[str, Any],
    project_id: str | None,
    env: Mapping[str, str],
    home: str,
    token: str | None,
) -> str:
    """What the hook prints for a prompt event of ``runtime`` ("" for nothing): the recalled
    memories in the runtime's shape, the ids given remembered for the session."""
    event = PROMPT_EVENTS.get(runtime)
    if event is None or not enabled(env) or not project_id:
        return ""
    if _event_of(event_name, payload) != event:
        return ""
    prompt = payload.get("prompt")
    session = payload.get("session_id")
    if not isinstance(prompt, str) or not prompt.strip() or not isinstance(session, str):
        return ""
    deadline = (
        time.monotonic()
        + _positive(env, "AGENT_MEMORY_RECALL_TIMEOUT_MS", DEFAULT_TIMEOUT_MS) / 1000
    )
    memory = _state_path(home, runtime, session)
    given = _read_given(memory)
    body = {
        "project_id": project_id,
        "session_id": session,
        "prompt": prompt[:MAX_PROMPT_CHARS],
        "budget_tokens": _positive(env, "AGENT_MEMORY_RECALL_PROMPT_TOKENS", DEFAULT_PROMPT_TOKENS),
        "exclude_ids": given[-MAX_REMEMBERED:],
    }
    answer = ask(query_url(env) + "/v1/recall", body, token, deadline)
    context = answer.get("context") if isinstance(answer, dict) else None
    if not isinstance(context, str) or not context:
        return ""
    new: list[str] = []
    for memory_item in answer.get("memories") or []:
        if isinstance(memory_item, dict):
            new.append(str(memory_item.get("id", "")))
            new.extend(str(e) for e in memory_item.get("event_ids") or [])
    _write_given(memory, given + [i for i in new if i])
    return lite.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    )


def start_output(
    runtime: str,
    event_name: str | None,
    payload: Mapping[str, Any],
    project_id: str | None,
    env: Mapping[str, str],
    home: str,
    token: str | None,
) -> str:
    """What the hook prints when a session starts ("" for nothing): the project's brief in the
    runtime's shape; the ids it cites are remembered, so prompts of the session skip them."""
    event = START_EVENTS.get(runtime)
    if event is None or not enabled(env) or not project_id:
        return ""
    if _event_of(event_name, payload) != event:
        return ""
    session = payload.get("session_id")
    if not isinstance(session, str) or payload.get("source") in NO_BRIEF_SOURCES:
        return ""
    timeout = _positive(env, "AGENT_MEMORY_RECALL_TIMEOUT_MS", DEFAULT_TIMEOUT_MS)
    budget = _positive(env, "AGENT_MEMORY_RECALL_BRIEF_TOKENS", DEFAULT_BRIEF_TOKENS)
    url = (
        f"{query_url(env)}/v1/projects/{_quote(project_id)}/brief"
        f"?budget_tokens={budget}&session_id={_quote(session)}"
    )
    answer = ask(url, None, token, time.monotonic() + timeout / 1000)
    context = answer.get("context") if isinstance(answer, dict) else None
    if not isinstance(context, str) or not context:
        return ""
    memory = _state_path(home, runtime, session)
    _write_given(memory, _read_given(memory) + [str(i) for i in answer.get("ids") or []])
    return lite.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    )


def _event_of(event_name: str | None, payload: Mapping[str, Any]) -> Any:
    """The event a payload is for: ``--event``, else the runtime's ``hook_event_name``, else the
    ``event`` of our OpenCode plugin's envelope."""
    return event_name or payload.get("hook_event_name") or payload.get("event")


def _quote(text: str) -> str:
    """Percent-encoding of a path segment or query value without ``urllib`` (its import pulls
    in ``re`` and more): ids are plain tokens, anything else is encoded byte by byte."""
    safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~"
    return "".join(c if c in safe else "".join(f"%{b:02X}" for b in c.encode()) for c in text)


def _state_path(home: str, runtime: str, session: str) -> str:
    return os.path.join(home, "hooks", "recall", f"{runtime}-{sha256_hex(session)[:32]}.json")


def _read_given(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            data = lite.loads(f.read())
    except (OSError, ValueError):
        return []
    return [str(i) for i in data] if isinstance(data, list) else []


def _write_given(path: str, ids: list[str]) -> None:
    """Atomically (a concurrent hook of the same session reads the old list or the new one)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(lite.dumps(list(dict.fromkeys(ids))[-MAX_REMEMBERED:]))
    os.replace(tmp, path)


def ask(url: str, body: dict[str, Any] | None, token: str | None, deadline: float) -> Any:
    """POST ``body`` as JSON (GET without one) and return the decoded answer of a 200, else
    None; never raises for the network or the peer, never outlives ``deadline``."""
    try:
        encoded = None if body is None else lite.dumps(body).encode()
        status, data = exchange(url, encoded, token, deadline)
        if status != 200:
            return None
        return lite.loads(data.decode("utf-8"))
    except (OSError, ValueError, TimeoutError, UnicodeDecodeError):
        return None
