"""``make bench-embed`` on a handful of texts: every configuration runs, and the ONNX vectors
are torch's up to float rounding (the claim that lets queries and batches leave torch), the
8-bit and bfloat16 ones within a hair."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench import bench_embed


def test_every_runtime_and_run_size_is_timed_on_the_same_texts(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"

    assert (
        bench_embed.main(["--events", "12", "--turns", "12", "--batches", "4", "--out", str(out)])
        == 0
    )

    rows = json.loads(out.read_text())
    kinds = {r["texts"] for r in rows}
    assert "events" in kinds
    for kind in kinds:
        configs = [(r["runtime"], r["batch"], r["max_tokens"]) for r in rows if r["texts"] == kind]
        assert configs == [
            ("torch", 64, 256),
            ("torch", 4, 256),
            ("onnx", 4, 256),
            ("int8", 4, 256),
            ("bf16", 4, 256),
            ("onnx", 8, 128),  # the default --cuts, at the services' texts per run
            ("int8", 8, 128),
        ]
    for r in rows:
        assert r["texts_per_s"] > 0
        if r["max_tokens"] == 128:
            if r["texts"] == "events":  # most events are longer: the cut moves their vectors
                assert r["min_cosine"] < 0.99, r
            continue
        if r["runtime"] == "int8":
            assert 0.95 < r["min_cosine"] < 0.99999, r  # near, and really quantized
            continue
        if r["runtime"] == "bf16":
            assert r["min_cosine"] > 0.999 and r["max_abs_diff"] > 1e-5, r  # a hair, not 0
            continue
        assert r["max_abs_diff"] < 1e-5, r  # one space, whatever the runtime and run size
        assert r["min_cosine"] > 0.99999, r
        if (r["runtime"], r["batch"]) == ("torch", 64):
            assert r["x_before"] == 1.0
