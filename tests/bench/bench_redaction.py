"""Secret redaction: agent-memory's redactor against Yelp's detect-secrets on the same corpus.

Run from the repository root: ``python -m tests.bench.bench_redaction``. It needs
``detect-secrets`` (1.5) in the environment, which is not a project dependency:

    .uv-bootstrap/bin/uv pip install --python .venv/bin/python 'detect-secrets==1.5.0'

Without it the script says so and exits with status 2. ``--ours-only`` skips it.

What it prints:

1. Recall and precision of each redactor over the labelled corpus
   (``libs/server/agent_memory_common/tests/fixtures/secrets_recall_corpus.jsonl``; scoring rules in
   ``tests/redaction_scoring.py``), with CPU time per text.
2. CPU time per 100-event batch of ~300-byte clean texts (prose, pytest output, code, JSON tool
   output, access-log lines), the gateway's workload: the median over the batches.

detect-secrets reports secret *values* per line, not spans. It is run as an ad-hoc scanner
would use it: ``scan_line`` on each line with its default plugins and filters
(``default_settings``), and every value it reports is replaced in that line by a placeholder.

A measurement, not a test: the exit code is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from agent_memory_common.redaction.engine import Redactor
from tests.redaction_scoring import load_corpus, score, table

DS_PLACEHOLDER = "[REDACTED:detect_secrets]"

_CLEAN_PARTS = (
    "The test suite ran 42 tests in 3.2s and all passed; coverage went from 81% to 84%. ",
    "def load_config(path: str) -> dict[str, object]:\n    with open(path) as f:\n"
    "        return json.load(f)\n",
    '{"tool": "bash", "exit_code": 0, "duration_ms": 128, "stdout": "ok", '
    '"cwd": "/home/dev/project"}\n',
    '127.0.0.1 - - [25/Nov/2026:16:23:53 +0000] "GET /api/v1/events?limit=50 HTTP/1.1" 200 5120\n',
    "FAILED tests/test_search.py::test_ranking - AssertionError: expected 3 results, got 2\n",
    "Refactored the session store to use a connection pool; the migration adds an index on "
    "(agent_id, ts). ",
    "git commit -m 'fix: retry on transient NATS errors' && git push origin feature/retries\n",
    "docker compose up -d postgres nats && pytest -q -x services/recorder/tests\n",
)


def clean_batches(n_batches: int, seed: int = 7) -> list[list[str]]:
    rng = random.Random(seed)

    def text() -> str:
        s = ""
        while len(s) < 300:
            s += rng.choice(_CLEAN_PARTS)
        return s[:300]

    return [[text() for _ in range(100)] for _ in range(n_batches)]


def batch_ms(redact: Callable[[str], object], batches: list[list[str]], rounds: int) -> float:
    """Median CPU milliseconds per batch."""
    for text in batches[0]:
        redact(text)
    times = []
    for _ in range(rounds):
        for batch in batches:
            start = time.thread_time_ns()
            for text in batch:
                redact(text)
            times.append(time.thread_time_ns() - start)
    return statistics.median(times) / 1e6


@contextlib.contextmanager
def detect_secrets_redactor() -> Iterator[Callable[[str], str]]:
    scan: Any = importlib.import_module("detect_secrets.core.scan")
    settings: Any = importlib.import_module("detect_secrets.settings")

    with settings.default_settings():
        # In ad-hoc mode the entropy plugins report every candidate string and leave their
        # limit to the caller (the CLI prints "True/False (entropy)"), so apply it here.
        limits = {p.secret_type: p for p in settings.get_plugins() if hasattr(p, "entropy_limit")}

        def found(line: str) -> set[str]:
            values = set()
            for secret in scan.scan_line(line):
                value = secret.secret_value
                plugin = limits.get(secret.type)
                if not value or (
                    plugin is not None
                    and plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit
                ):
                    continue
                values.add(value)
            return values

        def redact(text: str) -> str:
            out = []
            for line in text.splitlines(keepends=True):
                body = line.rstrip("\r\n")
                values = found(body)
                if values:
                    alternatives = sorted(values, key=len, reverse=True)
                    pattern = "|".join(re.escape(v) for v in alternatives)
                    body = re.sub(pattern, DS_PLACEHOLDER, body)
                out.append(body + line[len(line.rstrip("\r\n")) :])
            return "".join(out)

        yield redact


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours-only", action="store_true", help="skip detect-secrets")
    parser.add_argument("--batches", type=int, default=50, help="clean batches to time")
    parser.add_argument("--show", action="store_true", help="list the ids of every miss")
    args = parser.parse_args()

    try:
        ds_version = None if args.ours_only else importlib.metadata.version("detect-secrets")
    except importlib.metadata.PackageNotFoundError:
        print(
            "detect-secrets is not installed, so there is nothing to compare with. Install it\n"
            "into this environment (it is not a project dependency):\n"
            "    .uv-bootstrap/bin/uv pip install --python .venv/bin/python "
            "'detect-secrets==1.5.0'\n"
            "or run with --ours-only.",
            file=sys.stderr,
        )
        return 2

    cases = load_corpus()
    redactor = Redactor()
    ours_name = "agent-memory"
    scores = [score(ours_name, lambda t: redactor.redact(t)[0], cases)]
    batches = clean_batches(args.batches)
    timing = [(ours_name, batch_ms(redactor.redact, batches, rounds=8))]
    if ds_version is not None:
        name = f"detect-secrets {ds_version}"
        with detect_secrets_redactor() as ds_redact:
            scores.append(score(name, ds_redact, cases))
            timing.append((name, batch_ms(ds_redact, batches[:3], rounds=1)))

    n_secrets = sum(len(c.secrets) for c in cases if c.category == "secret")
    n_look = sum(1 for c in cases if c.category == "lookalike")
    print(f"corpus: {n_secrets} secrets in {len(cases) - n_look} texts, {n_look} look-alikes\n")
    print(table(scores))
    print("\n| redactor | CPU ms per 100 clean ~300-byte events (median) |\n| --- | --- |")
    for name, ms in timing:
        print(f"| {name} | {ms:.2f} |")
    for s in scores:
        print(
            f"\n{s.name}: {len(s.missed)} missed, {len(s.changed)} look-alikes changed, "
            f"{len(s.overreached)} over-redacted"
        )
        if args.show:
            for label, ids in (
                ("missed", s.missed),
                ("changed", s.changed),
                ("over-redacted", s.overreached),
            ):
                for i in ids:
                    print(f"  {label}: {i}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
