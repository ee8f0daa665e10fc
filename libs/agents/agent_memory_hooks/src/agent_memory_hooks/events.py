"""Building normalized events: deterministic ids, clipped text, the common metadata.

An event id is a hash of what identifies the thing in the runtime (session + tool-use id,
session + transcript line uuid, session + hook timestamp...). The gateway and the recorder
de-duplicate by id, so a payload posted twice (a spool replay after a timeout that did reach
the gateway, a transcript line read again) is stored once. When a runtime gives nothing stable
to hash, the hook's own clock is part of the key: the id is then computed once, before the
first attempt, and travels with the event into the spool, which is all a retry needs.
"""

from __future__ import annotations

import time

from agent_memory_hooks import lite
from agent_memory_hooks.digest import sha256_hex

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    Event = dict[str, Any]
    Payload = Mapping[str, Any]

CLIP_NOTE = "\n…[{n} more characters not recorded]"
METADATA_VALUE_BYTES = 4_000


class HookContext:
    """Per invocation: which runtime, the hook's clock, and how to name the project."""

    def __init__(
        self,
        *,
        runtime: str,
        now_ms: int,
        project_of: Callable[[str | None], str],
        user_id: str | None = None,
        max_text: int = 32_000,
        event_name: str | None = None,
        cwd: str | None = None,
    ) -> None:
        self.runtime = runtime  # becomes the events' agent_id, e.g. "claude-code"
        self.now_ms = now_ms
        self.project_of = project_of
        self.user_id = user_id
        self.max_text = max_text
        self.event_name = event_name  # from --event, for runtimes whose payload does not say
        self.cwd = cwd  # the hook process's own working directory
        # set by the runner once the session's transcript was read: the latest entry's time and
        # how far the transcript reached (bytes), for hook events that carry neither
        self.transcript_ts: str | None = None
        self.transcript_pos: int | None = None


def now_ms() -> int:
    return int(time.time() * 1000)


def event_id(runtime: str, *key: object) -> str:
    digest = sha256_hex("\x1f".join([runtime, *map(str, key)]))
    return f"{runtime}-{digest[:40]}"


def clip(text: str, limit: int) -> tuple[str, int]:
    """Cut ``text`` to ``limit`` characters; return it and how many characters were dropped."""
    if len(text) <= limit:
        return text, 0
    dropped = len(text) - limit
    return text[:limit] + CLIP_NOTE.format(n=dropped), dropped


def compact_json(value: Any) -> str:
    return lite.dumps(value)


