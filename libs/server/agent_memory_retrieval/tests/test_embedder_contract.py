"""The ``Embedder`` contract on all-MiniLM-L6-v2 (the only adapter), from the installed wheel."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from agent_memory_retrieval.adapters.minilm import MiniLMEmbedder
from agent_memory_retrieval.ports import EMBEDDING_DIM, Embedder


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def corpus_vector(embedder: MiniLMEmbedder, text: str) -> list[float]:
    """The vector a document gets: through ``encode``, as the embedder service batches it."""
    vector: list[float] = embedder._model.encode(
        [text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )[0].tolist()
    return vector


def test_batch_of_unit_vectors_matching_single_embeddings(embedder: MiniLMEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == EMBEDDING_DIM
    texts = [f"note {i}: the recorder writes events to postgres" for i in range(40)] + [""]

    vectors = embedder.embed(texts)

    assert len(vectors) == len(texts)
    for vec in vectors:
        assert len(vec) == EMBEDDING_DIM
        assert math.isclose(math.sqrt(sum(x * x for x in vec)), 1.0, abs_tol=1e-4)
    alone = embedder.embed([texts[7]])[0]
    assert cosine(alone, vectors[7]) > 0.999  # batching does not change the vector
    assert embedder.embed([]) == []


def test_similar_meaning_is_nearer(embedder: MiniLMEmbedder) -> None:
    query, near, far = embedder.embed(
        [
            "which database stores the events?",
            "we keep the event log in a postgres table",
            "my grandmother bakes apple pie on sundays",
        ]
    )
    assert cosine(query, near) > cosine(query, far) + 0.2


def test_a_query_embedding_is_cheap(embedder: MiniLMEmbedder) -> None:
    embedder.embed(["warm up"])
    started = time.perf_counter()
    for i in range(5):
        embedder.embed([f"what did we decide about retries, take {i}?"])
    per_query = (time.perf_counter() - started) / 5
    assert per_query < 0.25, f"{per_query * 1000:.0f} ms per query embedding"


def test_one_text_skips_batching_but_not_a_bit_of_the_vector(embedder: MiniLMEmbedder) -> None:
    """A query takes the direct path; the corpus was embedded through ``encode``: the two must
    agree exactly, or queries and documents would drift apart."""
    long_text = " ".join(f"word{i}" for i in range(400))  # beyond the 256 word pieces
    for text in ("retry backoff in the cart service", "", "Zürich naïve café 東京 ✓", long_text):
        reference = corpus_vector(embedder, text)
        assert embedder.embed([text]) == [reference], text


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(scope="module")
def onnx_embedder(onnx_cache: Path) -> MiniLMEmbedder:
    return MiniLMEmbedder.load(onnx_cache=onnx_cache)


PROBES = (
    "retry backoff in the cart service",
    "",
    "Zürich naïve café 東京 ✓",
    " ".join(f"word{i}" for i in range(400)),  # beyond the 256 word pieces
    "What did Caroline research? " * 3,
)


def test_one_text_through_onnx_is_the_corpus_vector_up_to_rounding(
    onnx_embedder: MiniLMEmbedder,
) -> None:
    """Queries through ONNX, a corpus embedded by torch before: they must stay comparable."""
    assert onnx_embedder.onnx
    for text in PROBES:
        reference = corpus_vector(onnx_embedder, text)
        (vec,) = onnx_embedder.embed([text])
        assert len(vec) == EMBEDDING_DIM
        assert cosine(vec, reference) > 0.99999, text
        assert max(abs(a - b) for a, b in zip(vec, reference, strict=True)) < 1e-5, text


def test_a_batch_through_onnx_is_torchs_in_the_callers_order(
    onnx_embedder: MiniLMEmbedder,
) -> None:
    """The embedder service's batches: run longest first in runs of the batch size, padded
    within a run, and handed back in the order asked, each the vector torch gives it (so a
    store embedded before, by torch, and one embedded now are one space)."""
    texts = [*PROBES, "short", "a somewhat longer note about the retry policy " * 4, "x"] * 3
    assert onnx_embedder.onnx and onnx_embedder._batch_size < len(texts)  # several runs

    vectors = onnx_embedder.embed(texts)

    assert len(vectors) == len(texts)
    for text, vec in zip(texts, vectors, strict=True):
        reference = corpus_vector(onnx_embedder, text)
        assert max(abs(a - b) for a, b in zip(vec, reference, strict=True)) < 1e-5, text


def test_an_export_that_differs_in_a_batch_is_not_used(
    onnx_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load-time check covers batches (padding, order), not only one text: an encoder
    whose batches come back in the wrong order leaves torch to answer."""
    from agent_memory_retrieval.adapters.onnx_encoder import OnnxEncoder

    real = OnnxEncoder.embed_many

    def reversed_order(
        self: OnnxEncoder, texts: Sequence[str], batch: int
    ) -> tuple[list[list[float]], int]:
        vectors, pieces = real(self, texts, batch)
        return vectors[::-1], pieces

    monkeypatch.setattr(OnnxEncoder, "embed_many", reversed_order)
    embedder = MiniLMEmbedder.load(onnx_cache=onnx_cache)
    assert not embedder.onnx
    texts = ["retry backoff in the cart service", "which database stores the events?"]
    assert embedder.embed(texts)[0] == pytest.approx(corpus_vector(embedder, texts[0]), abs=1e-6)


