"""What every benchmark script shares: percentiles, plain-text tables, readiness, SIGTERM.

The scripts run as modules from the repository root (``python -m tests.bench.bench_ingest``,
as the Makefile does), so that they can import this one.
"""

from __future__ import annotations

import math
import signal
import time
import types
from collections.abc import Sequence
from typing import Any

import httpx

from tests import plain_http


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile: always a measured value (a latency some request had)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(p / 100.0 * len(ordered))))
    return ordered[rank - 1]


def interpolated(values: Sequence[float], p: float) -> float:
    """Linear-interpolation percentile (numpy's default); NaN for no values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def table(rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """``rows[0]`` is the header, underlined; ``right[i]``: column i is right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            c.rjust(w) if right[i] else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  " + "   ".join(cells).rstrip())
        if n == 0:
            lines.append("  " + "   ".join("-" * w for w in widths))
    return "\n".join(lines)


def http_ok(url: str, timeout: float = 1.0) -> bool:
    """A readiness probe: 200, or False for anything else, a refusal included."""
    try:
        return plain_http.get(url, timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def timed_search(client: httpx.Client, url: str, payload: bytes) -> tuple[float, dict[str, Any]]:
    """One ``POST /v1/search`` of a JSON body: its wall time in ms and its answer (RuntimeError
    unless 200)."""
    t0 = time.perf_counter()
    r = client.post(
        f"{url}/v1/search", content=payload, headers={"content-type": "application/json"}
    )
    ms = (time.perf_counter() - t0) * 1000
    if r.status_code != 200:
        raise RuntimeError(f"search at {url} failed: {r.status_code} {r.text[:300]}")
    answer: dict[str, Any] = r.json()
    return ms, answer


def _interrupt(signum: int, _frame: types.FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def stop_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so that every started server is stopped and cleaned up."""
    signal.signal(signal.SIGTERM, _interrupt)
