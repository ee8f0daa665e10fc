"""The model through its checked ONNX export alone (``onnx_only``): a full load stamps the
export; a later load with a stamp that holds skips torch and sentence-transformers and gives
the very same vectors; a stamp that no longer holds, or tokens that differ, mean a full load."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_memory_retrieval.adapters.factory import load_embedder
from agent_memory_retrieval.adapters.minilm import MiniLMEmbedder, bundled_model_dir
from agent_memory_retrieval.adapters.onnx_encoder import cache_file, quantized_file
from agent_memory_retrieval.adapters.onnx_only import (
    OnnxOnlyEmbedder,
    stamp_file,
    write_stamp,
)
from agent_memory_retrieval.settings import RetrievalSettings

TEXTS = [
    "which schema did we settle on last week?",
    "",
    "Zürich naïve café 東京 ✓",
    "  spaces around, tabs\tand\nnew lines  ",
    " ".join(f"word{i}" for i in range(400)),  # beyond the 256 word pieces
    *(f"note {i}: the recorder writes events to postgres" for i in range(19)),
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(scope="module")
def full(cache: Path) -> MiniLMEmbedder:
    """The full load (torch, sentence-transformers): it exports, checks and stamps."""
    return MiniLMEmbedder.load(onnx_cache=cache)


def export_of(cache: Path, precision: str = "float32") -> Path:
    return quantized_file(cache_file(bundled_model_dir(), cache), precision)  # type: ignore[arg-type]


def test_a_full_load_stamps_and_the_next_load_gives_the_same_vectors_without_torch(
    full: MiniLMEmbedder, cache: Path
) -> None:
    stamp = json.loads(stamp_file(export_of(cache)).read_text())
    assert stamp["max_tokens"] == 256 and stamp["worst_cosine"] > 0.99999
    lean = load_embedder(RetrievalSettings(model_cache_dir=cache))
    assert isinstance(lean, OnnxOnlyEmbedder) and lean.onnx and not lean.bfloat16
    # bit for bit: one text (a query), a batch in several runs, and the pieces counted
    assert [lean.embed([t])[0] for t in TEXTS] == [full.embed([t])[0] for t in TEXTS]
    assert lean.embed(TEXTS) == full.embed(TEXTS)
    assert lean.pieces(TEXTS) == full.pieces(TEXTS)
    # what the stamp saves: a process that loads it never imports torch
    probe = (
        "import sys; from agent_memory_retrieval.adapters.factory import load_embedder;"
        "from agent_memory_retrieval.settings import RetrievalSettings;"
        f"e = load_embedder(RetrievalSettings(model_cache_dir={str(cache)!r}));"
        "print(type(e).__name__, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1].split() == ["OnnxOnlyEmbedder", "False", "False"], out


def test_int8_is_stamped_on_its_own_file(cache: Path) -> None:
    full = MiniLMEmbedder.load(onnx_cache=cache, precision="int8")
    lean = load_embedder(RetrievalSettings(model_cache_dir=cache, embedding_precision="int8"))
    assert isinstance(lean, OnnxOnlyEmbedder) and lean.precision == "int8"
    assert lean.embed(TEXTS) == full.embed(TEXTS)


def test_a_stamp_that_no_longer_holds_means_a_full_load(full: MiniLMEmbedder, cache: Path) -> None:
    export = export_of(cache)
    stamp = stamp_file(export)
    kept = stamp.read_text()
    try:
        # another cut of the texts than the one checked
        other = load_embedder(RetrievalSettings(model_cache_dir=cache, embedding_max_tokens=64))
        assert isinstance(other, MiniLMEmbedder)
        stamp.write_text(kept)
        # a library upgraded since the check
        doc = json.loads(kept)
        doc["versions"]["onnxruntime"] = "0.0.1"
        stamp.write_text(json.dumps(doc))
        assert isinstance(load_embedder(RetrievalSettings(model_cache_dir=cache)), MiniLMEmbedder)
        # a damaged stamp
        stamp.write_text("{not json")
        assert isinstance(load_embedder(RetrievalSettings(model_cache_dir=cache)), MiniLMEmbedder)
        # each full load stamped again
        assert json.loads(stamp.read_text()) == json.loads(kept)
    finally:
        stamp.write_text(kept)


def test_no_stamp_when_the_tokenizer_alone_cuts_differently(
    full: MiniLMEmbedder, cache: Path, tmp_path: Path
) -> None:
    export = tmp_path / "model.onnx"
    export.write_bytes(export_of(cache).read_bytes())

    def shifted(texts: list[str]) -> Any:
        features = full._model.preprocess(texts)
        features["input_ids"] = features["input_ids"] + 1  # what another tokenizer would give
        return features

    args: dict[str, Any] = {"model_dir": bundled_model_dir(), "max_tokens": 256}
    assert not write_stamp(
        export, precision="float32", preprocess=shifted, worst_cosine=1.0, **args
    )
    assert not stamp_file(export).exists()
    assert write_stamp(
        export, precision="float32", preprocess=full._model.preprocess, worst_cosine=1.0, **args
    )
    assert stamp_file(export).exists()