def test_the_onnx_export_is_made_once_and_a_broken_one_is_made_again(
    onnx_embedder: MiniLMEmbedder, onnx_cache: Path
) -> None:
    (path,) = onnx_cache.glob("minilm-????????????????.onnx")  # the float32 one
    assert not list(onnx_cache.glob("*.tmp"))  # written atomically
    made = path.stat().st_mtime_ns
    again = MiniLMEmbedder.load(onnx_cache=onnx_cache)
    assert again.onnx and path.stat().st_mtime_ns == made  # reused, not exported again

    path.write_bytes(b"half a file")  # a crash while copying, a disk that filled up
    repaired = MiniLMEmbedder.load(onnx_cache=onnx_cache)
    assert repaired.onnx
    assert path.stat().st_size > 1_000_000
    query = "which database stores the events?"
    assert cosine(repaired.embed([query])[0], onnx_embedder.embed([query])[0]) > 0.99999


def test_without_onnxruntime_torch_embeds_the_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if not installed
    embedder = MiniLMEmbedder.load(onnx_cache=tmp_path)
    assert not embedder.onnx
    text = "retry backoff in the cart service"
    assert embedder.embed([text]) == [corpus_vector(embedder, text)]


def _model_counts(mode: str) -> tuple[float, float, float]:
    from prometheus_client import REGISTRY

    def get(name: str) -> float:
        return REGISTRY.get_sample_value(name, {"mode": mode}) or 0.0

    return (
        get("agent_memory_embedding_texts_total"),
        get("agent_memory_embedding_pieces_total"),
        get("agent_memory_embedding_seconds_count"),
    )


@pytest.mark.parametrize("path", ["torch", "onnx"])
def test_every_call_is_counted_in_texts_pieces_and_time(
    path: str, embedder: MiniLMEmbedder, onnx_embedder: MiniLMEmbedder
) -> None:
    """What bench-scale and the dashboard read to tell the model's time from the pipeline's."""
    model = onnx_embedder if path == "onnx" else embedder
    long_text = " ".join(f"word{i}" for i in range(400))
    texts = ["retry backoff in the cart service", long_text, ""]
    batch0, one0 = _model_counts("batch"), _model_counts("one")
    model.embed(texts)
    model.embed(["what did we decide?"])
    batch1, one1 = _model_counts("batch"), _model_counts("one")
    assert batch1[0] - batch0[0] == 3
    # the long text is cut at 256 pieces (specials included); the empty one is [CLS] [SEP]
    assert batch1[1] - batch0[1] == model.pieces(texts[:1]) + 256 + 2
    assert batch1[2] - batch0[2] == 1
    assert one1[0] - one0[0] == 1
    assert one1[1] - one0[1] == model.pieces(["what did we decide?"]) == 7
    assert one1[2] - one0[2] == 1


