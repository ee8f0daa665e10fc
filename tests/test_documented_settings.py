"""Every ``AGENT_MEMORY_<SERVICE>__<FIELD>`` setting the docs name exists, and set alone it is
accepted by ``agent-memory up`` and by every process that reads it.

Issue #58: ``AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S=86400 make run`` stopped at once with
``AGENT_MEMORY_PRUNER__PORT: Field required``: the supervisor read ``AGENT_MEMORY_PRUNER__*`` as
a model whose port had no default, and so did it for the gateway, the query service and the
dashboard. The names are taken from the docs (README.md, docs/, each service's README), so a
setting documented tomorrow is checked too; ``tests/test_supervisor.py`` starts the real stack
with a few of them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import annotated_types
import pytest
from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from agent_memory_cli.settings import Settings as CliSettings
from tests.settings_catalog import (
    all_variables,
    documented_nested,
    settings_classes,
    variables,
)


def sample(info: FieldInfo) -> str:
    """A value the field accepts, as its environment variable would spell it: its default,
    or for a field without one (``None``) its lower bound, else 1."""
    value = info.get_default(call_default_factory=True)
    if value is None or value is PydanticUndefined:
        bounds = [str(m.ge) for m in info.metadata if isinstance(m, annotated_types.Ge)]
        return bounds[0] if bounds else "1"
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in list(os.environ):
        if name.startswith("AGENT_MEMORY_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AGENT_MEMORY_HOME", str(tmp_path))
    return monkeypatch


def test_the_docs_name_only_settings_that_exist() -> None:
    documented, unknown = documented_nested()
    assert not unknown, f"the docs name settings no process reads: {sorted(unknown)}"
    # the issue's own, and one of each kind of short form (``__X``, ``..._X``)
    assert {
        "AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S",
        "AGENT_MEMORY_PRUNER__INTERVAL_S",
        "AGENT_MEMORY_PRUNER__EPISODE_MIN_AGE_DAYS",
        "AGENT_MEMORY_EMBEDDED__PG_PORT",
        "AGENT_MEMORY_QUERY__SEARCH__MOMENT_LAG_DAYS",
    } <= documented


def test_each_documented_setting_alone_is_accepted_everywhere(
    clean_env: pytest.MonkeyPatch,
) -> None:
    """Every nested setting any process reads, the documented ones among them (the first
    test; README.md's table names the rest: tests/test_readme_settings.py)."""
    documented, _ = documented_nested()
    known = all_variables()
    nested = {name for name in known if "__" in name}
    assert documented <= nested
    readers = [(cls, variables(cls)) for cls in settings_classes()]
    refused = []
    for name in sorted(nested):
        value = sample(known[name])
        clean_env.setenv(name, value)
        for cls, names in readers:
            if name not in names and cls is not CliSettings:  # agent-memory up reads every one
                continue
            try:
                cls()
            except ValueError as exc:
                first = str(exc).splitlines()[1:3]
                refused.append(f"{name}={value}: {cls.__module__}.{cls.__name__}: {first}")
        clean_env.delenv(name)
    assert not refused, "\n".join(refused)


def test_agent_memory_up_addresses_default_to_the_services_own(
    clean_env: pytest.MonkeyPatch,
) -> None:
    """The supervisor cannot import the services (tests/test_import_contracts.py), so it keeps
    their addresses' defaults itself: these must be the services' own, or ``make run`` waits
    for and prints a port nobody listens on."""
    from agent_memory_dashboard.settings import Settings as Dashboard
    from agent_memory_gateway.settings import Settings as Gateway
    from agent_memory_pruner.settings import Settings as Pruner
    from agent_memory_query.settings import Settings as Query

    cli = CliSettings()
    services = {
        "gateway": Gateway().gateway,
        "query": Query().query,
        "pruner": Pruner().pruner,
        "dashboard": Dashboard().dashboard,
    }
    for name, options in services.items():
        address = getattr(cli, name)
        for field in type(address).model_fields:
            assert getattr(address, field) == getattr(options, field), (name, field)

    # and one set alone moves only itself
    clean_env.setenv("AGENT_MEMORY_PRUNER__PORT", "18704")
    clean_env.setenv("AGENT_MEMORY_GATEWAY__GRPC_PORT", "0")
    cli = CliSettings()
    assert cli.pruner_url == "http://127.0.0.1:18704"
    assert cli.gateway_url == "http://127.0.0.1:8700" and cli.gateway_grpc is None
