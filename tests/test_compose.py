"""docker-compose.yml (team mode), checked without a Docker engine.

Always: the file is validated against the Compose Specification's JSON schema (vendored in
tests/fixtures/compose-spec.json from compose-spec/compose-spec, schema/compose-spec.json),
both as written and with its ``${...}`` variables resolved, plus the rules of
deploy/README.md: one compose service per services/<name>, built from deploy/Dockerfile with
its build args (each checked as the image it makes), healthchecks on the infrastructure,
``service_healthy`` dependencies, no default value for a secret, a three-node JetStream
cluster. When a ``docker-compose`` or ``docker compose`` executable
is present, ``config -q`` is run as well; nothing here is ever skipped.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from agent_memory_common.core import catalog
from tests.nats_login import nats_login, nats_with

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"
SCHEMA_FILE = ROOT / "tests" / "fixtures" / "compose-spec.json"
SERVICES_DIR = ROOT / "services"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
NATS_CONFIG = ROOT / "deploy" / "nats" / "nats-cluster.conf"
DOCKERIGNORE = ROOT / ".dockerignore"

# What the compose file must at least contain, so that no check below can pass vacuously.
EXPECTED_BUILT_SERVICES = frozenset({"gateway", "recorder", "query"})
EXPECTED_INFRA_SERVICES = frozenset(
    {"nats-1", "nats-2", "nats-3", "postgres", "opensearch", "qdrant"}
)
REQUIRED_SECRETS = frozenset({"POSTGRES_PASSWORD", "NATS_PASSWORD", "AGENT_MEMORY_TOKENS"})
DUMMY_SECRETS = {
    "POSTGRES_PASSWORD": "dummy-password",
    "NATS_PASSWORD": "dummy-nats-password",
    "AGENT_MEMORY_TOKENS": "dummy-token:dummy-tenant",
}
SERVICE_ENV = frozenset(
    {
        "AGENT_MEMORY_NATS_URL",
        "AGENT_MEMORY_NATS_REPLICAS",
        "AGENT_MEMORY_PG_DSN",
        "AGENT_MEMORY_OPENSEARCH_URL",
        "AGENT_MEMORY_QDRANT_URL",
        "AGENT_MEMORY_TOKENS",
    }
)
SECRET_NAME = re.compile(r"PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|CREDENTIAL", re.I)
BASE_IMAGE = "python:3.11-slim"
NATS_MIN_VERSION = (2, 10)
NATS_CLUSTER_SIZE = 3
# the services that embed text (MiniLM): their images need torch
TORCH_SERVICES = frozenset(s.folder for s in catalog.SERVICES if s.embeds)


# --- loading -------------------------------------------------------------------------------


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, but a key written twice in one mapping is an error.

    PyYAML keeps the last value silently where Compose refuses the file. Keys brought in by
    a merge (``<<: *anchor``) may be overridden, as in Compose.
    """


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.Node) -> dict[Any, Any]:
    assert isinstance(node, yaml.MappingNode)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


@cache
def compose_text() -> str:
    return COMPOSE_FILE.read_text(encoding="utf-8")


def load_compose() -> dict[str, Any]:
    """A fresh copy of docker-compose.yml as written (anchors merged, variables not)."""
    document = yaml.load(compose_text(), Loader=_StrictLoader)
    assert isinstance(document, dict), "docker-compose.yml is not a mapping"
    return document


@cache
def schema() -> dict[str, Any]:
    loaded = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def services() -> dict[str, dict[str, Any]]:
    found = load_compose().get("services")
    assert isinstance(found, dict) and found, "docker-compose.yml has no services"
    return found


def built_services() -> dict[str, dict[str, Any]]:
    return {name: spec for name, spec in services().items() if "build" in spec}


def infra_services() -> dict[str, dict[str, Any]]:
    return {name: spec for name, spec in services().items() if "build" not in spec}


def nats_services() -> dict[str, dict[str, Any]]:
    return {name: spec for name, spec in services().items() if re.fullmatch(r"nats-\d+", name)}


def environment(spec: Mapping[str, Any]) -> dict[str, str | None]:
    """A service's ``environment`` as a mapping, whichever of the two forms it uses."""
    raw = spec.get("environment", {})
    if isinstance(raw, list):
        pairs = (item.split("=", 1) if "=" in item else (item, None) for item in raw)
        return {key: value for key, value in pairs}
    assert isinstance(raw, dict)
    return {key: None if value is None else str(value) for key, value in raw.items()}