@pytest.fixture(scope="module")
def int8_embedder(onnx_cache: Path) -> MiniLMEmbedder:
    return MiniLMEmbedder.load(onnx_cache=onnx_cache, precision="int8")


def test_int8_vectors_are_torchs_up_to_a_hair_and_rank_the_same(
    int8_embedder: MiniLMEmbedder, onnx_cache: Path
) -> None:
    """``AGENT_MEMORY_EMBEDDING_PRECISION=int8``: its own file beside the float export, vectors
    close enough to torch's that a near text stays nearer than a far one, in the callers'
    order through batches."""
    assert int8_embedder.onnx and int8_embedder.precision == "int8"
    assert len(list(onnx_cache.glob("minilm-*-int8.onnx"))) == 1
    assert not list(onnx_cache.glob("*.tmp"))
    texts = [*PROBES, "short", "a somewhat longer note about the retry policy " * 4, "x"] * 2
    for text, vec in zip(texts, int8_embedder.embed(texts), strict=True):
        assert len(vec) == EMBEDDING_DIM
        assert math.isclose(math.sqrt(sum(x * x for x in vec)), 1.0, abs_tol=1e-4)
        assert 0.95 < cosine(vec, corpus_vector(int8_embedder, text)) < 0.99999, text
    query, near, far = int8_embedder.embed(
        [
            "which database stores the events?",
            "we keep the event log in a postgres table",
            "my grandmother bakes apple pie on sundays",
        ]
    )
    assert cosine(query, near) > cosine(query, far) + 0.2


def test_a_broken_int8_file_is_made_again(int8_embedder: MiniLMEmbedder, onnx_cache: Path) -> None:
    (path,) = onnx_cache.glob("minilm-*-int8.onnx")
    path.write_bytes(b"half a file")
    repaired = MiniLMEmbedder.load(onnx_cache=onnx_cache, precision="int8")
    assert repaired.onnx and repaired.precision == "int8"
    assert path.stat().st_size > 1_000_000
    assert not list(onnx_cache.glob("*.tmp"))
    query = "which database stores the events?"
    assert cosine(repaired.embed([query])[0], int8_embedder.embed([query])[0]) > 0.99999


def test_int8_is_refused_without_the_onnx_export() -> None:
    from pydantic import ValidationError

    from agent_memory_common.core.errors import ConfigurationError
    from agent_memory_retrieval.settings import RetrievalSettings

    with pytest.raises(ConfigurationError, match="ONNX export"):
        MiniLMEmbedder.load(precision="int8")
    with pytest.raises(ValidationError, match="embedding_precision=int8"):
        RetrievalSettings(embedding_precision="int8", embedding_onnx=False)
    with pytest.raises(ValidationError, match="embedding_precision"):
        RetrievalSettings(embedding_precision="int4")


def test_max_tokens_cuts_every_text_at_that_many_pieces(onnx_cache: Path) -> None:
    """``AGENT_MEMORY_EMBEDDING_MAX_TOKENS``: two texts that differ only after the cut get one
    vector, through the ONNX export and through torch, alone and in a batch; the factory
    passes the setting on."""
    from pydantic import ValidationError

    from agent_memory_retrieval.adapters.factory import load_embedder
    from agent_memory_retrieval.settings import RetrievalSettings

    head = "we keep the event log in a postgres table, one row per event, " * 3
    texts = [head + "and the retries back off", head + "my grandmother bakes apple pie"]
    short = load_embedder(RetrievalSettings(embedding_max_tokens=16, model_cache_dir=onnx_cache))
    assert isinstance(short, MiniLMEmbedder) and short.onnx
    torch_short = MiniLMEmbedder.load(max_tokens=16)
    for model in (short, torch_short):
        assert model.pieces(texts) == 2 * 16
        alone = [model.embed([t])[0] for t in texts]
        batch = model.embed(texts)
        assert cosine(alone[0], alone[1]) > 0.99999
        assert cosine(batch[0], batch[1]) > 0.99999
        assert cosine(alone[0], batch[0]) > 0.999
    full = load_embedder(RetrievalSettings(model_cache_dir=onnx_cache))
    assert full.embed(texts[:1])  # warm
    far = full.embed(texts)
    assert cosine(far[0], far[1]) < 0.99  # the tails are read at the default length
    for bad in (8, 1024):
        with pytest.raises(ValidationError, match="embedding_max_tokens"):
            RetrievalSettings(embedding_max_tokens=bad)


