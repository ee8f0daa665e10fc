"""The Kubernetes manifests render, are valid Kubernetes, and deploy every service properly.

``kubectl kustomize`` renders ``deploy/k8s/overlays/example`` (the Makefile's ``k8s-tools``
provides kubectl: PATH's, or Debian's unpacked into ``.tools/``); every document is validated,
strictly (unknown fields are errors), against the Kubernetes OpenAPI schemas bundled by
``kubernetes-validate``: offline, no cluster. Then what an operator relies on is checked:
every service that ``agent-memory up`` runs has a Deployment with startup, liveness and
readiness probes on a declared port, resource requests, and two replicas behind a
PodDisruptionBudget; NATS is a three-node JetStream StatefulSet with persistent volumes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from agent_memory_common.core.catalog import SERVICES
from tests.nats_login import nats_login, nats_with

ROOT = Path(__file__).resolve().parent.parent
OVERLAY = ROOT / "deploy/k8s/overlays/example"
K8S_VERSION = "1.30"
# Services that run once by design (no PodDisruptionBudget: it would block every drain).
SINGLETONS = {"pruner": "its hourly run is not shared out; a second replica would repeat it"}


def kubectl() -> str:
    found = shutil.which("kubectl") or str(ROOT / ".tools/kubectl")
    if not os.access(found, os.X_OK):
        pytest.fail("kubectl not found: run `make k8s-tools` (make test does)")
    return found


@pytest.fixture(scope="module")
def rendered() -> list[dict[str, Any]]:
    out = subprocess.run(
        [kubectl(), "kustomize", str(OVERLAY)], capture_output=True, text=True, check=True
    ).stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert docs, "kustomize rendered nothing"
    return docs


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def test_every_document_is_valid_kubernetes(rendered: list[dict[str, Any]]) -> None:
    errors = []
    for doc in rendered:
        try:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{doc['kind']}/{doc['metadata']['name']}: {exc.message}")
    assert not errors, "\n".join(errors)


def test_the_overlay_sets_namespace_and_images(rendered: list[dict[str, Any]]) -> None:
    assert {d["metadata"].get("namespace") for d in rendered} == {"agent-memory"}
    for name, dep in by_kind(rendered, "Deployment").items():
        image = dep["spec"]["template"]["spec"]["containers"][0]["image"]
        assert image.startswith("registry.example.com/agent-memory/"), (name, image)


@pytest.mark.parametrize("service", [s.name for s in SERVICES])
def test_every_service_is_deployed_probed_and_sized(
    rendered: list[dict[str, Any]], service: str
) -> None:
    deployments = by_kind(rendered, "Deployment")
    assert service in deployments, f"deploy/k8s/base has no Deployment for {service}"
    spec = deployments[service]["spec"]
    if service in SINGLETONS:
        assert spec["replicas"] == 1, SINGLETONS[service]
    else:
        assert spec["replicas"] >= 2, "one replica cannot survive a node drain"
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    ports = {p["name"] for p in container["ports"]}
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert probe in container, f"{service}: no {probe}"
        assert container[probe]["httpGet"]["port"] in ports
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    requests = container["resources"]["requests"]
    assert requests.get("cpu") and requests.get("memory"), f"{service}: no resource requests"
    assert "memory" in container["resources"].get("limits", {}), f"{service}: no memory limit"
    refs = {
        next(iter(src.values()))["name"]
        for src in container["envFrom"]
        if "configMapRef" in src or "secretRef" in src
    }
    assert refs == {"agent-memory-config", "agent-memory-secrets"}
    annotations = spec["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    pdbs = by_kind(rendered, "PodDisruptionBudget")
    selector = spec["selector"]["matchLabels"]
    if service in SINGLETONS:
        return
    assert any(p["spec"]["selector"]["matchLabels"] == selector for p in pdbs.values()), (
        f"{service}: no PodDisruptionBudget"
    )


def test_consumers_serve_probes_on_the_metrics_port(rendered: list[dict[str, Any]]) -> None:
    """A consumer's probes are its WorkerProbe: the port must be set and bound on all addresses."""
    for svc in SERVICES:
        if svc.http is not None:
            continue
        container = by_kind(rendered, "Deployment")[svc.name]["spec"]["template"]["spec"][
            "containers"
        ][0]
        env = {e["name"]: e.get("value") for e in container["env"]}
        port = int(env["AGENT_MEMORY_METRICS__PORT"])
        assert env["AGENT_MEMORY_METRICS__HOST"] == "0.0.0.0"
        assert [p["containerPort"] for p in container["ports"]] == [port]


