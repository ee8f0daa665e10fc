"""``AGENT_MEMORY_QUERY__SEARCH__QUERY_PRECISION``: the weights questions are embedded with,
apart from the stored vectors' (the model is real; Postgres is real). Default ``auto``: int8
through the ONNX export."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
from pydantic import ValidationError

from agent_memory_common.db.postgres import make_pool
from agent_memory_query.search.runtime import open_search
from agent_memory_query.settings import Settings
from agent_memory_retrieval.adapters.minilm import MiniLMEmbedder
from agent_memory_retrieval.adapters.onnx_only import OnnxOnlyEmbedder


def test_auto_embeds_questions_at_int8_through_the_export_else_as_the_store() -> None:
    settings = Settings()
    assert settings.query.search.query_precision == "auto"
    assert settings.embedding_precision == "float32"  # the stored vectors' stay float32
    assert settings.query_embedding().embedding_precision == "int8"
    torch_only = Settings(embedding_onnx=False)
    assert torch_only.query_embedding() is torch_only
    both_int8 = Settings(embedding_precision="int8")
    assert both_int8.query_embedding() is both_int8
    float_questions = Settings(query={"search": {"query_precision": "float32"}})
    assert float_questions.query_embedding() is float_questions


def test_the_environment_sets_it_and_only_the_precision_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENT_MEMORY_QUERY__SEARCH__QUERY_PRECISION", "int8")
    monkeypatch.setenv("AGENT_MEMORY_EMBEDDING_BATCH_SIZE", "16")
    settings = Settings()
    queries = settings.query_embedding()
    assert settings.embedding_precision == "float32"  # the stored vectors' stay as they are
    assert queries.embedding_precision == "int8"
    assert queries.embedding_batch_size == 16
    assert queries.model_cache_path == settings.model_cache_path


def test_int8_questions_without_the_onnx_export_are_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="query_precision=int8"):
        Settings(embedding_onnx=False, query={"search": {"query_precision": "int8"}})
    with pytest.raises(ValidationError, match="query_precision"):
        Settings(query={"search": {"query_precision": "int4"}})


async def test_the_search_runtime_embeds_questions_at_the_set_precision(
    pg_dsn: str, tmp_path: Path
) -> None:
    settings = Settings(pg_dsn=pg_dsn, home=tmp_path)  # auto: int8
    pool = make_pool(pg_dsn, min_size=1, max_size=2)
    await pool.open(wait=True)
    runtime = await open_search(settings, pool)
    try:
        for _ in range(600):  # the model loads in the background, after the service is up
            if runtime.brainstem.embedder is not None:
                break
            await asyncio.sleep(0.1)
        embedder = runtime.brainstem.embedder
        # a stamped export loads without torch (onnx_only); either way int8 through ONNX
        assert isinstance(embedder, MiniLMEmbedder | OnnxOnlyEmbedder)
        assert embedder.onnx and embedder.precision == "int8"
        (vector,) = embedder.embed(["which database stores the events?"])
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, abs_tol=1e-4)
    finally:
        await runtime.close()
        await pool.close()
