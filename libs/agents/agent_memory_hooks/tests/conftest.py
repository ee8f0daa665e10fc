"""Shared pieces of the hook and installer tests: fixtures on disk, running the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import plain_http

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
AGENT_MEMORY = str(Path(sys.executable).parent / "agent-memory")


def load_fixture(runtime: str, name: str) -> dict[str, Any]:
    data = json.loads((FIXTURES / runtime / f"{name}.json").read_text())
    assert isinstance(data, dict)
    return data


@dataclass
class HookRun:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run_hook(
    runtime: str,
    payload: dict[str, Any] | str,
    env: dict[str, str],
    *extra: str,
    argv_payload: bool = False,
    cwd: Path | None = None,
) -> HookRun:
    """Run the installed console script exactly as a runtime would."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    argv = [AGENT_MEMORY, "hook", runtime, *extra]
    if argv_payload:
        argv.append(text)
    started = time.perf_counter()
    proc = subprocess.run(
        argv,
        input=None if argv_payload else text,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=30,
        stdin=subprocess.DEVNULL if argv_payload else None,
    )
    return HookRun(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - started)


def session_events(query_url: str, session_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    params: dict[str, str | int] = {"session_id": session_id, "limit": 1000}
    while True:
        response = plain_http.get(f"{query_url}/v1/events", params=params, timeout=5)
        response.raise_for_status()
        page = response.json()
        events.extend(page["events"])
        if not page.get("next_cursor"):
            return events
        params["cursor"] = page["next_cursor"]


def wait_for_events(
    query_url: str, session_id: str, count: int, timeout: float = 60.0
) -> list[dict[str, Any]]:
    """Poll until the session has ``count`` events; fail on more (a double) or on timeout."""
    deadline = time.monotonic() + timeout
    events: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        events = session_events(query_url, session_id)
        assert len(events) <= count, f"more events than expected: {[e['text'] for e in events]}"
        if len(events) == count:
            return events
        time.sleep(0.1)
    raise AssertionError(f"{count} events not stored within {timeout}s; got {len(events)}")


@pytest.fixture
def hook_env(tmp_path: Path) -> Callable[..., dict[str, str]]:
    """Environment for a hook process: a private AGENT_MEMORY_HOME, the given gateway.

    The hook's HTTP timeout is raised from 50 ms to 3 s: on a loaded test machine a post may
    miss 50 ms, and its event then waits in the spool for the next hook, which a test's last
    hook does not have. Latency with the defaults is what ``test_hook_speed`` measures.
    """

    def make(base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
        env = dict(base if base is not None else os.environ)
        env["AGENT_MEMORY_HOME"] = str(tmp_path / "am-home")
        env["AGENT_MEMORY_PROJECT_ID"] = env.get("AGENT_MEMORY_PROJECT_ID", "shop-api")
        env["AGENT_MEMORY_HOOK_TIMEOUT_MS"] = "3000"
        env["AGENT_MEMORY_HOOK_BUDGET_MS"] = "4000"
        # capture is tested here, recall (what a hook prints for the model) in
        # tests/test_recall_e2e.py: a brief of the events an earlier test stored would be
        # printed at the next SessionStart
        env["AGENT_MEMORY_RECALL"] = "off"
        env.update(extra)
        return env

    return make
