"""What ``agent-memory`` loads before it answers (issue 56: ``--help`` took 3.8 s).

Every command builds every command's parser, so a heavy import at the top of any command module
(psycopg, FastAPI, the MCP SDK, rich, the index adapters and their models) is paid by ``--help``
and by every other command. These tests run the console script's ``main`` in a fresh interpreter
and list the modules it loaded: ``--help`` may load none of the heavy ones, and ``status`` and
``search`` only the client (and the settings). Not a timing: ``make bench-cli`` measures those.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from agent_memory_embedded.servers import free_port

# printed last, after whatever the command printed
PROBE = """
import json, sys
from agent_memory_cli.entry import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("\\n" + json.dumps(sorted(k for k, v in sys.modules.items() if v is not None)))
"""

NEVER_FOR_HELP = (
    "torch",
    "sentence_transformers",
    "onnxruntime",
    "numpy",
    "fastapi",
    "starlette",
    "psycopg",
    "psycopg_pool",
    "mcp",
    "rich",
    "httpx",
    "httpcore",
    "pydantic",
    "pydantic_settings",
    "agent_memory_api",
    "agent_memory_client",
    "agent_memory_mcp",
    "agent_memory_retrieval",
    "agent_memory_common.auth.access",
)
NEVER_FOR_CLIENT_COMMANDS = (
    "torch",
    "sentence_transformers",
    "onnxruntime",
    "numpy",
    "fastapi",
    "psycopg",
    "mcp",
    "rich",
    "agent_memory_mcp",
    "agent_memory_retrieval",
    "trio",  # refused by entry.py: this program runs on asyncio
    "httpx._main",  # refused by entry.py: httpx's own command line
    "click",
)


def loaded(*argv: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules the console script has loaded once ``agent-memory ARGV`` is done."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    last = proc.stdout.strip().splitlines()[-1]
    return set(json.loads(last))


def heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` (a package counts with its submodules) were loaded."""
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("search", "--help"),
        ("import", "--help"),
        ("admin", "keys", "create", "--help"),
        ("admin", "cleanup", "--help"),
        ("projects", "--help"),
        ("sessions", "--help"),
    ],
)
def test_help_loads_no_heavy_module(argv: tuple[str, ...]) -> None:
    modules = loaded(*argv)
    assert "agent_memory_cli.search" in modules, "every command module registers its parser"
    assert heavy(modules, NEVER_FOR_HELP) == []


@pytest.mark.parametrize("argv", [("status",), ("search", "what did we decide")])
def test_status_and_search_load_the_client_and_nothing_heavier(argv: tuple[str, ...]) -> None:
    closed = str(free_port())  # nothing listens: the command fails at once, after its imports
    modules = loaded(*argv, env={"AGENT_MEMORY_QUERY__PORT": closed})
    assert {"agent_memory_client", "httpx", "pydantic_settings"} <= modules  # it did run
    assert heavy(modules, NEVER_FOR_CLIENT_COMMANDS) == []


def test_the_probe_sees_a_heavy_import() -> None:
    """The check above would catch one: the commands that need psycopg load it."""
    modules = loaded(
        "migrate", env={"AGENT_MEMORY_PG_DSN": f"postgresql://127.0.0.1:{free_port()}/x"}
    )
    assert heavy(modules, NEVER_FOR_HELP) != []
    assert "psycopg" in modules
