"""Prometheus metrics: every name any service exports, defined once.

Names follow Prometheus' conventions (``_total`` counters, ``_seconds`` histograms, base units)
and carry no tenant, project or text label: a scrape must never leak whose memory is stored, and
label values stay bounded (consumer names, routes, reasons, tiers). ``deploy/grafana`` and
``deploy/prometheus`` read these names; ``tests/test_metrics.py`` scrapes every service for them.

The HTTP services serve ``/metrics`` on their own port (``http_metrics_app``); the consumer
services, which have no HTTP API, serve ``/metrics``, ``/healthz`` and ``/readyz`` on
``AGENT_MEMORY_METRICS__PORT`` (``WorkerProbe``), which is also what Kubernetes probes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from agent_memory_common.core.logs import get_logger

log = get_logger(__name__)

# Latency buckets from 0.5 ms to 30 s: the gateway's publish is ~1 ms, a summarizer batch seconds.
LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
)

# --- HTTP (gateway, query, and any later HTTP service) -----------------------------------------
HTTP_REQUESTS = Counter(
    "agent_memory_http_requests_total",
    "HTTP requests answered, by service, route template, method and status code.",
    ["service", "route", "method", "status"],
)
HTTP_SECONDS = Histogram(
    "agent_memory_http_request_seconds",
    "HTTP request latency, by service and route template.",
    ["service", "route"],
    buckets=LATENCY_BUCKETS,
)

# --- ingest (gateway) ----------------------------------------------------------------------------
INGEST_REQUESTS = Counter(
    "agent_memory_ingest_requests_total",
    "POST /v1/events requests, by status code.",
    ["status"],
)
EVENTS_ACCEPTED = Counter(
    "agent_memory_events_accepted_total", "Events acknowledged by JetStream and answered 202."
)
EVENTS_REFUSED = Counter(
    "agent_memory_events_refused_total",
    "Events of an accepted request refused and not published, by reason (erased: a tombstoned id).",
    ["reason"],
)
EVENTS_REJECTED = Counter(
    "agent_memory_events_rejected_total",
    "Ingest requests refused, by reason (the error code of the answer).",
    ["reason"],
)
PUBLISH_SECONDS = Histogram(
    "agent_memory_publish_seconds",
    "Time from publishing a request's events to JetStream's last ack.",
    buckets=LATENCY_BUCKETS,
)

# --- consumers -------------------------------------------------------------------------------
CONSUMER_MESSAGES = Counter(
    "agent_memory_consumer_messages_total",
    "Messages handled and acknowledged, by durable consumer.",
    ["consumer"],
)
CONSUMER_SECONDS = Histogram(
    "agent_memory_consumer_batch_seconds",
    "Time to handle one batch (transaction, commit, follow-up publishes, acks).",
    ["consumer"],
    buckets=LATENCY_BUCKETS,
)
CONSUMER_FAILURES = Counter(
    "agent_memory_consumer_failures_total",
    "Batches or messages that failed, by consumer and kind (transient: retried; poison: DLQ).",
    ["consumer", "kind"],
)
CONSUMER_REDELIVERIES = Counter(
    "agent_memory_consumer_redeliveries_total",
    "Messages received more than once (after a crash, a nak or an ack timeout).",
    ["consumer"],
)
CONSUMER_DEAD_LETTERS = Counter(
    "agent_memory_consumer_dead_letters_total",
    "Poison messages moved to mem.dlq.<consumer>.",
    ["consumer"],
)
CONSUMER_PENDING = Gauge(
    "agent_memory_consumer_pending",
    "Messages in the stream not yet delivered to the durable consumer (its lag, from JetStream).",
    ["consumer"],
)
CONSUMER_ACK_PENDING = Gauge(
    "agent_memory_consumer_ack_pending",
    "Messages delivered and not yet acknowledged, by durable consumer (from JetStream).",
    ["consumer"],
)

# --- query -----------------------------------------------------------------------------------
SEARCH_SECONDS = Histogram(
    "agent_memory_search_seconds",
    "Search latency by intent (query embedding included).",
    ["intent"],
    buckets=LATENCY_BUCKETS,
)
SEARCH_TIER_SECONDS = Histogram(
    "agent_memory_search_tier_seconds",
    "Time spent in each retrieval tier of a search, by tier.",
    ["tier"],
    buckets=LATENCY_BUCKETS,
)
SEARCH_FALLBACKS = Counter(
    "agent_memory_search_fallbacks_total",
    "Searches in which a planned tier was absent or failed and the brainstem fell back.",
    ["tier"],
)
# What is put in front of agents unasked (the hooks' and the middleware's brief and recall): the
# cost users watch. Per project it is no metric (no project label): GET /v1/projects/{id}/brief
# and POST /v1/recall answer with their own ``tokens``.
RECALL_TOKENS = Counter(
    "agent_memory_recall_tokens_total",
    "Tokens (4 characters each) given to agents unasked, by kind (brief, recall).",
    ["kind"],
)
RECALL_ANSWERS = Counter(
    "agent_memory_recall_answers_total",
    "Briefs and recalls answered, by kind and outcome (given, or why nothing was: empty, "
    "too_short, no_match, below_threshold, nothing_new; off: the project turned injection off).",
    ["kind", "outcome"],
)
# Table-of-contents and topic calls are agent_memory_http_requests_total{route=~"/v1/toc.*"}.

# --- embedding model (the embedder's corpus batches, the query service's queries) --------------
# The model is the embedder's whole cost: how much of its wall time the model ran, over what
# texts and word pieces, tells pipeline overhead apart from a slow model (bench-scale reads it).
EMBEDDING_TEXTS = Counter(
    "agent_memory_embedding_texts_total",
    "Texts through the embedding model, by mode (batch: the corpus; one: a query).",
    ["mode"],
)
EMBEDDING_PIECES = Counter(
    "agent_memory_embedding_pieces_total",
    "Word pieces through the embedding model after its 256-piece cut (its cost grows with them).",
    ["mode"],
)
EMBEDDING_SECONDS = Histogram(
    "agent_memory_embedding_seconds",
    "Time the embedding model ran per call, by mode (waiting for the model excluded).",
    ["mode"],
    buckets=LATENCY_BUCKETS,
)

# --- topic clusterer -------------------------------------------------------------------------
# A re-cluster runs in a worker thread off the consumer: a hung one stops the topic graph from
# changing while the consumer still acks, so lag alone never shows it. The start time does.
TOPICS_RECLUSTER_SECONDS = Histogram(
    "agent_memory_topics_recluster_seconds",
    "Time to re-cluster one project's topics (cluster, name, label, link, write).",
    buckets=LATENCY_BUCKETS,
)
TOPICS_RECLUSTER_STARTED = Gauge(
    "agent_memory_topics_recluster_started_timestamp_seconds",
    "Unix time the running re-cluster began; 0 while none runs.",
)

# --- lifecycle -------------------------------------------------------------------------------
LIFECYCLE_RUNS = Counter(
    "agent_memory_lifecycle_runs_total",
    "Pruner and erasure runs, by kind (cleanup, cleanup_dry_run, erasure) and outcome.",
    ["kind", "outcome"],
)

METRIC_NAMES = (
    "agent_memory_http_requests_total",
    "agent_memory_http_request_seconds",
    "agent_memory_ingest_requests_total",
    "agent_memory_events_accepted_total",
    "agent_memory_events_rejected_total",
    "agent_memory_events_refused_total",
    "agent_memory_publish_seconds",
    "agent_memory_consumer_messages_total",
    "agent_memory_consumer_batch_seconds",
    "agent_memory_consumer_failures_total",
    "agent_memory_consumer_redeliveries_total",
    "agent_memory_consumer_dead_letters_total",
    "agent_memory_consumer_pending",
    "agent_memory_consumer_ack_pending",
    "agent_memory_search_seconds",
    "agent_memory_search_tier_seconds",
    "agent_memory_search_fallbacks_total",
    "agent_memory_recall_tokens_total",
    "agent_memory_recall_answers_total",
    "agent_memory_embedding_texts_total",
    "agent_memory_embedding_pieces_total",
    "agent_memory_embedding_seconds",
    "agent_memory_topics_recluster_seconds",
    "agent_memory_topics_recluster_started_timestamp_seconds",
    "agent_memory_lifecycle_runs_total",
)


def exposition() -> bytes:
    """The registry in Prometheus' text format."""
    return generate_latest(REGISTRY)


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class HttpMetrics:
    """ASGI middleware: counts and times every request by its route *template*
    (``/v1/toc/nodes/{node_id}``, never the id itself: bounded labels, nothing leaked), and
    answers ``GET /metrics``."""

    def __init__(self, app: ASGIApp, service: str) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == "/metrics" and scope["method"] == "GET":
            body = exposition()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", CONTENT_TYPE_LATEST.encode()),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        status = 500
        start = time.perf_counter()

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = _route_template(scope)
            HTTP_REQUESTS.labels(self.service, route, scope["method"], str(status)).inc()
            HTTP_SECONDS.labels(self.service, route).observe(time.perf_counter() - start)