def small_value(value: Any) -> Any:
    """``value`` when its JSON is small, else a clipped string, so metadata stays bounded."""
    text = compact_json(value)
    if len(text.encode()) <= METADATA_VALUE_BYTES:
        return value
    return clip(text, METADATA_VALUE_BYTES // 4)[0]


def ts_from(value: Any, fallback_ms: int) -> str | int:
    """A runtime's timestamp as the gateway accepts it: RFC 3339 text or epoch milliseconds."""
    if isinstance(value, bool) or value is None:
        return fallback_ms
    if isinstance(value, int | float):
        ms = int(value if value > 1_000_000_000_000 else value * 1000)
        return ms if 1_000_000_000_000 <= ms <= 32_503_680_000_000 else fallback_ms
    if isinstance(value, str) and value.strip():
        from datetime import UTC, datetime  # lazy: only ISO timestamps need it

        text = value.strip()
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return fallback_ms
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return fallback_ms


def text_of(value: Any) -> str:
    """Readable text for a tool's input or output, whatever shape the runtime gives it."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [text_of(v) for v in value]
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict):
        if value.get("type") in ("image", "document"):  # base64 payloads are no reading
            return f"[{value['type']}]"
        if isinstance(value.get("stdout"), str):  # shell tools: both streams matter
            out = [value.get("stdout") or "", value.get("stderr") or ""]
            return "\n".join(p for p in out if isinstance(p, str) and p)
        for key in ("text", "content", "output", "result", "llmContent", "textResultForLlm"):
            inner = value.get(key)
            if isinstance(inner, str | list) and inner:
                return text_of(inner)
        if value.get("type") == "text" and isinstance(value.get("text"), str):
            return str(value["text"])
    return compact_json(value)


def str_field(payload: Payload, *names: str) -> str | None:
    """The first of ``names`` that holds a non-empty string (camelCase or snake_case)."""
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def make_event(
    ctx: HookContext,
    *,
    key: tuple[object, ...],
    session_id: str,
    role: str,
    type: str,
    text: str,
    cwd: str | None,
    ts: str | int | None = None,
    metadata: dict[str, Any] | None = None,
) -> Event:
    body, dropped = clip(text, ctx.max_text)
    meta: dict[str, Any] = {"runtime": ctx.runtime}
    if cwd:
        meta["cwd"] = cwd
    meta.update({k: v for k, v in (metadata or {}).items() if v is not None})
    if dropped:
        meta["clipped_chars"] = dropped
    event: Event = {
        "event_id": event_id(ctx.runtime, session_id, *key),
        "ts": ts if ts is not None else ctx.now_ms,
        "project_id": ctx.project_of(cwd or ctx.cwd),
        "agent_id": ctx.runtime,
        "session_id": session_id[:200],
        "role": role,
        "type": type,
        "text": body,
        "metadata": meta,
    }
    if ctx.user_id:
        event["user_id"] = ctx.user_id
    return event


# The event type of what a runtime wrote, not a person (``agent_memory_common.contracts.memory.
# RUNTIME_TYPE``; the hooks import nothing of the server's): stored, and kept out of bullets,
# titles, topics and the default search.
RUNTIME_TYPE = "runtime"


def runtime_event(
    ctx: HookContext,
    *,
    key: tuple[object, ...],
    session_id: str,
    text: str,
    cwd: str | None,
    ts: str | int | None,
    kind: str,
    metadata: dict[str, Any] | None = None,
) -> Event:
    """What the runtime wrote into the conversation (``kind``: a reminder, a command's output,
    a synthetic part...), as a ``RUNTIME_TYPE`` event of the system."""
    return make_event(
        ctx,
        key=key,
        session_id=session_id,
        role="system",
        type=RUNTIME_TYPE,
        text=text,
        cwd=cwd,
        ts=ts,
        metadata={**(metadata or {}), "runtime_kind": kind},
    )


def tool_call_event(
    ctx: HookContext,
    *,
    key: tuple[object, ...],
    session_id: str,
    cwd: str | None,
    tool_name: str,
    tool_input: Any,
    ts: str | int | None = None,
    metadata: dict[str, Any] | None = None,
) -> Event:
    """What the agent asked: ``$ command``, a path and a diff... (see ``shape``)."""
    from agent_memory_hooks import shape

    text, extra = shape.call_text(tool_name, tool_input)
    return make_event(
        ctx,
        key=(*key, "call"),
        session_id=session_id,
        role="assistant",
        type="tool_call",
        text=text,
        cwd=cwd,
        ts=ts,
        metadata={
            "tool_name": tool_name,
            **extra,
            **(metadata or {}),
            "tool_input": small_value(shape.summary(tool_input)),
        },
    )


def tool_result_event(
    ctx: HookContext,
    *,
    key: tuple[object, ...],
    session_id: str,
    cwd: str | None,
    tool_name: str,
    tool_input: Any,
    output: Any,
    ts: str | int | None = None,
    metadata: dict[str, Any] | None = None,
    failed: bool = False,
    exit_code: int | None = None,
    interrupted: bool = False,
) -> Event:
    """What the tool gave back, cut to what a reader needs (see ``shape``)."""
    from agent_memory_hooks import shape

    kind = shape.kind_of(tool_name)
    raw = "" if kind in ("edit", "write") and not failed else text_of(output)
    text, extra = shape.result_text(
        tool_name, tool_input, raw, failed=failed, exit_code=exit_code, interrupted=interrupted
    )
    # the input summary is on the call event; the result names the tool and its file
    meta: dict[str, Any] = {"tool_name": tool_name, "tool_kind": kind, **extra}
    path = shape.path_of(tool_input)
    if path:
        meta["file_path"] = path
    if failed:
        meta["failed"] = True
    if interrupted:
        meta["interrupted"] = True
    return make_event(
        ctx,
        key=(*key, "result"),
        session_id=session_id,
        role="tool",
        type="tool_result",
        text=text or ("(failed)" if failed else "(no output)"),
        cwd=cwd,
        ts=ts,
        metadata={**meta, **(metadata or {})},
    )


def tool_events(
    ctx: HookContext,
    *,
    key: tuple[object, ...],
    session_id: str,
    cwd: str | None,
    tool_name: str,
    tool_input: Any,
    output: Any,
    ts: str | int | None = None,
    metadata: dict[str, Any] | None = None,
    failed: bool = False,
    exit_code: int | None = None,
    interrupted: bool = False,
) -> list[Event]:
    """A tool use as two events: the call (what the agent asked) and the result (what it got)."""
    return [
        tool_call_event(
            ctx,
            key=key,
            session_id=session_id,
            cwd=cwd,
            tool_name=tool_name,
            tool_input=tool_input,
            ts=ts,
            metadata=metadata,
        ),
        tool_result_event(
            ctx,
            key=key,
            session_id=session_id,
            cwd=cwd,
            tool_name=tool_name,
            tool_input=tool_input,
            output=output,
            ts=ts,
            metadata=metadata,
            failed=failed,
            exit_code=exit_code,
            interrupted=interrupted,
        ),
    ]
