"""One declaration of the services (``agent_memory_common.core.catalog``), and everything that
cannot read it checked against it: a new service is its folder plus one ``ServiceSpec``, and
each assertion here names the file that still lacks it (docs/architecture.md, "Where to add").
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_memory_common.bus.erasure import DOCUMENTED_PARTICIPANTS
from agent_memory_common.bus.streams import PIPELINE_CONSUMERS
from agent_memory_common.core.catalog import BY_NAME, CONSUMERS, SERVICES, ServiceSpec

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
BY_FOLDER = {s.folder: s for s in SERVICES}


def test_names_and_folders_are_unique() -> None:
    assert len(BY_NAME) == len(BY_FOLDER) == len(SERVICES)
    assert set(CONSUMERS) == {s.name for s in SERVICES if s.http is None}


def test_every_folder_of_services_is_declared_and_runnable() -> None:
    folders = {p.parent.name for p in (ROOT / "services").glob("*/pyproject.toml")}
    assert folders == set(BY_FOLDER), "services/<folder> without a ServiceSpec, or the reverse"
    for s in SERVICES:
        main = ROOT / "services" / s.folder / "src" / s.module / "__main__.py"
        assert main.is_file(), f"{s.name}: python -m {s.module} needs {main}"
        project = tomllib.loads((ROOT / "services" / s.folder / "pyproject.toml").read_text())
        assert project["project"]["name"] == f"agent-memory-{s.folder}"


def test_the_pipelines_durables_belong_to_declared_services() -> None:
    owned = [d for s in SERVICES for d in s.durables]
    assert len(owned) == len(set(owned)), "a durable owned by two services"
    assert {spec.durable for spec in PIPELINE_CONSUMERS} == set(owned), (
        "bus.streams.PIPELINE_CONSUMERS and the catalog's durables differ"
    )
    assert set(DOCUMENTED_PARTICIPANTS) == {s.name for s in SERVICES if s.erases}, (
        "bus.erasure.DOCUMENTED_PARTICIPANTS and the catalog's `erases` differ"
    )


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services: dict[str, Any] = loaded["services"]
    return services


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.name)
def test_compose_builds_each_service(service: ServiceSpec) -> None:
    spec = _compose().get(service.folder)
    assert spec is not None, f"docker-compose.yml: no service `{service.folder}`"
    build = spec.get("build", {})
    args = build.get("args", {}) if isinstance(build, dict) else {}
    assert args.get("SERVICE") == service.folder, f"docker-compose.yml: {service.folder}"


def test_compose_builds_nothing_undeclared() -> None:
    built = {name for name, spec in _compose().items() if "build" in spec}
    assert built == set(BY_FOLDER)


def test_kubernetes_deploys_each_service() -> None:
    base = ROOT / "deploy" / "k8s" / "base"
    resources = yaml.safe_load((base / "kustomization.yaml").read_text())["resources"]
    for s in SERVICES:
        assert (base / f"{s.name}.yaml").is_file(), f"deploy/k8s/base/{s.name}.yaml is missing"
        assert f"{s.name}.yaml" in resources, f"deploy/k8s/base/kustomization.yaml: {s.name}"


def test_the_root_pyproject_knows_each_service() -> None:
    deps = set(PYPROJECT["project"]["dependencies"])
    sources = PYPROJECT["tool"]["uv"]["sources"]
    mypy_files = set(PYPROJECT["tool"]["mypy"]["files"])
    linter = PYPROJECT["tool"]["importlinter"]
    contracts = {c["name"]: c for c in linter["contracts"]}
    independent = next(c for n, c in contracts.items() if n.startswith("Services never import"))
    no_services = next(c for n, c in contracts.items() if n.startswith("Libraries never import"))
    no_cli = next(c for n, c in contracts.items() if n.startswith("Nothing imports the"))
    for s in SERVICES:
        dist = f"agent-memory-{s.folder}"
        where = f"pyproject.toml, for {s.name}"
        assert dist in deps, f"{where}: [project] dependencies"
        assert sources.get(dist) == {"workspace": True}, f"{where}: [tool.uv.sources]"
        assert f"services/{s.folder}/src" in mypy_files, f"{where}: [tool.mypy] files"
        assert s.module in linter["root_packages"], f"{where}: importlinter root_packages"
        assert s.module in independent["modules"], f"{where}: {independent['name']}"
        assert s.module in no_services["forbidden_modules"], f"{where}: {no_services['name']}"
        assert s.module in no_cli["source_modules"], f"{where}: {no_cli['name']}"