def command_words(spec: Mapping[str, Any]) -> list[str]:
    command = spec.get("command", [])
    return command.split() if isinstance(command, str) else [str(word) for word in command]


def healthcheck_test(spec: Mapping[str, Any]) -> str:
    """The healthcheck command as one string; empty when there is none or it is disabled."""
    check = spec.get("healthcheck")
    if not isinstance(check, dict) or check.get("disable") in (True, "true"):
        return ""
    test = check.get("test", "")
    words = [test] if isinstance(test, str) else [str(word) for word in test]
    if not words or words[0] == "NONE":
        return ""
    return " ".join(words)


# --- ${VARIABLE} interpolation, as Compose does it -------------------------------------------

_REFERENCE = re.compile(
    r"\$(?:(?P<escaped>\$)|\{(?P<braced>[^}]*)\}|(?P<named>[A-Za-z_][A-Za-z0-9_]*))"
)
_BRACED = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>.*))?", re.S)


class InterpolationError(ValueError):
    """A required variable is missing, or an expression this checker does not understand."""


@dataclass(frozen=True)
class Reference:
    name: str
    op: str | None  # None, "-", ":-", "?", ":?", "+", ":+"
    arg: str
    where: str


def _parse_reference(match: re.Match[str], where: str) -> Reference | None:
    if match["escaped"]:
        return None
    if match["named"]:
        return Reference(match["named"], None, "", where)
    braced = _BRACED.fullmatch(match["braced"])
    if braced is None:
        raise InterpolationError(f"{where}: invalid interpolation {match[0]!r}")
    arg = braced["arg"] or ""
    if "$" in arg:
        raise InterpolationError(f"{where}: nested interpolation {match[0]!r} is not supported")
    return Reference(braced["name"], braced["op"], arg, where)


def interpolate(value: str, env: Mapping[str, str], where: str = "") -> str:
    def substitute(match: re.Match[str]) -> str:
        ref = _parse_reference(match, where)
        if ref is None:
            return "$"
        current = env.get(ref.name)
        if ref.op in (":?", "?") and (current is None or (ref.op == ":?" and not current)):
            raise InterpolationError(f"{where}: {ref.name}: {ref.arg}")
        if ref.op == ":-":
            return current if current else ref.arg
        if ref.op == "-":
            return ref.arg if current is None else current
        if ref.op == ":+":
            return ref.arg if current else ""
        if ref.op == "+":
            return "" if current is None else ref.arg
        return current or ""

    return _REFERENCE.sub(substitute, value)