def test_http_services_listen_on_all_addresses_at_their_port(
    rendered: list[dict[str, Any]],
) -> None:
    """An HTTP service binds where AGENT_MEMORY_<NAME>__HOST/__PORT say (127.0.0.1 by default:
    unreachable for the probes and the Service)."""
    for svc in SERVICES:
        if svc.http is None:
            continue
        container = by_kind(rendered, "Deployment")[svc.name]["spec"]["template"]["spec"][
            "containers"
        ][0]
        env = {e["name"]: e.get("value") for e in container["env"]}
        prefix = f"AGENT_MEMORY_{svc.http.upper()}__"
        assert env.get(prefix + "HOST") == "0.0.0.0", svc.name
        ports = [p["containerPort"] for p in container["ports"]]
        grpc = [int(env[prefix + "GRPC_PORT"])] if prefix + "GRPC_PORT" in env else []
        assert ports == [int(env[prefix + "PORT"]), *grpc], svc.name


def test_nats_is_a_three_node_jetstream_cluster(rendered: list[dict[str, Any]]) -> None:
    nats = by_kind(rendered, "StatefulSet")["nats"]
    assert nats["spec"]["replicas"] == 3
    assert nats["spec"]["volumeClaimTemplates"], "JetStream needs persistent volumes"
    conf = by_kind(rendered, "ConfigMap")["nats-config"]["data"]["nats.conf"]
    assert all(f"nats-{i}.nats:6222" in conf for i in range(3))
    config = by_kind(rendered, "ConfigMap")["agent-memory-config"]["data"]
    assert config["AGENT_MEMORY_NATS_REPLICAS"] == "3"
    # the URLs carry the password: in the Secret, not the ConfigMap (issue 55, point 2)
    assert "AGENT_MEMORY_NATS_URL" not in config
    env = {e["name"]: e for e in nats["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["NATS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "agent-memory-secrets",
        "key": "NATS_PASSWORD",
    }
    assert by_kind(rendered, "PodDisruptionBudget")["nats"]["spec"]["maxUnavailable"] == 1


def test_the_dashboard_keeps_a_browser_on_one_replica(rendered: list[dict[str, Any]]) -> None:
    """Sign-in sessions live in the dashboard process that made them; with two replicas and no
    affinity a signed-in user would bounce back to the sign-in page."""
    replicas = by_kind(rendered, "Deployment")["dashboard"]["spec"].get("replicas", 1)
    service = by_kind(rendered, "Service")["dashboard"]["spec"]
    if replicas > 1:
        assert service.get("sessionAffinity") == "ClientIP"
        timeout = service["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"]
        assert timeout >= 8 * 3600  # the session's default lifetime


def test_nats_lets_in_only_clients_with_the_password(
    rendered: list[dict[str, Any]], tmp_path: Path
) -> None:
    """Issue 55, point 2: a real nats-server with the authorization block of the rendered
    nats.conf (its password from the Secret, as the StatefulSet passes it) refuses a raw
    client without the password, and lets in the services' login."""
    conf = by_kind(rendered, "ConfigMap")["nats-config"]["data"]["nats.conf"]
    with nats_with(conf, {"NATS_PASSWORD": "from-the-secret"}, tmp_path) as port:
        assert nats_login(port).startswith("refused: -ERR 'Authorization Violation'")
        assert nats_login(port, "agent-memory", "guess").startswith("refused")
        assert nats_login(port, "agent-memory", "from-the-secret") == "connected"
