"""``make bench-embed``: the embedding model's own rate, by runtime and run size, one thread.

Why: the embedder is the pipeline's slowest stage, so its model's rate is how soon captured
events become searchable. This times all-MiniLM-L6-v2 as the services load it
(``MiniLMEmbedder``), through torch and through the ONNX export, for several texts-per-run
sizes (``AGENT_MEMORY_EMBEDDING_BATCH_SIZE``), in the embedder's fetch batches (128 texts a
call), on two kinds of text: bench-scale's realistic events (coding sessions and conversation,
50-2,000 characters, each with its previous turn, as the embedder sees them) and LoCoMo turns
(short chat, when ``shared/bench-data`` has them). Every configuration runs on the same texts
in one process, so the ratios are of one run. It also prints how far the ONNX vectors are from
torch's (they must be the same space: the corpus was embedded by one, queries by the other),
and the same for the export with 8-bit weights (``AGENT_MEMORY_EMBEDDING_PRECISION=int8``),
which trades a hair of the vectors for speed, and for torch in bfloat16
(``AGENT_MEMORY_EMBEDDING_BFLOAT16``, fast where the CPU has AMX tiles).
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agent_memory_embedder.settings import EmbedderOptions
from agent_memory_retrieval.adapters.minilm import MAX_SEQ_LENGTH, RUN_FLOAT32, MiniLMEmbedder
from tests.bench.bench_scale import embedding_texts, event_stream, load_pools
from tests.bench.report import stop_on_sigterm, table
from tests.bench.stack import shared_data

LOCOMO = shared_data("locomo/locomo10.json")
BEFORE = ("torch", 64)  # the services' setting until 2026-11-26: the ratios' baseline
SERVICE_BATCH = RUN_FLOAT32  # the float32 runtimes' texts per run in the services


def event_texts(count: int, seed: int) -> list[str]:
    return embedding_texts(list(itertools.islice(event_stream(seed, load_pools()), count)))


def locomo_texts(count: int) -> list[str]:
    if not LOCOMO.is_file():
        return []
    data = json.loads(LOCOMO.read_text())
    turns = (
        turn["text"]
        for conversation in data
        for key, session in conversation["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    )
    return list(itertools.islice(turns, count))


def rate(embedder: MiniLMEmbedder, texts: Sequence[str], fetch: int) -> tuple[float, np.ndarray]:
    """Texts/s over ``texts`` in calls of ``fetch`` texts, after one untimed call."""
    embedder.embed(texts[:fetch])
    vectors: list[list[float]] = []
    start = time.perf_counter()
    for i in range(0, len(texts), fetch):
        vectors.extend(embedder.embed(texts[i : i + fetch]))
    return len(texts) / (time.perf_counter() - start), np.asarray(vectors, dtype=np.float32)


def measure(
    corpora: dict[str, list[str]],
    batches: Sequence[int],
    fetch: int,
    cache: Path,
    cuts: Sequence[int] = (),
) -> list[dict[str, object]]:
    """Every configuration on every corpus. ``cuts``: shorter ``max_tokens`` to try too, on
    the ONNX export at the services' texts per run (their vectors are compared with torch's
    full-length ones, so ``min_cosine`` says how much the cut moved a vector)."""
    rows: list[dict[str, object]] = []
    configs = [("torch", b, MAX_SEQ_LENGTH) for b in sorted({BEFORE[1], *batches}, reverse=True)]
    configs += [("onnx", b, MAX_SEQ_LENGTH) for b in sorted(batches, reverse=True)]
    configs += [("int8", b, MAX_SEQ_LENGTH) for b in sorted(batches, reverse=True)]
    configs += [("bf16", b, MAX_SEQ_LENGTH) for b in sorted(batches, reverse=True)]
    configs += [(r, SERVICE_BATCH, cut) for cut in cuts for r in ("onnx", "int8")]
    for name, texts in corpora.items():
        base_rate = 0.0
        reference: np.ndarray | None = None
        for runtime, batch, cut in configs:
            embedder = MiniLMEmbedder.load(
                batch_size=batch,
                threads=1,
                onnx_cache=cache if runtime != "torch" else None,
                precision="int8" if runtime == "int8" else "float32",
                max_tokens=cut,
                bfloat16=runtime == "bf16",
            )
            if runtime != "torch" and not embedder.onnx:
                raise SystemExit("the ONNX export could not be made or used: see the log above")
            per_s, vectors = rate(embedder, texts, fetch)
            if reference is None:
                reference = vectors
            row: dict[str, object] = {
                "texts": name,
                "runtime": runtime,
                "batch": batch,
                "max_tokens": cut,
                "texts_per_s": round(per_s, 1),
                "max_abs_diff": float(np.abs(vectors - reference).max()),
                "min_cosine": float((vectors * reference).sum(axis=1).min()),
            }
            if (runtime, batch) == BEFORE:
                base_rate = per_s
            row["x_before"] = round(per_s / base_rate, 2)
            rows.append(row)
            print(
                f"  {name:>7}  {runtime:>5}  runs of {batch:>3}  cut at {cut:>3}"
                f"  {per_s:7.1f} texts/s",
                flush=True,
            )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=768, help="bench-scale events to embed")
    parser.add_argument("--turns", type=int, default=1024, help="LoCoMo turns to embed")
    parser.add_argument("--batches", default="32,16,8", help="texts per run to try")
    parser.add_argument("--cuts", default="128", help="shorter max_tokens to try too (empty: none)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, help="write the rows as JSON here too")
    args = parser.parse_args(argv)
    stop_on_sigterm()
    batches = [int(b) for b in args.batches.split(",") if b.strip()]
    if not batches or min(batches) < 1:
        parser.error("--batches: positive integers, comma separated")
    cuts = [int(c) for c in args.cuts.split(",") if c.strip()]
    if any(not 16 <= c < MAX_SEQ_LENGTH for c in cuts):
        parser.error(f"--cuts: word pieces from 16 to {MAX_SEQ_LENGTH - 1}, comma separated")
    corpora = {"events": event_texts(args.events, args.seed)}
    if turns := locomo_texts(args.turns):
        corpora["locomo"] = turns
    fetch = EmbedderOptions().batch_size
    print(f"texts: {', '.join(f'{k} {len(v):,}' for k, v in corpora.items())}; calls of {fetch}")
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as cache:
        rows = measure(corpora, batches, fetch, Path(cache), cuts)
    print()
    header = [
        "texts",
        "runtime",
        "texts/run",
        "cut",
        "texts/s",
        "x torch/64",
        "max |diff|",
        "min cos",
    ]
    cells = [
        [
            str(r["texts"]),
            str(r["runtime"]),
            str(r["batch"]),
            str(r["max_tokens"]),
            f"{r['texts_per_s']:.1f}",
            f"{r['x_before']:.2f}",
            f"{r['max_abs_diff']:.1e}",
            f"{r['min_cosine']:.4f}",
        ]
        for r in rows
    ]
    print(table([header, *cells], [False, False, True, True, True, True, True, True]))
    print(
        "max |diff| and min cos: of each vector against torch's, runs of 64, "
        f"cut at {MAX_SEQ_LENGTH}"
    )
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
