"""all-MiniLM-L6-v2 through an ONNX export of the same network: queries and batches.

Why: on this machine torch spends ~12.5 ms of one thread on a short query, most of it in its
per-operator overhead; onnxruntime runs the same graph in ~5.5 ms, and a search waits for its
query embedding. For the corpus, onnxruntime's fused attention, layer norm and GELU embed
realistic events (50-2,000 characters) about twice as fast as torch's ``encode`` on one thread:
the embedder is the pipeline's slowest stage, so this is how soon a day's capture becomes
searchable.

The graph is exported from the loaded torch model (weights, mean pooling, normalisation) once
per model and torch version, into a cache folder shared by every process, and checked against
torch on load, one text at a time and as one padded batch: a vector that differs by more than
float rounding disables it, and torch answers as before. The export needs the ``onnx``
package; running it needs ``onnxruntime``; without either, torch answers.

``int8`` (``AGENT_MEMORY_EMBEDDING_PRECISION``, off by default): the same export with the
weights of its 36 weight matrices stored as 8-bit integers (one scale per output column) and
their inputs quantized per run (onnxruntime's dynamic quantization; attention's activation
products and everything else stay float). Measured here on one thread: 1.8-2x the texts/s
and a query in ~1.3 ms, not ~4 (this machine's AVX-512 VNNI does the integer products; less
without it); vectors at cosine 0.96-0.999 of float32's; through the whole pipeline up to a
point less LoCoMo recall, none less on the coding benchmark (``tests/bench/README.md``, "8-bit
weights"). It is the same space but for a hair: a float32 store searched with int8 queries
ranked as before, and ``agent-memory admin rebuild-index --vector`` makes a switched store
uniform. The load-time check holds it to ``MIN_COSINE_INT8``: a wrong graph lands far below.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np

from agent_memory_common.core.logs import get_logger

log = get_logger(__name__)

# Texts the export is checked on at load: short, empty, non-ASCII, and longer than the model's
# 256 word pieces (cut the same way by both).
PROBES: tuple[str, ...] = (
    "which schema did we settle on last week?",
    "",
    "Zürich naïve café 東京 ✓",
    " ".join(f"word{i}" for i in range(400)),
)
MIN_COSINE = 0.99999  # float rounding gives ~1 - 1e-7; a wrong graph gives far less
# int8 rounding: 0.98-0.99 on the probes alone, 0.971 for the empty one padded to 256 word
# pieces in a run (inputs are quantized per run, so a text's run-mates move its vector by a
# hair); another text's vector, what a wrong graph gives, sits far below
MIN_COSINE_INT8 = 0.95

Precision = Literal["float32", "int8"]


class OnnxEncoder:
    """Not thread-safe by itself: ``MiniLMEmbedder`` calls it under its lock."""

    def __init__(self, session: Any, model: Any, precision: Precision = "float32") -> None:
        self._session = session
        self._model = model  # its tokenization (cut at max_seq_length), exactly as torch's
        self.precision: Precision = precision
        self.worst_cosine = 0.0  # against torch, on the probes: set by open_encoder's check

    def embed_one(self, text: str) -> list[float]:
        return self.embed_features(self._model.preprocess([text]))

    def embed_features(self, features: Any) -> list[float]:
        """One text already cut into word pieces by the model's own ``preprocess``."""
        result: list[float] = self._run(features)[0].tolist()
        return result

    def embed_many(self, texts: Sequence[str], batch: int) -> tuple[list[list[float]], int]:
        """Vectors in the order of ``texts``, and the word pieces the model saw.

        Longest first in runs of ``batch``, as ``encode`` does, so that a run pads its texts
        to lengths close to their own; the pieces come free from the attention masks."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        pieces = 0
        for start in range(0, len(order), batch):
            run = order[start : start + batch]
            features = self._model.preprocess([texts[i] for i in run])
            pieces += int(features["attention_mask"].sum())
            for i, vector in zip(run, self._run(features).tolist(), strict=True):
                vectors[i] = vector
        return vectors, pieces

    def _run(self, features: Any) -> Any:
        feeds = {
            name: features[name].numpy().astype(np.int64)
            for name in ("input_ids", "attention_mask")
        }
        (embedding,) = self._session.run(None, feeds)
        return embedding


def cache_file(model_dir: Path, cache_dir: Path) -> Path:
    """The float export's file: one per model (its config and weights' sizes) and torch
    version (read from its package metadata: importing torch costs seconds, see
    ``onnx_only``). Another precision's file sits beside it (``quantized_file``)."""
    key = hashlib.sha256()
    for name in ("config.json", "modules.json", "1_Pooling/config.json"):
        path = model_dir / name
        key.update(path.read_bytes() if path.is_file() else b"-")
    for path in sorted(model_dir.glob("*.safetensors")) + sorted(model_dir.glob("*.bin")):
        key.update(f"{path.name}:{path.stat().st_size}".encode())
    key.update(f"torch {importlib.metadata.version('torch')}".encode())
    return cache_dir / f"minilm-{key.hexdigest()[:16]}.onnx"


