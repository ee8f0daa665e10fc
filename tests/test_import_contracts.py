"""The import contracts of ``pyproject.toml`` bite: ``lint-imports`` run for real on a copy.

Each case lays out the root packages as stand-ins (empty packages with the real names) in a
temporary folder, next to a copy of the tree's ``pyproject.toml``, adds one module that breaks a
rule, and runs ``lint-imports`` there: the stand-ins come first on ``sys.path`` (lint-imports
puts its working directory there), so the real contracts judge the fake tree. A clean stand-in
tree passes, which shows that each failure comes from its violation alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def _run(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _stand_in_tree(tmp_path: Path, modules: dict[str, str]) -> Path:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for package in CONFIG["root_packages"]:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    # what the real hooks do: standard library only, and their own modules
    (tmp_path / "agent_memory_hooks" / "spool.py").write_text("import json\nimport os\n")
    (tmp_path / "agent_memory_hooks" / "post.py").write_text(
        "import urllib.request\n\nfrom agent_memory_hooks import spool\n"
    )
    # the layers of every layered package, as empty subpackages (a layers contract needs them)
    for contract in CONFIG["contracts"]:
        for container in contract.get("containers", []):
            for layer in contract["layers"]:
                for name in layer.split("|"):
                    folder = tmp_path / container / name.strip()
                    folder.mkdir(exist_ok=True)
                    (folder / "__init__.py").write_text("")
    for dotted, source in modules.items():
        path = tmp_path.joinpath(*dotted.split(".")).with_suffix(".py")
        path.write_text(source)
    return tmp_path


def test_the_tree_keeps_every_contract() -> None:
    result = _run(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(CONFIG['contracts'])} kept, 0 broken." in result.stdout


def test_a_clean_stand_in_tree_passes(tmp_path: Path) -> None:
    result = _run(_stand_in_tree(tmp_path, {}))
    assert result.returncode == 0, result.stdout + result.stderr


VIOLATIONS = {
    "hook imports httpx": (
        {"agent_memory_hooks.post": "import httpx\n"},
        "The hooks import only the standard library",
        "agent_memory_hooks.post imports httpx, which is not in the standard library",
    ),
    "hook imports another agent_memory package": (
        {"agent_memory_hooks.claude_code": "from agent_memory_client import types\n"},
        "The hooks import only the standard library",
        "agent_memory_hooks.claude_code imports agent_memory_client",
    ),
    "service imports another service": (
        {"agent_memory_segmenter.handler": "from agent_memory_summarizer import model\n"},
        "Services never import each other",
        "agent_memory_segmenter is not allowed to import agent_memory_summarizer",
    ),
    "library imports a service": (
        {"agent_memory_retrieval.indexing.sources": "import agent_memory_query\n"},
        "Libraries never import services",
        "agent_memory_retrieval is not allowed to import agent_memory_query",
    ),
    "agent-side package imports server plumbing": (
        {"agent_memory_mcp.server": "from agent_memory_common import subjects\n"},
        "Agent-side packages (libs/agents) never import server plumbing",
        "agent_memory_mcp is not allowed to import agent_memory_common",
    ),
    "server plumbing imports an agent-side package": (
        {"agent_memory_common.web.http": "import agent_memory_client\n"},
        "Server plumbing (libs/server) never imports agent-side packages",
        "agent_memory_common is not allowed to import agent_memory_client",
    ),
    "the public API's shapes import server plumbing": (
        {"agent_memory_api.search": "from agent_memory_common.contracts import event\n"},
        "The public API's shapes (agent_memory_api) import no other package of ours",
        "agent_memory_api is not allowed to import agent_memory_common",
    ),
    "redaction imports a third-party package": (
        {"agent_memory_common.redaction.values": "import httpx\n"},
        "Redaction imports only the standard library",
        "agent_memory_common.redaction.values imports httpx, which is not in the standard library",
    ),
    "the retention lifecycle imports the indexing feed": (
        {"agent_memory_retrieval.lifecycle.cleanup": "import agent_memory_retrieval.indexing\n"},
        "agent_memory_retrieval is layered",
        "agent_memory_retrieval.lifecycle.cleanup -> agent_memory_retrieval.indexing",
    ),
    "a lower layer of common imports a higher one": (
        {"agent_memory_common.contracts.event": "from agent_memory_common.bus import consumer\n"},
        "agent_memory_common is layered",
        "agent_memory_common.contracts.event -> agent_memory_common.bus",
    ),
    "the search engine's brainstem imports a Postgres store": (
        {"agent_memory_search.brainstem.engine": "from agent_memory_search import store\n"},
        "The search engine is layered",
        "agent_memory_search.brainstem.engine -> agent_memory_search.store",
    ),
    "a service imports the command": (
        {"agent_memory_gateway.app": "from agent_memory_cli import supervisor\n"},
        "Nothing imports the agent-memory command",
        "agent_memory_gateway is not allowed to import agent_memory_cli",
    ),
}


def test_lint_imports_fails_on_each_violation(tmp_path: Path) -> None:
    """One stand-in tree breaking every contract once (one run: lint-imports takes seconds)."""
    modules = {m: src for mods, _, _ in VIOLATIONS.values() for m, src in mods.items()}
    assert len(modules) == len(VIOLATIONS)  # one module per violation, none overwritten
    result = _run(_stand_in_tree(tmp_path, modules))
    out = " ".join((result.stdout + result.stderr).split())  # undo the terminal's wrapping
    assert result.returncode == 1, out
    assert f"Contracts: 0 kept, {len(CONFIG['contracts'])} broken." in out
    for case, (_, contract, message) in VIOLATIONS.items():
        assert f"{contract}" in out, case
        assert f"{message}" in out, case
