"""all-MiniLM-L6-v2 through its checked ONNX export alone: no torch, no sentence-transformers.

Why: importing sentence-transformers (and with it transformers, torch, sympy and scikit-learn)
costs about 20 s of CPU on this 2-core machine, and every process that loads the model pays
it: the embedder, the query service, the topic clusterer, each restart and each replica, and
the test suite hundreds of times. The ONNX export (``onnx_encoder``) computes the same vectors.
Once a full load (``MiniLMEmbedder.load``) has checked the export against torch, and checked
that the ``tokenizers`` library alone cuts texts into exactly the word pieces
sentence-transformers gives the network, it writes a **stamp** beside the export
(``<export>.verified.json``). A later load with a stamp that matches (the export, the
tokenizer file, the word-piece cut, the library versions) runs the export with ``tokenizers``
and ``onnxruntime`` only: the same vectors, in about a second of CPU. Without a matching stamp
the full load runs as before and writes one.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory_common.core.logs import get_logger
from agent_memory_retrieval.adapters.minilm import RECENT_QUERIES, observe
from agent_memory_retrieval.adapters.onnx_encoder import PROBES, Precision
from agent_memory_retrieval.ports import EMBEDDING_DIM

log = get_logger(__name__)

Features = tuple[Any, Any]  # (input_ids, attention_mask), int64 arrays of one padded run


def stamp_file(export: Path) -> Path:
    """Where the check of ``export`` is recorded."""
    return export.with_name(export.name + ".verified.json")


def _versions() -> dict[str, str]:
    """What the stamp depends on besides the files: a new library may cut or compute
    differently, so an upgrade is checked again by one full load."""
    return {
        name: importlib.metadata.version(name)
        for name in ("tokenizers", "onnxruntime", "sentence-transformers", "torch")
    }


def _tokenizer_key(model_dir: Path) -> str:
    return hashlib.sha256((model_dir / "tokenizer.json").read_bytes()).hexdigest()[:16]


def _expected(
    export: Path, model_dir: Path, max_tokens: int, precision: Precision
) -> dict[str, Any]:
    return {
        "export": export.name,
        "export_bytes": export.stat().st_size,
        "tokenizer": _tokenizer_key(model_dir),
        "max_tokens": max_tokens,
        "precision": precision,
        "versions": _versions(),
    }


def make_tokenizer(model_dir: Path, max_tokens: int) -> Any:
    """The model's fast tokenizer, cut at ``max_tokens`` word pieces and padded to the longest
    text of a run, as sentence-transformers calls it."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def features_of(tokenizer: Any, texts: Sequence[str]) -> Features:
    encodings = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    return ids, mask


def write_stamp(
    export: Path,
    *,
    model_dir: Path,
    max_tokens: int,
    precision: Precision,
    preprocess: Callable[[list[str]], Any],
    worst_cosine: float,
) -> bool:
    """Record that ``export`` was checked against torch (``worst_cosine``), after checking
    that ``tokenizers`` alone gives the word pieces ``preprocess`` (sentence-transformers')
    gives, one text at a time and as one padded run. False (and no stamp) when it does not."""
    try:
        tokenizer = make_tokenizer(model_dir, max_tokens)
        for run in [[t] for t in PROBES] + [list(PROBES)]:
            want = preprocess(run)
            ids, mask = features_of(tokenizer, run)
            if not (
                np.array_equal(want["input_ids"].numpy(), ids)
                and np.array_equal(want["attention_mask"].numpy(), mask)
            ):
                log.warning("embedder.onnx_only_tokens_differ", text=run[0][:40])
                return False
        doc = {**_expected(export, model_dir, max_tokens, precision), "worst_cosine": worst_cosine}
        path = stamp_file(export)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w") as out:
            json.dump(doc, out, indent=1)
        os.replace(tmp, path)  # processes starting together may all write it: the same bytes
    except (OSError, ImportError, ValueError) as exc:
        log.warning("embedder.onnx_only_unstamped", error=f"{type(exc).__name__}: {exc}")
        return False
    return True