def _walk(node: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string value of the document, with its path."""
    if isinstance(node, str):
        yield where, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _walk(value, f"{where}.{key}" if where else str(key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{where}[{index}]")


def references(document: Any) -> list[Reference]:
    found: list[Reference] = []
    for where, value in _walk(document, ""):
        for match in _REFERENCE.finditer(value):
            ref = _parse_reference(match, where)
            if ref is not None:
                found.append(ref)
    return found


def resolve(node: Any, env: Mapping[str, str], where: str = "") -> Any:
    if isinstance(node, str):
        return interpolate(node, env, where)
    if isinstance(node, dict):
        return {
            key: resolve(value, env, f"{where}.{key}" if where else str(key))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [resolve(value, env, f"{where}[{index}]") for index, value in enumerate(node)]
    return node


# --- Dockerfiles -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    line: int


def dockerfile_instructions(path: Path) -> list[Instruction]:
    """Instructions with their continuation lines joined; comments and blank lines dropped."""
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not pending:
            start = number
        continued = stripped.endswith("\\")
        pending.append(stripped.removesuffix("\\").strip())
        if not continued:
            keyword, _, args = " ".join(pending).partition(" ")
            instructions.append(Instruction(keyword.upper(), args.strip(), start))
            pending = []
    assert not pending, f"{path}: the last instruction ends with a line continuation"
    return instructions


def final_stage(instructions: list[Instruction]) -> list[Instruction]:
    starts = [index for index, ins in enumerate(instructions) if ins.keyword == "FROM"]
    assert starts, "no FROM"
    return instructions[starts[-1] :]


def exec_form(args: str, what: str) -> list[str]:
    """The JSON array of an exec-form instruction (Docker falls back to the shell form,
    silently, when the array is not valid JSON)."""
    assert args.startswith("["), f"{what} is not in exec form: {args}"
    try:
        words = json.loads(args)
    except json.JSONDecodeError as error:
        raise AssertionError(f"{what} is not a valid JSON array ({error}): {args}") from error
    assert isinstance(words, list) and all(isinstance(w, str) for w in words), what
    return words


def service_dirs() -> set[str]:
    """The services: every member of services/ (each one is run, so each one is built)."""
    return {path.parent.name for path in SERVICES_DIR.glob("*/pyproject.toml")}


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _substitute(text: str, scope: Mapping[str, str]) -> str:
    """Docker's ``${NAME}``/``$NAME`` for the names in scope; other references stay."""

    def value(match: re.Match[str]) -> str:
        name = match[1] or match[2]
        return scope[name] if name in scope else match[0]

    return _VARIABLE.sub(value, text)


def build_args(spec: Mapping[str, Any]) -> dict[str, str]:
    build = spec["build"]
    raw = {} if isinstance(build, str) else build.get("args", {})
    if isinstance(raw, list):
        raw = dict(item.split("=", 1) for item in raw)
    return {str(key): str(value) for key, value in raw.items()}


@dataclass(frozen=True)
class Image:
    """What a build of deploy/Dockerfile with given args makes: the instructions of the final
    stage and of the stages it is built on (base first), with the build args and the ENV in
    scope substituted as Docker does, and the ENV the container starts with."""

    instructions: list[Instruction]
    env: dict[str, str]
    every_stage: list[Instruction]  # the whole file, substituted (the build stage too)


def built_image(spec: Mapping[str, Any]) -> Image:
    given = build_args(spec)
    global_args: dict[str, str] = {}
    stages: dict[str, Image] = {}
    current: Image | None = None
    scope: dict[str, str] = {}
    every_stage: list[Instruction] = []
    for ins in dockerfile_instructions(build_dockerfile(spec)[1]):
        if ins.keyword == "ARG" and current is None:
            name, _, default = ins.args.partition("=")
            global_args[name] = given.get(name, default.strip('"'))
            continue
        if ins.keyword == "FROM":
            words = _substitute(ins.args, global_args).split()
            base = words[0]
            from_ = Instruction("FROM", " ".join(words), ins.line)
            every_stage.append(from_)
            if base in stages:  # built on an earlier stage: its instructions come first
                current = Image(list(stages[base].instructions), dict(stages[base].env), [])
            else:
                current = Image([from_], {}, [])
            scope = dict(current.env)
            if len(words) == 3 and words[1].upper() == "AS":
                stages[words[2]] = current
            continue
        assert current is not None, f"line {ins.line}: {ins.keyword} before FROM"
        args = _substitute(ins.args, scope)
        if ins.keyword == "ARG":
            name, _, default = ins.args.partition("=")
            scope[name] = given.get(name, default.strip('"') or global_args.get(name, ""))
        elif ins.keyword == "ENV":
            for pair in shlex.split(args):
                key, _, val = pair.partition("=")
                scope[key] = current.env[key] = val
        current.instructions.append(Instruction(ins.keyword, args, ins.line))
        every_stage.append(current.instructions[-1])
    assert current is not None, "no FROM"
    return Image(current.instructions, current.env, every_stage)


def service_specs() -> dict[str, dict[str, Any]]:
    """Built compose services by the services/ folder they build (their SERVICE arg)."""
    found: dict[str, dict[str, Any]] = {}
    for name, spec in built_services().items():
        service = build_args(spec).get("SERVICE")
        assert service, f"{name}: no SERVICE build arg"
        assert service not in found, f"services/{service} is built by two compose services"
        found[service] = spec
    return found


def build_dockerfile(spec: Mapping[str, Any]) -> tuple[Path, Path]:
    """The (context, Dockerfile) a compose service is built from, as absolute paths."""
    build = spec["build"]
    if isinstance(build, str):
        context, dockerfile = build, "Dockerfile"
    else:
        context, dockerfile = build.get("context", "."), build.get("dockerfile", "Dockerfile")
    context_path = (ROOT / context).resolve()
    return context_path, (context_path / dockerfile).resolve()


def image_has_healthcheck(spec: Mapping[str, Any]) -> bool:
    return any(
        ins.keyword == "HEALTHCHECK" and not ins.args.upper().startswith("NONE")
        for ins in final_stage(built_image(spec).instructions)
    )


def has_healthcheck(name: str) -> bool:
    spec = services()[name]
    if healthcheck_test(spec):
        return True
    if "build" in spec and not isinstance(spec.get("healthcheck"), dict):
        return image_has_healthcheck(spec)
    return False


# --- .dockerignore (Docker's rules: last matching pattern wins, parents count) --------------


def _dockerignore_patterns() -> list[tuple[bool, re.Pattern[str]]]:
    patterns: list[tuple[bool, re.Pattern[str]]] = []
    for raw in DOCKERIGNORE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = line.removeprefix("!").strip().strip("/")
        regex = ""
        index = 0
        while index < len(pattern):
            if pattern.startswith("**/", index):
                regex += "(?:.*/)?"
                index += 3
            elif pattern.startswith("**", index):
                regex += ".*"
                index += 2
            elif pattern[index] == "*":
                regex += "[^/]*"
                index += 1
            elif pattern[index] == "?":
                regex += "[^/]"
                index += 1
            elif pattern[index] == "[":
                end = pattern.index("]", index)
                regex += pattern[index : end + 1]
                index = end + 1
            else:
                regex += re.escape(pattern[index])
                index += 1
        patterns.append((negated, re.compile(regex)))
    return patterns


def dockerignore_excludes(relative: str) -> bool:
    parts = relative.split("/")
    candidates = ["/".join(parts[: count + 1]) for count in range(len(parts))]
    excluded = False
    for negated, regex in _dockerignore_patterns():
        if any(regex.fullmatch(candidate) for candidate in candidates):
            excluded = not negated
    return excluded


# === the schema ============================================================================


def _schema_errors(document: Any) -> list[str]:
    validator = jsonschema.Draft7Validator(schema())
    return sorted(
        f"{'/'.join(str(part) for part in error.absolute_path) or '<root>'}: {error.message}"
        for error in validator.iter_errors(document)
    )


def test_vendored_schema_is_the_compose_specification() -> None:
    loaded = schema()
    jsonschema.Draft7Validator.check_schema(loaded)
    assert loaded["$id"] == "compose_spec.json"
    assert loaded["title"] == "Compose Specification"
    assert {"services", "volumes", "networks", "secrets", "configs"} <= set(loaded["properties"])
    # The schema must reject what is not Compose, or validating against it proves nothing.
    assert _schema_errors({"services": {"x": {"image": 1}}})
    assert _schema_errors({"services": {"x": {"depends_on": {"y": {"condition": "up"}}}}})
    assert _schema_errors({"sevices": {}})


def test_compose_file_matches_schema() -> None:
    errors = _schema_errors(load_compose())
    assert not errors, "docker-compose.yml does not match the compose spec:\n" + "\n".join(errors)


def _compose_clis() -> list[list[str]]:
    clis: list[list[str]] = []
    if standalone := shutil.which("docker-compose"):
        clis.append([standalone])
    if docker := shutil.which("docker"):
        probe = subprocess.run(
            [docker, "compose", "version"], capture_output=True, text=True, timeout=60, check=False
        )
        if probe.returncode == 0:
            clis.append([docker, "compose"])
    return clis


def test_resolved_compose_file_is_valid() -> None:
    """With the required variables set: the schema always, and ``config -q`` where a CLI is."""
    resolved = resolve(load_compose(), DUMMY_SECRETS)
    errors = _schema_errors(resolved)
    assert not errors, "resolved docker-compose.yml does not match the spec:\n" + "\n".join(errors)

    clis = _compose_clis()
    print(f"compose CLIs found: {[' '.join(cli) for cli in clis] or 'none (schema only)'}")
    base_env = {
        key: value
        for key, value in os.environ.items()
        if key not in REQUIRED_SECRETS and not key.startswith("COMPOSE_")
    }
    for cli in clis:
        command = [*cli, "--file", str(COMPOSE_FILE), "config", "--quiet"]
        ok = subprocess.run(
            command,
            cwd=ROOT,
            env={**base_env, **DUMMY_SECRETS},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert ok.returncode == 0, f"{' '.join(command)} failed:\n{ok.stdout}\n{ok.stderr}"
        missing = subprocess.run(
            command,
            cwd=ROOT,
            env=base_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert missing.returncode != 0, f"{' '.join(cli)} accepted the file without secrets"
        assert any(name in missing.stderr + missing.stdout for name in REQUIRED_SECRETS)


# === secrets ===============================================================================


def test_no_secret_has_a_default_value() -> None:
    document = load_compose()
    refs = references(document)
    names = {ref.name for ref in refs}
    assert names >= REQUIRED_SECRETS, f"secrets not referenced: {REQUIRED_SECRETS - names}"

    for ref in refs:
        if SECRET_NAME.search(ref.name) or ref.name in REQUIRED_SECRETS:
            assert ref.op == ":?", (
                f"{ref.where}: secret {ref.name} must be written ${{{ref.name}:?message}} "
                f"(required, no default), not with {ref.op!r}"
            )
            assert ref.arg.strip(), f"{ref.where}: ${{{ref.name}:?}} needs a message"

    # Without each secret, the file cannot be resolved: Compose would refuse to start.
    for secret in REQUIRED_SECRETS:
        env = {key: value for key, value in DUMMY_SECRETS.items() if key != secret}
        with pytest.raises(InterpolationError, match=secret):
            resolve(document, env)
        with pytest.raises(InterpolationError, match=secret):
            resolve(document, {**env, secret: ""})


def test_no_secret_is_written_in_the_file() -> None:
    required = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:\?[^}]+\}")
    for name, spec in services().items():
        for key, value in environment(spec).items():
            if SECRET_NAME.search(key):
                assert value is not None and required.fullmatch(value), (
                    f"services.{name}.environment.{key} must be a required variable "
                    f"(${{NAME:?message}}), not {value!r}"
                )
    urls_with_password = 0
    for where, value in _walk(load_compose(), ""):
        for userinfo in re.finditer(r"://[^/@\s:]+:(\$\{[^}]*\}|[^@\s]+)@", value):
            urls_with_password += 1
            assert required.fullmatch(userinfo[1]), (
                f"{where}: the password in {value!r} must be a required variable"
            )
    assert urls_with_password, "no DSN with a password found: is AGENT_MEMORY_PG_DSN gone?"


# === services built from this repository ===================================================


def test_every_service_has_a_compose_service() -> None:
    dirs = service_dirs()
    assert dirs >= EXPECTED_BUILT_SERVICES, f"services missing: {EXPECTED_BUILT_SERVICES - dirs}"
    assert not list(SERVICES_DIR.glob("*/Dockerfile")), "one Dockerfile: deploy/Dockerfile"
    built = {build_args(spec).get("SERVICE"): name for name, spec in built_services().items()}
    for directory in sorted(dirs):
        assert directory in built, f"services/{directory} has no compose service"
        assert built[directory] == directory, (
            f"services/{directory} is built by compose service {built[directory]!r}"
        )
    assert set(built) == dirs, f"compose builds unknown services: {set(built) - dirs}"


def test_built_services_use_the_repository_root_as_context() -> None:
    for name, spec in built_services().items():
        context, dockerfile = build_dockerfile(spec)
        assert context == ROOT, f"{name}: build context must be the repository root"
        assert dockerfile.is_file(), f"{name}: {dockerfile} does not exist"
        assert dockerfile == DOCKERFILE, f"{name}: {dockerfile} is not deploy/Dockerfile"


def test_built_services_are_wired_to_the_infrastructure() -> None:
    # every NATS client logs in with the password of the nodes' authorization block
    nats_urls = {
        f"nats://agent-memory:${{NATS_PASSWORD:?set NATS_PASSWORD}}@{node}:4222"
        for node in nats_services()
    }
    for name, spec in built_services().items():
        assert spec.get("restart") == "unless-stopped", f"{name}: restart must be unless-stopped"
        depends_on = spec.get("depends_on")
        assert isinstance(depends_on, dict) and depends_on, f"{name}: no depends_on"
        assert set(depends_on) >= set(nats_services()) | {"postgres"}, f"{name}: depends_on"

        env = environment(spec)
        assert set(env) >= SERVICE_ENV, f"{name}: environment lacks {SERVICE_ENV - set(env)}"
        assert set((env["AGENT_MEMORY_NATS_URL"] or "").split(",")) == nats_urls, name
        assert env["AGENT_MEMORY_NATS_REPLICAS"] == str(len(nats_services())), name
        assert re.fullmatch(
            r"postgresql://agent_memory:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432/agent_memory",
            env["AGENT_MEMORY_PG_DSN"] or "",
        ), f"{name}: AGENT_MEMORY_PG_DSN"
        assert env["AGENT_MEMORY_OPENSEARCH_URL"] == "http://opensearch:9200", name
        assert env["AGENT_MEMORY_QDRANT_URL"] == "http://qdrant:6333", name

        # An HTTP service listens on all interfaces, on the port that compose maps.
        published = spec.get("ports", []) + spec.get("expose", [])
        prefix = f"AGENT_MEMORY_{name.upper().replace('-', '_')}__"
        for port in published:
            target = str(port["target"] if isinstance(port, dict) else port).split(":")[-1]
            assert env.get(f"{prefix}HOST") == "0.0.0.0", f"{name}: {prefix}HOST"
            # the HTTP port, or a second listener of the same service (the gateway's gRPC)
            listens = {env.get(f"{prefix}PORT"), env.get(f"{prefix}GRPC_PORT")}
            assert target.split("/")[0] in listens, f"{name}: {prefix}PORT"


def test_consumers_scale_out() -> None:
    recorder = services()["recorder"]
    assert int(recorder.get("deploy", {}).get("replicas", 1)) >= 2
    assert "ports" not in recorder and "container_name" not in recorder


def test_http_services_listen_where_the_images_say() -> None:
    for name, spec in built_services().items():
        if not spec.get("ports"):
            continue
        expose = [
            ins.args
            for ins in final_stage(built_image(spec).instructions)
            if ins.keyword == "EXPOSE"
        ]
        env = environment(spec)
        port = env.get(f"AGENT_MEMORY_{name.upper().replace('-', '_')}__PORT")
        assert port in " ".join(expose).split(), f"{name}: EXPOSE {expose} vs port {port}"


@pytest.mark.parametrize("directory", sorted(EXPECTED_BUILT_SERVICES | service_dirs()))
def test_service_image(directory: str) -> None:
    assert DOCKERFILE.is_file(), "deploy/Dockerfile is missing"
    compose_spec = service_specs().get(directory)
    assert compose_spec is not None, f"services/{directory} has no compose service"
    built = built_image(compose_spec)
    instructions = built.every_stage
    stage_names = {
        ins.args.split()[2] for ins in instructions if ins.keyword == "FROM" and " AS " in ins.args
    }
    where = f"deploy/Dockerfile with SERVICE={directory}"

    pyproject = tomllib.loads((SERVICES_DIR / directory / "pyproject.toml").read_text("utf-8"))
    package = pyproject["project"]["name"]
    assert package == f"agent-memory-{directory}", f"{where}: unexpected project {package}"
    module = package.replace("-", "_")
    assert (SERVICES_DIR / directory / "src" / module).is_dir(), f"{where}: no src/{module}"

    for ins in instructions:
        if ins.keyword == "FROM" and ins.args.split()[0] not in stage_names:
            image = ins.args.split()[0]
            assert image == BASE_IMAGE, f"{where}:{ins.line}: FROM {image}, not {BASE_IMAGE}"

    runs = [ins.args for ins in instructions if ins.keyword == "RUN"]
    assert any(re.search(r"\bpip install\b.*\buv\b", run) for run in runs), f"{where}: no uv"
    syncs = [run for run in runs if re.search(r"\buv sync\b", run)]
    assert syncs, f"{where}: no uv sync"
    for run in syncs:
        words = run.split()
        assert "--frozen" in words and "--no-dev" in words, f"{where}: {run}"
        assert f"--package {package}" in " ".join(words), f"{where}: {run} is not for {package}"
    assert any("--no-install-workspace" not in run.split() for run in syncs), where

    last = final_stage(built.instructions)  # the final stage and those it is built on
    users = [ins.args for ins in last if ins.keyword == "USER"]
    assert users, f"{where}: the runtime stage runs as root (no USER)"
    assert users[-1].split(":")[0] not in ("root", "0"), f"{where}: USER {users[-1]}"

    commands = [ins for ins in last if ins.keyword in ("CMD", "ENTRYPOINT")]
    assert commands, f"{where}: no CMD"
    words = [w for ins in commands[-1:] for w in exec_form(ins.args, f"{where}:{ins.line}")]
    if words[:2] == ["/bin/sh", "-c"]:  # the shell expands the container's ENV, then execs
        assert len(words) == 3 and words[2].startswith("exec "), f"{where}: {words}"
        words = shlex.split(_substitute(words[2], built.env))[1:]
    assert "$" not in " ".join(words), f"{where}: {words} names an unset variable"
    assert words[-2:] == ["-m", module] and words[0].startswith("python"), f"{where}: {words}"

    exposes = [ins for ins in last if ins.keyword == "EXPOSE"]
    for ins in exposes:
        assert re.fullmatch(r"\d+(/tcp)?( \d+(/tcp)?)*", ins.args), f"{where}: EXPOSE {ins.args}"
    healthchecks = [ins for ins in last if ins.keyword == "HEALTHCHECK"]
    serves_http = bool(exposes or compose_spec.get("ports") or compose_spec.get("expose"))
    if serves_http:
        assert len(healthchecks) == 1, f"{where}: an HTTP service needs one HEALTHCHECK"
        check = healthchecks[0]
        _, _, command = check.args.partition("CMD ")
        probe = exec_form(command.strip(), f"{where}:{check.line}")
        assert "/healthz" in " ".join(probe), f"{where}: the HEALTHCHECK must call /healthz"
        port_vars = re.findall(r"os\.environ\['([A-Z_]+)'\]", " ".join(probe))
        assert all(built.env.get(v) for v in port_vars), f"{where}: the probe's port is unset"
    else:
        assert not healthchecks, f"{where}: a HEALTHCHECK with no HTTP endpoint to probe"

    torch = [run for run in runs if "torch==" in run]
    assert len(torch) <= 1, where
    wants_torch = build_args(compose_spec).get("TORCH") == "true"
    assert wants_torch == (directory in TORCH_SERVICES), f"{where}: TORCH arg"
    if wants_torch:
        assert torch and "download.pytorch.org/whl/cpu" in torch[0], f"{where}: CPU torch"


# === infrastructure ========================================================================


def test_infra_services_have_healthchecks() -> None:
    infra = infra_services()
    assert set(infra) >= EXPECTED_INFRA_SERVICES, f"missing: {EXPECTED_INFRA_SERVICES - set(infra)}"
    for name, spec in infra.items():
        assert healthcheck_test(spec), f"{name}: no healthcheck"
        assert spec.get("restart") == "unless-stopped", f"{name}: restart must be unless-stopped"
        check = spec["healthcheck"]
        test = check["test"]
        assert isinstance(test, str) or test[0] in ("CMD", "CMD-SHELL"), f"{name}: {test}"


def test_every_dependency_waits_until_healthy() -> None:
    everything = services()
    waited = 0
    for name, spec in everything.items():
        if "depends_on" not in spec:
            continue
        depends_on = spec["depends_on"]
        assert isinstance(depends_on, dict), f"{name}: depends_on must name a condition"
        for dependency, options in depends_on.items():
            assert dependency in everything, f"{name} depends on unknown service {dependency}"
            assert options.get("condition") == "service_healthy", (
                f"{name}: depends_on.{dependency} must be condition: service_healthy"
            )
            assert has_healthcheck(dependency), f"{name} waits for {dependency}: no healthcheck"
            waited += 1
    assert waited >= len(EXPECTED_BUILT_SERVICES), "the agent-memory services wait for nothing"


def test_postgres() -> None:
    postgres = services()["postgres"]
    assert postgres["image"] == "pgvector/pgvector:pg16"
    assert "pg_isready" in healthcheck_test(postgres)
    env = environment(postgres)
    assert env["POSTGRES_USER"] == "agent_memory" and env["POSTGRES_DB"] == "agent_memory"


def test_opensearch_and_qdrant() -> None:
    opensearch = services()["opensearch"]
    assert opensearch["image"].startswith("opensearchproject/opensearch:")
    env = environment(opensearch)
    assert env.get("discovery.type") == "single-node"
    assert env.get("plugins.security.disabled") == "true"
    assert "9200" in healthcheck_test(opensearch)
    assert "ports" not in opensearch, "OpenSearch runs without security: never publish it"

    qdrant = services()["qdrant"]
    assert qdrant["image"].startswith("qdrant/qdrant:")
    assert "6333" in healthcheck_test(qdrant)


def test_nats_jetstream_cluster() -> None:
    nodes = nats_services()
    assert len(nodes) == NATS_CLUSTER_SIZE, f"NATS nodes: {sorted(nodes)}"
    config = NATS_CONFIG.read_text(encoding="utf-8")
    routes = set(re.findall(r"nats-route://([A-Za-z0-9.-]+):6222", config))
    assert routes == set(nodes), f"cluster routes {routes} != NATS services {set(nodes)}"
    assert re.search(r"(?m)^\s*http_port:\s*8222\s*$", config), "monitoring port 8222"
    assert re.search(r"(?m)^\s*port:\s*4222\s*$", config), "client port 4222"
    store = re.search(r"(?m)^\s*store_dir:\s*(\S+)\s*$", config)
    assert store, "jetstream store_dir"

    declared = set(load_compose().get("volumes") or {})
    data_volumes: set[str] = set()
    for name, spec in nodes.items():
        image, _, tag = spec["image"].partition(":")
        assert image == "nats", f"{name}: image {spec['image']}"
        version = tuple(int(part) for part in re.findall(r"\d+", tag)[:2])
        assert version >= NATS_MIN_VERSION, f"{name}: nats {tag} < 2.10"
        words = command_words(spec)
        assert "--jetstream" in words or "-js" in words, f"{name}: JetStream not enabled"
        name_flag = next(w for w in ("--name", "-n", "--server_name") if w in words)
        assert words[words.index(name_flag) + 1] == name, f"{name}: server name"
        assert "/healthz?js-enabled-only=true" in healthcheck_test(spec), f"{name}: healthcheck"
        assert ":8222/" in healthcheck_test(spec), f"{name}: healthcheck port"

        mounts = [str(volume).split(":") for volume in spec.get("volumes", [])]
        config_mounts = [m for m in mounts if (ROOT / m[0]).resolve() == NATS_CONFIG.resolve()]
        assert config_mounts, f"{name}: deploy/nats/nats-cluster.conf not mounted"
        config_target = config_mounts[0][1]
        assert f"--config {config_target}" in " ".join(words) or (
            f"-c {config_target}" in " ".join(words)
        ), f"{name}: the mounted config is not the one used"
        named = [m for m in mounts if not m[0].startswith((".", "/"))]
        assert len(named) == 1, f"{name}: one named data volume, got {named}"
        volume, target = named[0][0], named[0][1]
        assert volume in declared, f"{name}: volume {volume} not declared"
        assert store[1].startswith(target.rstrip("/") + "/"), f"{name}: store not in {target}"
        data_volumes.add(volume)
    assert len(data_volumes) == NATS_CLUSTER_SIZE, "each NATS node needs its own volume"
    for name, spec in nodes.items():
        assert environment(spec).get("NATS_PASSWORD") == "${NATS_PASSWORD:?set NATS_PASSWORD}", (
            f"{name}: the nodes' password comes from the required NATS_PASSWORD"
        )


def test_nats_nodes_let_in_only_clients_with_the_password(tmp_path: Path) -> None:
    """Issue 55, point 2: a real nats-server with the authorization block of
    deploy/nats/nats-cluster.conf refuses a raw client without the password (which would
    otherwise publish to mem.events.<tenant>.<project> as any tenant, past the gateway), and
    lets in the services' login, as AGENT_MEMORY_NATS_URL carries it."""
    config = NATS_CONFIG.read_text(encoding="utf-8")
    password = DUMMY_SECRETS["NATS_PASSWORD"]
    url = environment(built_services()["gateway"])["AGENT_MEMORY_NATS_URL"] or ""
    first = resolve(url, DUMMY_SECRETS).split(",")[0]
    user, _, secret = first.removeprefix("nats://").partition("@")[0].partition(":")
    assert secret == password
    with nats_with(config, {"NATS_PASSWORD": password}, tmp_path) as port:
        assert nats_login(port).startswith("refused: -ERR 'Authorization Violation'")
        assert nats_login(port, user, "not-the-password").startswith("refused")
        assert nats_login(port, user, secret) == "connected"


def test_volumes_and_bind_mounts_exist() -> None:
    declared = set(load_compose().get("volumes") or {})
    for name, spec in services().items():
        for volume in spec.get("volumes", []):
            source = str(volume["source"] if isinstance(volume, dict) else volume).split(":")[0]
            if source.startswith((".", "/")):
                assert (ROOT / source).exists(), f"{name}: bind mount {source} does not exist"
            else:
                assert source in declared, f"{name}: volume {source} is not declared"


# === .dockerignore =========================================================================


def test_dockerignore_sends_the_workspace_and_nothing_else() -> None:
    needed = ["pyproject.toml", "uv.lock"]
    for member in [*ROOT.glob("libs/*/*/pyproject.toml"), *ROOT.glob("services/*/pyproject.toml")]:
        needed.append(member.relative_to(ROOT).as_posix())
        needed.extend(
            path.relative_to(ROOT).as_posix()
            for path in (member.parent / "src").rglob("*")
            if path.is_file() and "__pycache__" not in path.parts
        )
    assert len(needed) > 2 + len(EXPECTED_BUILT_SERVICES)
    for relative in needed:
        assert not dockerignore_excludes(relative), f".dockerignore excludes {relative}"
    for relative in (
        ".env",
        ".git/HEAD",
        ".venv/bin/python",
        ".agent-memory/nats/x",
        "tests/test_compose.py",
        "docker-compose.yml",
        "libs/server/agent_memory_common/src/agent_memory_common/__pycache__/settings.cpython-311.pyc",
        "services/gateway/tests/test_x.py",
        "services/gateway/README.md",
        "deploy/Dockerfile",
    ):
        assert dockerignore_excludes(relative), f".dockerignore lets {relative} through"
