"""``agent-memory hook <runtime>``: read the payload, post the events, never block, never lose.

The order of work is chosen for the agent's sake. The new events go first, in one POST with a
short timeout. If the gateway is down, slow or answers 5xx, they are appended to the spool
(fsync'd) instead. Only after the runtime has its answer (stdout written and flushed), and only
when the gateway just took our post and the spool holds something, older events are sent: by a
detached process, so the agent does not wait for them (or, where ``fork`` is missing, by a
flush bounded by what is left of the hook's budget). The exit code is 0 whatever happens, and
errors go to ``$AGENT_MEMORY_HOME/logs/hooks.log``, because a failing hook shows up in the
agent's UI (or, for some runtimes, blocks the action) and memory capture must never get in the
way.
"""

from __future__ import annotations

import importlib
import os
import sys
import time

from agent_memory_hooks import lite
from agent_memory_hooks.config import HookConfig, load_config
from agent_memory_hooks.events import HookContext, now_ms
from agent_memory_hooks.post import OK, PostResult, post_events
from agent_memory_hooks.project import resolve_project_id
from agent_memory_hooks.spool import Spool
from agent_memory_hooks.transcript import TranscriptCursor

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import ModuleType
    from typing import Any, TextIO

    from agent_memory_hooks.events import Event

RUNTIMES: dict[str, str] = {
    "claude-code": "claude_code",
    "gemini-cli": "gemini_cli",
    "copilot-cli": "copilot_cli",
    "opencode": "opencode",
    "codex": "codex",
}
ALIASES: dict[str, str] = {
    "claude": "claude-code",
    "gemini": "gemini-cli",
    "copilot": "copilot-cli",
    "codex-cli": "codex",
}
MIN_FLUSH_WINDOW_S = 0.01
BACKGROUND_FLUSH_S = 30.0
BACKGROUND_REQUEST_S = 5.0
MAX_LOG_BYTES = 5 * 1024 * 1024


def canonical_runtime(name: str) -> str | None:
    name = name.strip().lower()
    name = ALIASES.get(name, name)
    return name if name in RUNTIMES else None


def runtime_module(runtime: str) -> ModuleType:
    return importlib.import_module(f"agent_memory_hooks.{RUNTIMES[runtime]}")


