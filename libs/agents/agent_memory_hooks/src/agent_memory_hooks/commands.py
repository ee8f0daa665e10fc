"""``agent-memory hook`` and ``agent-memory spool`` as argparse commands.

The console script answers ``hook`` itself, before this module is ever imported (see
``entry.py``); the parser here makes ``hook`` show in ``--help`` and keeps ``python -m
agent_memory_cli hook ...`` working. ``spool flush`` sends what hooks could not deliver, with a
generous deadline, and says what is left; ``spool status`` only counts.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from agent_memory_hooks.config import load_config
from agent_memory_hooks.post import PostResult, post_events
from agent_memory_hooks.runner import RUNTIMES, run
from agent_memory_hooks.spool import Spool


def register(sub: Any) -> None:
    hook = sub.add_parser(
        "hook",
        help="record a coding agent's hook payload (stdin) as events; used by installed hooks",
        description=(
            "Reads the runtime's hook JSON on stdin (Codex: as the last argument), posts the "
            "normalized events to the gateway, and spools them under $AGENT_MEMORY_HOME/spool "
            "when the gateway is unreachable. Always exits 0."
        ),
    )
    hook.add_argument("runtime", choices=sorted(RUNTIMES), help="which agent sent the payload")
    hook.add_argument("--event", help="the hook event, for runtimes whose payload omits it")
    hook.add_argument("payload", nargs="?", help="payload as an argument (Codex notify)")
    hook.set_defaults(run=_cmd_hook)

    spool = sub.add_parser("spool", help="events hooks could not deliver yet")
    spool_sub = spool.add_subparsers(dest="spool_command", required=True)
    flush = spool_sub.add_parser("flush", help="send spooled events to the gateway now")
    flush.add_argument(
        "--timeout", type=float, default=120.0, help="give up after this many seconds"
    )
    flush.set_defaults(run=_cmd_flush)
    status = spool_sub.add_parser("status", help="how many events wait in the spool")
    status.set_defaults(run=_cmd_status)


def _cmd_hook(_: Any, args: argparse.Namespace) -> int:
    return run(args.runtime, event_name=args.event, argv_payload=args.payload)


def _cmd_status(_: Any, __: argparse.Namespace) -> int:
    config = load_config()
    spool = Spool(config.spool_dir)
    print(f"spool: {spool.dir}")
    print(f"  waiting:  {spool.count()} event(s)")
    refused = spool.rejected_count()
    print(f"  rejected: {refused} event(s) (refused by the gateway; see rejected.jsonl)")
    return 0


def _cmd_flush(_: Any, args: argparse.Namespace) -> int:
    config = load_config()
    spool = Spool(config.spool_dir)
    waiting = spool.count()
    if not waiting:
        print(f"spool is empty ({spool.dir})")
        return 0
    per_request = max(config.timeout_s, 10.0)  # no agent is waiting: give the gateway time

    def post(batch: list[dict[str, Any]], until: float) -> PostResult:
        until = min(until, time.monotonic() + per_request)
        return post_events(config.gateway_url, batch, token=config.token, deadline=until)

    deadline = time.monotonic() + args.timeout
    report = spool.flush(post, deadline)
    while report.busy and time.monotonic() < deadline:  # a hook is flushing: wait for it
        time.sleep(0.2)
        report = spool.flush(post, deadline)
    print(
        f"sent {report.sent} event(s) to {config.gateway_url}; "
        f"{report.remaining} still spooled; {report.rejected} refused"
    )
    if report.rejected:
        print(f"  refused events are kept in {os.path.join(spool.dir, 'rejected.jsonl')}")
    if report.remaining:
        print(f"  last error: {report.last_error or 'time limit reached'}")
        return 1
    return 0
