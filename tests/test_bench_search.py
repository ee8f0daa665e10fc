"""``make bench-search``'s stand-in vectors for a million events: unit length, near the model
vectors they are made from, and the same on every run (the figures of two runs compare)."""

from __future__ import annotations

import numpy as np

from tests.bench.bench_search import stand_in_vectors


def test_stand_ins_are_unit_vectors_near_the_model_ones_and_repeatable() -> None:
    rng = np.random.default_rng(1)
    model = rng.normal(size=(500, 384)).astype(np.float32)
    model /= np.linalg.norm(model, axis=1, keepdims=True)
    stand_ins = stand_in_vectors(model, 250_000, seed=7)
    assert stand_ins.shape == (250_000, 384) and stand_ins.dtype == np.float32
    assert np.allclose(np.linalg.norm(stand_ins, axis=1), 1.0, atol=1e-5)
    # each is closest to the model vector it leans on (weight 1), not a random point
    nearest = (stand_ins[:1000] @ model.T).max(axis=1)
    assert nearest.min() > 0.8
    assert np.array_equal(stand_ins, stand_in_vectors(model, 250_000, seed=7))
    assert not np.array_equal(stand_ins, stand_in_vectors(model, 250_000, seed=8))
