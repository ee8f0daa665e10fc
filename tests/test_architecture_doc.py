"""The folder map of docs/architecture.md is the tree: checked, so that it cannot drift again.

The map is the first thing a new reader trusts. It had drifted (a package in no contract and in
no map, ``deploy/`` described without its Kubernetes and Grafana folders), so this reads the
map's code block and compares it with what is on disk, both ways: every workspace package,
service, layer of ``agent_memory_common`` and folder of ``deploy/`` is named, and every name
exists.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
COMMON = ROOT / "libs/server/agent_memory_common/src/agent_memory_common"


def folder_map() -> list[str]:
    """The lines of the code block under "## The folders"."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## The folders", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block, "no code block under '## The folders'"
    return block.group(1).splitlines()


def named_under(heading: str) -> list[str]:
    """The names the map lists under one top-level entry (``libs/server/``, ``deploy/``...),
    with their indentation: the first word of each indented line up to the next entry."""
    lines = folder_map()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    names: list[str] = []
    for line in lines[start + 1 :]:
        if line and not line.startswith(" "):
            break
        stripped = line.strip()
        if stripped and len(line) - len(line.lstrip()) < 20:  # not a description's second line
            names.append(line[: len(line) - len(line.lstrip())] + stripped.split()[0])
    return names


def packages_on_disk(group: str) -> set[str]:
    return {p.parent.name for p in (ROOT / group).glob("*/pyproject.toml")}


def test_every_library_package_is_named_and_exists() -> None:
    for group in ("libs/server", "libs/agents", "libs/ops"):
        named = {
            n.strip()
            for n in named_under(group + "/")
            if n.startswith("  ") and not n.startswith("    ")
        }
        assert named == packages_on_disk(group), group


def test_every_service_is_named_and_exists() -> None:
    lines = folder_map()
    at = next(i for i, line in enumerate(lines) if line.startswith("services/"))
    named = set(lines[at + 1].split())
    assert named == packages_on_disk("services")


def test_the_layers_of_common_are_named_and_exist() -> None:
    names = named_under("libs/server/")
    at = names.index("  agent_memory_common")
    layers = []
    for name in names[at + 1 :]:
        if not name.startswith("    "):
            break
        layers.append(name.strip())
    on_disk = {p.name for p in COMMON.iterdir() if (p / "__init__.py").exists()}
    on_disk |= {p.stem for p in COMMON.glob("*.py") if p.stem != "__init__"}
    assert set(layers) == on_disk
    # and the map lists them in the order of the layers contract, top first
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = (c for c in config["contracts"] if c.get("containers") == ["agent_memory_common"])
    contract_order = [name.strip() for layer in contract["layers"] for name in layer.split("|")]
    assert layers == contract_order


def test_every_folder_of_deploy_is_named_and_exists() -> None:
    named = {n.strip() for n in named_under("deploy/")}
    on_disk = {p.name for p in (ROOT / "deploy").iterdir() if p.is_dir()}
    assert named == on_disk


def test_every_top_level_entry_exists() -> None:
    for line in folder_map():
        if line and not line.startswith(" "):
            entry = line.split()[0].rstrip("/")
            if "<" not in entry:
                assert (ROOT / entry).is_dir(), entry