def _route_template(scope: Scope) -> str:
    """The matched route's path template; unmatched paths share one label."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    if scope.get("path") == "/v1/events":  # answered by the gateway's front door
        return "/v1/events"
    return "unmatched"


Readiness = Callable[[], bool]


class WorkerProbe:
    """``/metrics``, ``/healthz`` and ``/readyz`` for a consumer service, on its event loop.

    Served by the service's own event loop on purpose: a loop that is stuck (a blocking call,
    a deadlock) stops answering ``/healthz``, which is exactly what a liveness probe must see.
    ``/readyz`` answers 200 only while ``ready()`` holds (NATS connected, the pool open).
    A port that cannot be bound is logged and skipped: metrics never stop a consumer.
    """

    def __init__(self, port: int, ready: Readiness, host: str = "127.0.0.1") -> None:
        self.port = port
        self.host = host
        self.ready = ready
        self._server: asyncio.Server | None = None

    @property
    def bound_port(self) -> int | None:
        if self._server is None or not self._server.sockets:
            return None
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        try:
            self._server = await asyncio.start_server(self._serve, self.host, self.port)
        except OSError as exc:
            log.warning("metrics.port_unavailable", port=self.port, error=str(exc))
            return
        log.info("metrics.listening", port=self.bound_port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
            method, path = _request_line(request)
            status, content_type, body = self._answer(method, path)
            head = (
                f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
            )
            writer.write(head.encode() + body)
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass
        finally:
            writer.close()

    def _answer(self, method: str, path: str) -> tuple[str, str, bytes]:
        path = path.split("?", 1)[0]
        if method != "GET":
            return "405 Method Not Allowed", "text/plain", b"method not allowed\n"
        if path == "/metrics":
            return "200 OK", CONTENT_TYPE_LATEST, exposition()
        if path == "/healthz":
            return "200 OK", "application/json", b'{"status":"ok"}'
        if path == "/readyz":
            if self.ready():
                return "200 OK", "application/json", b'{"status":"ready"}'
            return "503 Service Unavailable", "application/json", b'{"status":"not ready"}'
        return "404 Not Found", "text/plain", b"not found\n"


def _request_line(request: bytes) -> tuple[str, str]:
    first = request.split(b"\r\n", 1)[0].decode("latin-1")
    parts = first.split(" ")
    if len(parts) < 2:
        return "", ""
    return parts[0], parts[1]