def stamped(export: Path, *, model_dir: Path, max_tokens: int, precision: Precision) -> bool:
    """Whether ``export`` carries a stamp that still holds for these files and libraries."""
    try:
        doc = json.loads(stamp_file(export).read_text())
        expected = _expected(export, model_dir, max_tokens, precision)
    except (OSError, ValueError, importlib.metadata.PackageNotFoundError):
        return False
    return isinstance(doc, dict) and all(doc.get(k) == v for k, v in expected.items())


class OnnxOnlyEmbedder:
    """The ``Embedder`` port on a stamped export. Thread-safe: one run at a time."""

    def __init__(
        self, session: Any, tokenizer: Any, *, batch_size: int, precision: Precision
    ) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._batch_size = batch_size
        self._precision: Precision = precision
        self._lock = threading.Lock()
        self._recent: OrderedDict[bytes, list[float]] = OrderedDict()

    @classmethod
    def open(
        cls,
        export: Path,
        *,
        model_dir: Path,
        max_tokens: int,
        precision: Precision,
        batch_size: int,
        threads: int,
    ) -> OnnxOnlyEmbedder | None:
        """The embedder, or None when ``export`` has no stamp that holds (load it in full)."""
        if not export.is_file() or not stamped(
            export, model_dir=model_dir, max_tokens=max_tokens, precision=precision
        ):
            return None
        try:
            import onnxruntime

            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = onnxruntime.InferenceSession(
                str(export), options, providers=["CPUExecutionProvider"]
            )
            tokenizer = make_tokenizer(model_dir, max_tokens)
        except Exception as exc:  # a damaged file or library: the full load checks again
            log.warning("embedder.onnx_only_unavailable", error=f"{type(exc).__name__}: {exc}")
            return None
        log.info("embedder.onnx_only_ready", precision=precision, path=str(export))
        return cls(session, tokenizer, batch_size=batch_size, precision=precision)

    @property
    def dimension(self) -> int:
        return EMBEDDING_DIM

    @property
    def onnx(self) -> bool:
        return True

    @property
    def precision(self) -> Precision:
        return self._precision

    @property
    def bfloat16(self) -> bool:
        return False

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            start = time.perf_counter()
            if len(texts) == 1:
                ids, mask = features_of(self._tokenizer, texts)
                key = ids.tobytes()
                if (known := self._recent.get(key)) is not None:
                    self._recent.move_to_end(key)
                    return [list(known)]
                vector: list[float] = self._run(ids, mask)[0].tolist()
                observe("one", 1, int(mask.sum()), start)
                self._recent[key] = list(vector)
                if len(self._recent) > RECENT_QUERIES:
                    self._recent.popitem(last=False)
                return [vector]
            vectors, pieces = self._embed_many(texts)
            observe("batch", len(texts), pieces, start)
            return vectors

    def pieces(self, texts: Sequence[str]) -> int:
        """Word pieces the model sees of ``texts`` (after the cut, specials included)."""
        return sum(sum(e.attention_mask) for e in self._tokenizer.encode_batch(list(texts)))

    def _embed_many(self, texts: Sequence[str]) -> tuple[list[list[float]], int]:
        """Longest first in runs of ``batch_size``, as ``OnnxEncoder.embed_many``: the same
        runs, so the same padding and the same vectors."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        pieces = 0
        for begin in range(0, len(order), self._batch_size):
            run = order[begin : begin + self._batch_size]
            ids, mask = features_of(self._tokenizer, [texts[i] for i in run])
            pieces += int(mask.sum())
            for i, vector in zip(run, self._run(ids, mask).tolist(), strict=True):
                vectors[i] = vector
        return vectors, pieces

    def _run(self, ids: Any, mask: Any) -> Any:
        (embedding,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask})
        return embedding