def parse_payload(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    data = lite.loads(raw)
    if not isinstance(data, dict):
        raise ValueError(f"hook payload is a JSON {type(data).__name__}, expected an object")
    return data


def collect(
    module: ModuleType,
    payload: Mapping[str, Any],
    ctx: HookContext,
    config: HookConfig,
    deadline: float,
) -> tuple[list[Event], TranscriptCursor | None]:
    """The payload's events plus, for runtimes with a transcript, what was appended to it.

    The returned cursor holds the session's transcript lock; ``run`` commits and closes it once
    the events are durable (posted or spooled).
    """
    reader = getattr(module, "transcript_events", None)
    session_of = getattr(module, "session_of", None)
    session = session_of(payload) if reader is not None and session_of is not None else None
    if not session or reader is None:
        return list(module.normalize(payload, ctx)), None
    cursor = TranscriptCursor(config.state_dir, ctx.runtime, session)
    if not cursor.open(deadline):
        return list(module.normalize(payload, ctx)), None
    try:
        lines = cursor.read(module.transcript_path(payload))
        from_transcript = reader(lines, payload, ctx, cursor.state)
        last = cursor.state.get("last_ts")
        ctx.transcript_ts = last if isinstance(last, str) else None
        ctx.transcript_pos = cursor.position
        events = [*module.normalize(payload, ctx), *from_transcript]
    except BaseException:
        cursor.close()
        raise
    return events, cursor


def deliver(events: list[Event], config: HookConfig, spool: Spool, deadline: float) -> str:
    """Post ``events`` or spool them; returns what happened, for the log and for tests."""
    if not events:
        return "nothing"
    post_deadline = min(deadline, time.monotonic() + config.timeout_s)
    result = post_events(config.gateway_url, events, token=config.token, deadline=post_deadline)
    if result.outcome == OK:
        return "posted"
    spool.append(events)  # REJECTED too: the flush isolates the bad event and keeps the rest
    return f"spooled ({_why(result)})"


def _why(result: PostResult) -> str:
    return f"HTTP {result.status}" if result.status else result.detail


def flush_spool(spool: Spool, config: HookConfig, deadline: float, per_request_s: float) -> None:
    if deadline - time.monotonic() < MIN_FLUSH_WINDOW_S or not spool.waiting():
        return

    def post(batch: list[Event], until: float) -> PostResult:
        until = min(until, time.monotonic() + per_request_s)
        return post_events(config.gateway_url, batch, token=config.token, deadline=until)

    report = spool.flush(post, deadline)
    if report.sent or report.rejected:
        log(
            config,
            f"spool: sent {report.sent}, refused {report.rejected} (see {spool.rejected}), "
            f"{report.remaining} left",
        )


def drain_in_background(spool: Spool, config: HookConfig) -> bool:
    """Flush the spool from a detached grandchild, so the agent does not wait for it.

    The gateway just took our own post, so it is back: a good moment to send what is waiting.
    The grandchild leaves the session and lets go of stdin/stdout/stderr (a runtime reads the
    hook's stdout until every writer has closed it), flushes with generous timeouts, and is
    reparented to init when it is done; the hook itself waits only for the short-lived child.
    Only one flusher runs at a time (the spool's lock), so a burst of hooks costs nothing more.
    """
    if not hasattr(os, "fork"):
        return False
    try:
        child = os.fork()
    except OSError:
        return False
    if child:
        try:  # noqa: SIM105 - contextlib would cost import time on the hook path
            os.waitpid(child, 0)
        except ChildProcessError:
            pass
        return True
    try:  # the child: fork again and leave, so the grandchild is nobody's zombie
        if os.fork():
            os._exit(0)
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        deadline = time.monotonic() + BACKGROUND_FLUSH_S
        flush_spool(spool, config, deadline, max(config.timeout_s, BACKGROUND_REQUEST_S))
    except BaseException:
        pass
    finally:
        os._exit(0)


def log(config: HookConfig, message: str) -> None:
    try:
        os.makedirs(os.path.dirname(config.log_path), exist_ok=True)
        try:
            if os.path.getsize(config.log_path) > MAX_LOG_BYTES:
                os.replace(config.log_path, config.log_path + ".1")
        except FileNotFoundError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with open(config.log_path, "a", encoding="utf-8") as f:
            f.write(f"{stamp} pid={os.getpid()} {message}\n")
    except OSError:
        pass  # nowhere left to complain; the agent must still not notice


def recalled(
    runtime: str,
    event_name: str | None,
    payload: Mapping[str, Any],
    ctx: HookContext,
    environ: Mapping[str, str],
    config: HookConfig,
) -> str:
    """The memories recalled for a prompt, or the brief a session starts with, in the
    runtime's shape ("" for none): after the events are delivered, so that capture never waits
    for recall (``recall.py``)."""
    from agent_memory_hooks import recall  # lazy: only prompt hooks of some runtimes read

    if runtime not in recall.PROMPT_EVENTS and runtime not in recall.START_EVENTS:
        return ""
    cwd = payload.get("cwd")
    project = ctx.project_of(cwd if isinstance(cwd, str) and cwd else ctx.cwd)
    args = (runtime, event_name, payload, project, environ, config.home, config.token)
    return recall.prompt_output(*args) or recall.start_output(*args)


def run(
    runtime: str,
    *,
    event_name: str | None = None,
    argv_payload: str | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    env: Mapping[str, str] | None = None,
    project_id: str | None = None,
) -> int:
    """One hook call; ``project_id`` (``--project-id``, from ``install --project NAME``) names
    the project instead of the rule of ``project.py``."""
    started = time.monotonic()
    environ = os.environ if env is None else env
    config = load_config(environ)
    out = stdout or sys.stdout
    module: ModuleType | None = None
    spool = Spool(config.spool_dir)
    drain = False
    injected = ""  # what the runtime puts in the model's context (recall.py), once whole
    try:
        canonical = canonical_runtime(runtime)
        if canonical is None:
            log(config, f"unknown runtime {runtime!r}; known: {', '.join(RUNTIMES)}")
            return 0
        module = runtime_module(canonical)
        deadline = started + config.budget_s
        raw = argv_payload if argv_payload is not None else (stdin or sys.stdin).read()
        payload = parse_payload(raw)
        ctx = HookContext(
            runtime=canonical,
            now_ms=now_ms(),
            project_of=(lambda _cwd: project_id)
            if project_id
            else (lambda cwd: resolve_project_id(cwd, environ)),
            user_id=config.user_id,
            max_text=config.max_text,
            event_name=event_name,
            cwd=os.getcwd(),
        )
        events, cursor = collect(module, payload, ctx, config, deadline)
        try:
            outcome = deliver(events, config, spool, deadline)
            if cursor is not None:
                cursor.commit()
        finally:
            if cursor is not None:
                cursor.close()
        if outcome.startswith("spooled"):
            log(config, f"{canonical}: {len(events)} event(s) {outcome}")
        else:  # the gateway answered (or was not needed): send what waits, if anything
            drain = spool.waiting()
        injected = recalled(canonical, event_name, payload, ctx, environ, config)
    except Exception:
        import traceback  # lazy: only failures pay for it

        log(config, f"{runtime}: hook failed\n{traceback.format_exc()}")
    finally:
        text = getattr(module, "STDOUT", "") if module is not None else ""
        text = injected or text
        if text:
            out.write(text + "\n")
        out.flush()
    if drain and not drain_in_background(spool, config):
        # no fork here: a bounded flush within what is left of the hook's budget
        flush_spool(spool, config, started + config.budget_s, config.timeout_s)
    return 0


def main(argv: Sequence[str]) -> int:
    """``hook <runtime> [--event NAME] [--project-id NAME] [PAYLOAD]`` without argparse (it
    costs import time)."""
    args = list(argv)
    event_name = _take_option(args, "--event")
    project_id = (_take_option(args, "--project-id") or "").strip() or None
    if not args or args[0] in ("-h", "--help"):
        sys.stderr.write(
            "usage: agent-memory hook {"
            + ",".join(RUNTIMES)
            + "} [--event NAME] [--project-id NAME] [PAYLOAD]\n"
            "Reads the runtime's hook JSON on stdin (Codex: as the last argument) and posts it\n"
            "to the gateway; spools it under $AGENT_MEMORY_HOME/spool when the gateway is away.\n"
        )
        return 0 if args else 2
    runtime = args[0]
    canonical = canonical_runtime(runtime)
    from_argv = canonical is not None and getattr(
        runtime_module(canonical), "PAYLOAD_FROM_ARGV", False
    )
    argv_payload = (args[-1] if len(args) > 1 else "") if from_argv else None
    return run(runtime, event_name=event_name, argv_payload=argv_payload, project_id=project_id)


def _take_option(args: list[str], name: str) -> str | None:
    """The value of ``name VALUE`` in ``args``, both removed from it (None when absent)."""
    if name not in args:
        return None
    at = args.index(name)
    if at + 1 < len(args):
        value = args[at + 1]
        del args[at : at + 2]
        return value
    del args[at]
    return None
