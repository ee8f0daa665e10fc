"""bench-freshness (tests/bench/bench_freshness.py) runs on a real stack: a tiny team posts
for 20 s and every sampled event is found by BM25, with a latency from its 202.

The benchmark is what tells whether a team's events are searchable by the next prompt; a
change that broke its probes (an API shape, a table it reads) would otherwise only show as a
run of ten minutes whose figures are all "never found"."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.bench.bench_freshness import TARGETS, main

TINY = ["--seconds", "20", "--rate", "5", "--agents", "3", "--projects", "2",
        "--probe-every", "2", "--probe-timeout", "30"]  # fmt: skip


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_tiny_team_run_finds_every_sampled_event_by_bm25(tmp_path: Path) -> None:
    out = tmp_path / "freshness.json"
    assert main([*TINY, "--out", str(out)]) == 0
    doc = json.loads(out.read_text())

    assert doc["posted"] >= 60  # ~100 asked for: 5 events/s for 20 s
    assert doc["not_stored"] == 0
    probes = [p for p in doc["raw"] if not p["duplicate"]]
    assert len(probes) >= 5 and doc["probes"] == len(probes)
    for probe in probes:
        latency = probe["found_s"].get("bm25")
        assert latency is not None and math.isfinite(latency) and latency > 0, probe
    bm25 = doc["overall"]["bm25"]
    assert bm25["unresolved"] == 0 and bm25["n"] == len(probes)
    assert bm25["p50"] <= bm25["p95"] <= bm25["max"]
    # the other figures are there, whatever this machine made of them
    assert set(doc["overall"]) == set(TARGETS)
    assert [m["minute"] for m in doc["per_minute"]] == [1]
    assert doc["per_minute"][0]["probes"] == len(probes)
