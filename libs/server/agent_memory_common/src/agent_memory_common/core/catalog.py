"""Every service of agent-memory, declared once: what runs it, how it is reached, what it reads.

Adding a consumer used to mean ten touch points (the supervisor's list, the test stack's own
list, compose, the Kubernetes base, the streams, the root ``pyproject.toml`` in five places),
each found by reading the last change that added one. Now a service is its folder plus one
``ServiceSpec`` here. The supervisor (``agent-memory up``) and the test stack start what this
lists; ``tests/test_service_catalog.py`` checks everything that cannot read Python (compose,
the Kubernetes manifests, the root ``pyproject.toml``) and the durables of ``bus.streams``
against it, and names the file and the line that is missing. The recipe is in
docs/architecture.md, "Where to add ... a service".

Pure data in the lowest layer, so that the command (``libs/ops``), the services and the tests
can all read it without importing anything they do not need.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServiceSpec:
    """One service.

    ``name``: its process, log file, Kubernetes Deployment and metrics job (``bm25-indexer``);
    ``folder``: ``services/<folder>``, the compose service and the image's ``SERVICE`` build
    argument (``bm25``); ``module``: what ``python -m`` runs. ``http``: the settings section
    whose ``port`` it listens on (``AGENT_MEMORY_<HTTP>__PORT``), or None for a consumer,
    which serves only ``/metrics``, ``/healthz`` and ``/readyz`` on its metrics port.
    ``durables``: the JetStream durable consumers it owns on the pipeline (``bus.streams``);
    ``erases``: whether it takes part in cascade erasure (its ``erasure-<name>`` durable).
    ``embeds``: it loads the sentence model (its image needs torch).
    """

    name: str
    folder: str
    module: str
    http: str | None = None
    durables: tuple[str, ...] = ()
    erases: bool = False
    embeds: bool = False

    @property
    def consumer(self) -> bool:
        """A consumer service: it scales out as replicas sharing its durables."""
        return self.http is None


# In start order: the consumers first (they have no readiness to wait for), then the HTTP
# services, each waited for on its /readyz.
SERVICES: tuple[ServiceSpec, ...] = (
    ServiceSpec(
        "recorder", "recorder", "agent_memory_recorder", durables=("recorder",), erases=True
    ),
    ServiceSpec(
        "segmenter", "segmenter", "agent_memory_segmenter", durables=("segmenter",), erases=True
    ),
    ServiceSpec(
        "summarizer",
        "summarizer",
        "agent_memory_summarizer",
        durables=("summarizer",),
        erases=True,
    ),
    ServiceSpec(
        "bm25-indexer",
        "bm25",
        "agent_memory_bm25",
        durables=("bm25-indexer", "bm25-indexer-toc"),
        erases=True,
    ),
    ServiceSpec(
        "embedder",
        "embedder",
        "agent_memory_embedder",
        durables=("embedder", "embedder-toc"),
        erases=True,
        embeds=True,
    ),
    ServiceSpec(
        "topics", "topics", "agent_memory_topics", durables=("topics",), erases=True, embeds=True
    ),
    ServiceSpec("gateway", "gateway", "agent_memory_gateway", http="gateway"),
    ServiceSpec("query", "query", "agent_memory_query", http="query", erases=True, embeds=True),
    ServiceSpec("pruner", "pruner", "agent_memory_pruner", http="pruner"),
    ServiceSpec("dashboard", "dashboard", "agent_memory_dashboard", http="dashboard"),
)

BY_NAME: dict[str, ServiceSpec] = {s.name: s for s in SERVICES}
CONSUMERS: tuple[str, ...] = tuple(s.name for s in SERVICES if s.consumer)
