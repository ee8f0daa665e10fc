"""Adapters for the contract suites: every port's suite runs on each selected adapter.

Selected by default (what this machine can run): Tantivy and an in-memory OpenSearch stand-in
(``openmock``, which checks the adapter's requests but neither analyses text nor ranks) for
``TextIndex``; pgvector in the test Postgres and qdrant-client's local mode for ``VectorIndex``.
A real server joins the selection when its URL is set (``AGENT_MEMORY_OPENSEARCH_URL``,
``AGENT_MEMORY_QDRANT_URL``) or when it is named in ``AGENT_MEMORY_TEST_INDEXES``
(``opensearch,qdrant``); named without a URL, its tests fail rather than skip.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from openmock import AsyncFakeOpenSearch  # type: ignore[import-untyped]

from agent_memory_retrieval.adapters.minilm import MiniLMEmbedder
from agent_memory_retrieval.adapters.opensearch_index import OpenSearchIndex
from agent_memory_retrieval.adapters.pgvector_index import PgVectorIndex
from agent_memory_retrieval.adapters.qdrant_index import QdrantIndex
from agent_memory_retrieval.adapters.tantivy_index import TantivyIndex
from agent_memory_retrieval.docs import IndexDoc, event_doc_id
from agent_memory_retrieval.ports import TextIndex, VectorIndex
from agent_memory_retrieval.settings import RetrievalSettings

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _named() -> set[str]:
    return {n.strip() for n in os.environ.get("AGENT_MEMORY_TEST_INDEXES", "").split(",") if n}


def text_backends() -> list[str]:
    chosen = ["tantivy", "opensearch-standin"]
    if "opensearch" in _named() or os.environ.get("AGENT_MEMORY_OPENSEARCH_URL"):
        chosen.append("opensearch")
    return chosen


def vector_backends() -> list[str]:
    # pgvector answers small scopes exactly: "pgvector-graph" forces its HNSW path
    chosen = ["pgvector", "pgvector-graph", "qdrant-local"]
    if "qdrant" in _named() or os.environ.get("AGENT_MEMORY_QDRANT_URL"):
        chosen.append("qdrant")
    return chosen


def _server_url(var: str, backend: str) -> str:
    url = os.environ.get(var)
    if not url:
        pytest.fail(f"backend {backend!r} selected but {var} is not set")
    return url


@pytest.fixture(params=text_backends())
async def text_index(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TextIndex]:
    name: str = request.param
    index: TextIndex
    if name == "tantivy":
        index = TantivyIndex(tmp_path / "tantivy", writer=True)
    elif name == "opensearch-standin":
        index = OpenSearchIndex(AsyncFakeOpenSearch(), "agent-memory-test")
    else:
        url = _server_url("AGENT_MEMORY_OPENSEARCH_URL", name)
        settings = RetrievalSettings(
            opensearch_url=url, opensearch_index=f"am-test-{uuid.uuid4().hex[:8]}"
        )
        index = OpenSearchIndex.from_settings(settings)
    try:
        yield index
    finally:
        if name == "opensearch":
            await index.clear()
        await index.close()


@pytest.fixture
def analyses_text(request: pytest.FixtureRequest) -> bool:
    """Whether this test's text index is a real engine (stemming, stop words, BM25 ranking);
    the in-memory stand-in only checks the adapter's requests."""
    return bool(request.node.callspec.params.get("text_index") != "opensearch-standin")


@pytest.fixture(params=vector_backends())
async def vector_index(request: pytest.FixtureRequest, pg_dsn: str) -> AsyncIterator[VectorIndex]:
    name: str = request.param
    index: VectorIndex
    if name == "pgvector":
        index = await PgVectorIndex.open(pg_dsn)
    elif name == "pgvector-graph":
        index = await PgVectorIndex.open(pg_dsn, exact_max_rows=0)
    elif name == "qdrant-local":
        index = await QdrantIndex.open(location=":memory:", collection="test")
    else:
        url = _server_url("AGENT_MEMORY_QDRANT_URL", name)
        index = await QdrantIndex.open(url=url, collection=f"am_test_{uuid.uuid4().hex[:8]}")
    try:
        yield index
    finally:
        if name == "qdrant":
            await index.clear()
        await index.close()


@pytest.fixture(scope="session")
def embedder() -> Iterator[MiniLMEmbedder]:
    """Loaded once per test session: importing torch and the model takes seconds."""
    yield MiniLMEmbedder.load()


@pytest.fixture
def make_doc() -> Callable[..., IndexDoc]:
    def make(n: int, text: str = "", *, tenant: str = "acme", **over: Any) -> IndexDoc:
        fields: dict[str, Any] = {
            "id": event_doc_id(tenant, f"e-{n}"),
            "type": "event",
            "tenant": tenant,
            "project_id": "proj",
            "agent_id": "claude-code",
            "session_id": "s1",
            "ts": T0 + timedelta(minutes=n),
            "level": "event",
            "kind": "observation",
            "salience": 0.5,
            "title": "",
            "text": text or f"event {n}",
            "event_ids": (f"e-{n}",),
        }
        fields.update(over)
        return IndexDoc(**fields)

    return make