def quantized_file(source: Path, precision: Precision) -> Path:
    """The file a precision runs from: the float export itself, or its quantized copy."""
    return source if precision == "float32" else source.with_name(f"{source.stem}-{precision}.onnx")


def export(model: Any, path: Path) -> None:
    """Write the graph to ``path`` atomically: processes starting together may all export."""
    import torch

    bert = model[0].auto_model.eval()

    class Pooled(torch.nn.Module):
        """What the sentence-transformers pipeline computes: mean of the token vectors over
        the attention mask, then unit length."""

        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            tokens = self.bert(input_ids=input_ids, attention_mask=attention_mask)[0]
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    sample = model.tokenizer(["a sample query"], return_tensors="pt")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")  # tracer notes on code paths a batch of one skips
            torch.onnx.export(
                Pooled().eval(),
                (sample["input_ids"], sample["attention_mask"]),
                tmp,
                input_names=["input_ids", "attention_mask"],
                output_names=["embedding"],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "tokens"},
                    "attention_mask": {0: "batch", 1: "tokens"},
                    "embedding": {0: "batch"},
                },
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def quantize(source: Path, path: Path) -> None:
    """Write ``source`` with int8 weight matrices to ``path``, atomically (as ``export``)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        with _quiet_root_log():
            quantize_dynamic(
                source,
                tmp,
                weight_type=QuantType.QInt8,
                per_channel=True,  # one scale per output column: cosine 0.992, not 0.947
                op_types_to_quantize=["MatMul"],  # not the embedding tables (Gather)
            )
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def _quiet_root_log() -> Iterator[None]:
    """The quantizer advises its pre-processing through the root logger, on every call; the
    pre-processing (shape inference) changes nothing for this graph."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def open_encoder(
    model: Any,
    *,
    model_dir: Path,
    cache_dir: Path,
    threads: int,
    reference: Callable[[str], Sequence[float]],
    precision: Precision = "float32",
) -> OnnxEncoder | None:
    """The ONNX encoder, or None (logged) when it cannot be built or does not match torch."""
    try:
        import onnxruntime

        source = cache_file(model_dir, cache_dir)
        path = quantized_file(source, precision)

        def make(*, again: bool) -> None:
            """Write the float export (``again``: even if present) and the file ``path``
            quantizes from it, if any."""
            if again or not source.is_file():
                export(model, source)
                log.info("embedder.onnx_exported", path=str(source))
            if path != source:
                quantize(source, path)
                log.info("embedder.onnx_quantized", path=str(path))

        if not path.is_file():
            make(again=False)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3

        def session() -> Any:
            return onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )

        try:
            loaded = session()
        except Exception:  # a truncated or foreign file: make it again, once
            make(again=True)
            loaded = session()
        encoder = OnnxEncoder(loaded, model, precision)
        references = [reference(t) for t in PROBES]
        together, _ = encoder.embed_many(PROBES, batch=len(PROBES))  # padded to the longest
        worst = min(
            _cosine(vector, expected)
            for t, alone, expected in zip(PROBES, together, references, strict=True)
            for vector in (encoder.embed_one(t), alone)
        )
    except Exception as exc:
        log.warning("embedder.onnx_unavailable", error=f"{type(exc).__name__}: {exc}")
        return None
    if worst < (MIN_COSINE_INT8 if precision == "int8" else MIN_COSINE):
        log.warning("embedder.onnx_mismatch", cosine=round(worst, 6), path=str(path))
        return None
    log.info("embedder.onnx_ready", precision=precision, worst_cosine=round(worst, 6))
    encoder.worst_cosine = worst
    return encoder


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))
