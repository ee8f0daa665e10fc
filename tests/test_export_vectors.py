"""``agent-memory export --vectors`` and ``import``: a deployment moved without embedding again.

Two stacks (gateway, recorder, embedder; each its nats-server and database, every part a real
process). Stack A records a project; its dump carries each event's vector. Stack B imports it:
the vectors in B's index are A's, bit for bit, and B's model embedded nothing. A dump whose
vectors come from another vector space (another model, precision or cut) is imported with them
left out, said so, and B's model embeds every event, as without vectors.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import eventually, make_event, scrape, value
from tests.stack import Stack, deployments
from tests.stack import agent_memory as cli

SERVICES = ("gateway", "recorder", "embedder")
PROJECT = "moved"
TEXTS = [
    "We decided to keep Postgres as the system of record for every event.",
    "Why does the consumer ack before the commit?",
    "It should not: acknowledge only after the commit, or a crash loses the event.",
    "Constraint: never store secrets in the event text, the redactor runs first.",
    "The flaky test came from a race in the consumer's ack path.",
    "Fixed: the test is green now, ten runs in a row.",
]


@pytest.fixture
def two_stacks(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stack, Stack]]:
    with deployments(pg_server, tmp_path_factory, ("a", "b"), SERVICES) as (a, b):
        yield a, b


def vectors_of(stack: Stack, project: str) -> dict[str, str]:
    """The event vectors of ``project`` in the stack's index (pgvector), by event id."""
    with psycopg.connect(stack.pg_dsn) as conn:
        rows = conn.execute(
            "SELECT event_ids[1], embedding::text FROM vector_docs"
            " WHERE project_id = %s AND type = 'event'",
            (project,),
        ).fetchall()
    return {r[0]: r[1] for r in rows}


def ready(url: str) -> bool:
    try:
        return plain_http.get(f"{url}/readyz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def model_texts(stack: Stack) -> float:
    """Texts the stack's embedder ran through its model (staged vectors are not); its probe
    port answers once the model is loaded and its consumers run."""
    url = stack.metrics_urls["embedder"]
    eventually(lambda: ready(url), timeout=180, what="the embedder ready")
    return value(scrape(url), "agent_memory_embedding_texts_total")


def staged_left(stack: Stack) -> int:
    with psycopg.connect(stack.pg_dsn) as conn:
        row = conn.execute("SELECT count(*) FROM staged_vectors").fetchone()
    return int(row[0]) if row else -1


def lines(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def elsewhere(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same dump as if from a deployment with another model: another vector space, and
    other event ids and project (so that B stores these events too)."""
    out = []
    for r in records:
        r = dict(r)
        if r["kind"] == "header":
            r["vectors"] = {"space": "another-model/float32/256"}
            r["project_id"] = "moved-again"
        if r["kind"] in ("event", "vector"):
            r["event_id"] = "again-" + r["event_id"]
        if r["kind"] == "event":
            r["project_id"] = "moved-again"
        out.append(r)
    return out


def test_vectors_move_with_the_dump_and_are_not_embedded_again(
    two_stacks: tuple[Stack, Stack], tmp_path: Path
) -> None:
    a, b = two_stacks
    events = [
        make_event(i, project=PROJECT, session=f"s{i // 3}", text=t) for i, t in enumerate(TEXTS)
    ]
    r = plain_http.post(f"{a.gateway_url}/v1/events", json={"events": events}, timeout=10)
    assert r.status_code == 202, r.text
    eventually(lambda: len(vectors_of(a, PROJECT)) == len(TEXTS), timeout=120, what="A embeds")
    from_a = vectors_of(a, PROJECT)

    dump = tmp_path / "moved.jsonl.gz"
    out = cli(a, "export", "--project", PROJECT, "--vectors", "--quiet", "-o", str(dump))
    assert out.returncode == 0, out.stderr
    records = lines(dump)
    assert records[0]["vectors"] == {"space": "all-MiniLM-L6-v2/float32/256"}
    assert sum(1 for x in records if x["kind"] == "vector") == len(TEXTS)
    assert records[-1]["counts"]["vector"] == len(TEXTS)

    # the same space: B takes A's vectors and its model runs for none of them
    assert model_texts(b) == 0
    out = cli(b, "import", str(dump), "--quiet", "--wait-pins", "0")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{len(TEXTS)} vector(s) staged" in out.stdout, out.stdout
    eventually(lambda: len(vectors_of(b, PROJECT)) == len(TEXTS), timeout=120, what="B indexes")
    assert vectors_of(b, PROJECT) == from_a  # bit for bit
    assert model_texts(b) == 0
    assert staged_left(b) == 0  # each staged row taken by the batch that used it

    # another space: the vectors are left out (said so) and B's model embeds every event
    again = tmp_path / "again.jsonl.gz"
    with gzip.open(again, "wt") as f:
        f.writelines(json.dumps(x) + "\n" for x in elsewhere(records))
    out = cli(b, "import", str(again), "--quiet", "--wait-pins", "0")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "vectors left out: the dump's vectors are of another-model/float32/256" in out.stdout
    eventually(
        lambda: len(vectors_of(b, "moved-again")) == len(TEXTS), timeout=120, what="B embeds"
    )
    assert model_texts(b) == len(TEXTS)
    assert staged_left(b) == 0


def test_a_dump_with_a_broken_vector_is_refused_before_anything_is_imported(
    tmp_path: Path,
) -> None:
    header = {"kind": "header", "format": "agent-memory-export", "version": 3, "tenant": "default"}
    vector = {"kind": "vector", "event_id": "e1", "text_sha": "ab" * 32, "vector": "not base64!"}
    end = {"kind": "end", "counts": {"vector": 1}}
    dump = tmp_path / "broken.jsonl.gz"
    with gzip.open(dump, "wt") as f:
        f.writelines(json.dumps(x) + "\n" for x in (header, vector, end))
    out = subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "import", str(dump)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert "line 2: not a vector record" in out.stderr
