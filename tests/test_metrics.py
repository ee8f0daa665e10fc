"""Every service exports its Prometheus metrics, and the dashboards and alerts read real names.

The whole pipeline runs as real processes; after events flow and a search runs, each service's
``/metrics`` is scraped and the counters that must have moved are checked to have moved (a
metric merely declared would print its HELP line and no sample, which this test refuses).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import httpx
import pytest
import yaml

from agent_memory_common.core.metrics import METRIC_NAMES
from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.helpers import drained, eventually, make_event, scrape, value
from tests.stack import make_stack

ROOT = Path(__file__).resolve().parent.parent
CONSUMERS = {
    "recorder": ["recorder"],
    "segmenter": ["segmenter"],
    "summarizer": ["summarizer"],
    "embedder": ["embedder", "embedder-toc"],
    "bm25-indexer": ["bm25-indexer", "bm25-indexer-toc"],
}


def answers_200(url: str) -> bool:
    try:
        return plain_http.get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.slow
@pytest.mark.timeout(900)  # the whole pipeline, the model load included, on a busy machine
def test_every_service_exports_what_it_did(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    stack = make_stack(nats_server, pg_dsn, tmp_path)
    try:
        for name in ("gateway", "recorder", "segmenter", "summarizer", "bm25-indexer"):
            stack.start(name)
        stack.start("embedder")
        stack.start("query")
        for name, url in stack.metrics_urls.items():
            for probe in ("healthz", "readyz"):
                eventually(
                    functools.partial(answers_200, f"{url}/{probe}"),
                    timeout=300,
                    what=f"{name} {probe}",
                )
        text = "Decision {}: we keep Postgres as the system of record."
        events = [make_event(i, text=text.format(i)) for i in range(5)]
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events})
        assert r.status_code == 202, r.text
        bad = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": [{"text": 1}]})
        assert bad.status_code in (400, 422)
        eventually(lambda: drained(stack.query_url, 5), timeout=120, what="pipeline drained")
        r = plain_http.post(f"{stack.query_url}/v1/search", json={"query": "Postgres record"})
        assert r.status_code == 200, r.text

        gateway = scrape(stack.gateway_url)
        assert value(gateway, "agent_memory_events_accepted_total") >= 5
        assert value(gateway, "agent_memory_ingest_requests_total", status="202") >= 1
        assert value(gateway, "agent_memory_events_rejected_total") >= 1
        assert value(gateway, "agent_memory_publish_seconds_count") >= 1
        assert (
            value(gateway, "agent_memory_http_requests_total", route="/v1/events", status="202")
            >= 1
        )

        # what agents are given unasked: a brief (its tokens counted) and a recall (whatever
        # its outcome while the model loads)
        brief = plain_http.get(f"{stack.query_url}/v1/projects/proj/brief")
        assert brief.status_code == 200 and brief.json()["tokens"] > 0, brief.text
        prompt = {"project_id": "proj", "prompt": "what is the system of record we keep?"}
        assert plain_http.post(f"{stack.query_url}/v1/recall", json=prompt).status_code == 200

        query = scrape(stack.query_url)
        assert value(query, "agent_memory_recall_answers_total", kind="brief", outcome="given") == 1
        assert (
            value(query, "agent_memory_recall_tokens_total", kind="brief") == brief.json()["tokens"]
        )
        assert value(query, "agent_memory_recall_answers_total", kind="recall") == 1
        assert value(query, "agent_memory_search_seconds_count") >= 1
        assert value(query, "agent_memory_search_tier_seconds_count") >= 1
        assert value(query, "agent_memory_http_requests_total", route="/v1/search") >= 1

        # once its model is loaded (in the background), a search embeds its query: one text,
        # through the model, timed
        asked = iter(range(1_000_000))

        def query_embedded() -> bool:
            body = {"query": f"Postgres record {next(asked)}"}  # new text: no cached vector
            assert plain_http.post(f"{stack.query_url}/v1/search", json=body).status_code == 200
            return value(scrape(stack.query_url), "agent_memory_embedding_texts_total") >= 1

        eventually(query_embedded, timeout=300, what="a query embedded")
        query = scrape(stack.query_url)
        assert value(query, "agent_memory_embedding_texts_total", mode="one") >= 1
        assert value(query, "agent_memory_embedding_pieces_total", mode="one") >= 3
        assert value(query, "agent_memory_embedding_seconds_count", mode="one") >= 1

        def moved(service: str, durable: str) -> bool:
            found = scrape(stack.metrics_urls[service])
            return value(found, "agent_memory_consumer_messages_total", consumer=durable) >= 1

        for service, durables in CONSUMERS.items():
            for durable in durables:
                if durable.endswith("-toc") or service == "summarizer":
                    continue  # segments close on a timer: their counters move later
                eventually(functools.partial(moved, service, durable), what=f"{durable} counted")
            found = scrape(stack.metrics_urls[service])
            # every consumer reports its lag; those that handled a batch, its time too
            for durable in durables:
                assert f'agent_memory_consumer_pending{{consumer="{durable}"}}' in found, durable
            if service != "summarizer":
                assert value(found, "agent_memory_consumer_batch_seconds_count") >= 1, service
        # the embedder's model saw every event's text (and the TOC's, once segments close)
        embedder = scrape(stack.metrics_urls["embedder"])
        assert value(embedder, "agent_memory_embedding_texts_total") >= 5
        assert value(embedder, "agent_memory_embedding_pieces_total") >= 5 * 10
        assert value(embedder, "agent_memory_embedding_seconds_sum") > 0
        # the lag gauge is read from JetStream: after the drain, the recorder has none left
        lag = scrape(stack.metrics_urls["recorder"])
        assert value(lag, "agent_memory_consumer_pending", consumer="recorder") == 0
        assert 'agent_memory_consumer_pending{consumer="recorder"}' in lag
    finally:
        stack.stop()


def dashboard_exprs() -> list[str]:
    board = json.loads((ROOT / "deploy/grafana/agent-memory.json").read_text())
    return [t["expr"] for panel in board["panels"] for t in panel.get("targets", [])]


def alert_exprs() -> list[str]:
    rules = yaml.safe_load((ROOT / "deploy/prometheus/alerts.yml").read_text())
    return [r["expr"] for group in rules["groups"] for r in group["rules"]]


@pytest.mark.parametrize("source", ["dashboard", "alerts"])
def test_dashboards_and_alerts_use_exported_names(source: str) -> None:
    exprs = dashboard_exprs() if source == "dashboard" else alert_exprs()
    assert exprs
    used = {n for e in exprs for n in re.findall(r"agent_memory_[a-z_]+", e)}
    suffixes = ("_bucket", "_count", "_sum")
    unknown = {n for n in used if n not in METRIC_NAMES and not n.endswith(suffixes)} | {
        n for n in used if n.endswith(suffixes) and n.rsplit("_", 1)[0] not in METRIC_NAMES
    }
    assert not unknown, f"{source} reads metrics no service exports: {sorted(unknown)}"
