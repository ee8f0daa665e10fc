"""The ``Embedder`` contract on all-MiniLM-L6-v2 (the only adapter), from the installed wheel."""

from __future__ import annotations

import math
import time

from agent_memory_retrieval.minilm import MiniLMEmbedder
from agent_memory_retrieval.ports import EMBEDDING_DIM, Embedder


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


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
        reference = embedder._model.encode(
            [text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )[0].tolist()
        assert embedder.embed([text]) == [reference], text