def test_a_question_asked_again_is_not_embedded_again(onnx_embedder: MiniLMEmbedder) -> None:
    """The same word pieces (the model is uncased) give the vector kept from the first time,
    without running the model; another question runs it; a caller cannot spoil the kept one."""
    first = onnx_embedder.embed(["Which billing retries did we settle on?"])[0]
    texts, _, seconds = _model_counts("one")
    again = onnx_embedder.embed(["which billing retries did we settle on?"])[0]
    assert again == first
    assert _model_counts("one")[0] == texts and _model_counts("one")[2] == seconds
    again[0] += 1.0
    assert onnx_embedder.embed(["which billing retries did we settle on?"])[0] == first
    onnx_embedder.embed(["which billing retries did we settle on"])  # no "?": other pieces
    assert _model_counts("one")[0] == texts + 1


def test_bfloat16_batches_are_float32s_up_to_a_hair(onnx_cache: Path) -> None:
    """``AGENT_MEMORY_EMBEDDING_BFLOAT16``: batches go through torch in bfloat16 (the ONNX
    export is not run for them), each vector within a hair of float32's and in the callers'
    order; one text still takes the float32 ONNX path, bit for bit the export's vector."""
    bf16 = MiniLMEmbedder.load(onnx_cache=onnx_cache, bfloat16=True)
    assert bf16.bfloat16 and bf16.onnx and bf16.precision == "float32"
    texts = [*PROBES, "short", "a somewhat longer note about the retry policy " * 4] * 2
    before = _model_counts("batch")
    vectors = bf16.embed(texts)
    assert _model_counts("batch")[0] - before[0] == len(texts)
    for text, vec in zip(texts, vectors, strict=True):
        assert len(vec) == EMBEDDING_DIM
        assert math.isclose(math.sqrt(sum(x * x for x in vec)), 1.0, abs_tol=1e-3)
        exact = corpus_vector(bf16, text)
        assert cosine(vec, exact) > 0.999, text
    assert vectors[0] != corpus_vector(bf16, texts[0])  # bfloat16 did run: not float32's bits
    float_onnx = MiniLMEmbedder.load(onnx_cache=onnx_cache)
    assert bf16.embed([PROBES[0]]) == float_onnx.embed([PROBES[0]])


def test_the_factory_turns_bfloat16_on_where_the_cpu_has_amx(onnx_cache: Path) -> None:
    """auto: on with AMX tiles at float32, never for int8 (its own choice of speed); on and
    off whatever the CPU; anything else is refused by name."""
    from pydantic import ValidationError

    from agent_memory_retrieval.adapters.factory import load_embedder
    from agent_memory_retrieval.adapters.minilm import amx_tiles
    from agent_memory_retrieval.adapters.onnx_only import OnnxOnlyEmbedder
    from agent_memory_retrieval.settings import RetrievalSettings

    def loaded(**kw: str) -> MiniLMEmbedder | OnnxOnlyEmbedder:
        model = load_embedder(RetrievalSettings(model_cache_dir=onnx_cache, **kw))  # type: ignore[arg-type]
        # a stamped export loads without torch (test_onnx_only), never with bfloat16 on
        assert isinstance(model, MiniLMEmbedder | OnnxOnlyEmbedder)
        return model

    assert loaded().bfloat16 is amx_tiles()
    on, off = loaded(embedding_bfloat16="on"), loaded(embedding_bfloat16="off")
    assert on.bfloat16 and not off.bfloat16
    # unset, the texts per run are each runtime's fastest; a set size is kept
    assert (on._batch_size, off._batch_size) == (16, 8)
    assert loaded(embedding_bfloat16="on", embedding_batch_size="32")._batch_size == 32
    assert not loaded(embedding_precision="int8").bfloat16
    with pytest.raises(ValidationError, match="embedding_bfloat16"):
        RetrievalSettings(embedding_bfloat16="yes")  # type: ignore[arg-type]
