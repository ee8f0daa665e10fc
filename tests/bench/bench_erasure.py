"""Erasure benchmark (issue 15 item 6, the erasure half): one session, and one whole project of
100,000 events, erased and verified; wall time and when each store's participant reported.

Run by ``make bench-erasure``. Self-contained: its own nats-server and Postgres in a temporary
folder, the services as real OS processes (recorder, segmenter, summarizer, bm25-indexer,
query). For speed the input is **seeded, not ingested**: the events are written straight into
``events`` with COPY (as ``bench_toc`` does), then one ``mem.recorded`` message per session
(its last event) nudges the segmenter, which segments each whole session from the stored
events; the summarizer builds the TOC from those segments and the bm25-indexer indexes the TOC
nodes. So segments, segment versions, TOC node versions at every level, grips and BM25 node
documents are real; per-event BM25 documents and stream messages exist only for the nudges.
The embedder is not started (loading its model takes minutes on a shared machine): it does not
register as a participant, and the verifier still checks ``vector_docs`` in Postgres.

Targets (issue 15): a session erased and verified in under 5 s; a 100,000-event project in
under 2 minutes. A measurement, not a test: the exit code is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import nats
import orjson
import psycopg

from agent_memory_common.bus.streams import ensure_pipeline
from agent_memory_common.contracts.subjects import msg_id, recorded_subject
from agent_memory_common.core.settings import CommonSettings
from tests.bench.bench_toc import Stack, machine_info, sentence
from tests.bench.report import http_ok, stop_on_sigterm, table

TENANT = "default"
START = datetime(2026, 3, 2, tzinfo=UTC)


def seed(dsn: str, project: str, events: int, per_session: int, rng: random.Random) -> list[bytes]:
    """Events straight into the table; returns one recorded message per session (its last)."""
    nudges: list[bytes] = []
    sessions = max(1, events // per_session)
    with (
        psycopg.connect(dsn) as conn,
        conn.cursor() as cur,
        cur.copy(
            "COPY events (tenant, event_id, ts, project_id, agent_id, session_id, role, type, "
            "text, metadata, received_at) FROM STDIN"
        ) as copy,
    ):
        n = 0
        for s in range(sessions):
            count = per_session if s < sessions - 1 else events - n
            start = START + timedelta(hours=6 * s)
            for i in range(count):
                ts = start + timedelta(seconds=20 * i)
                row = {
                    "tenant": TENANT,
                    "event_id": f"{project}-{n:07d}",
                    "ts": ts,
                    "project_id": project,
                    "agent_id": "claude-code",
                    "session_id": f"{project}-s{s:04d}",
                    "role": "user" if i % 2 == 0 else "assistant",
                    "type": "message",
                    "text": " ".join(sentence(rng) for _ in range(rng.randint(1, 3))),
                    "metadata": "{}",
                    "received_at": ts,
                }
                copy.write_row(tuple(row.values()))
                n += 1
            nudges.append(
                orjson.dumps({**row, "user_id": None, "metadata": {}, "ts": ts, "received_at": ts})
            )
    return nudges


async def nudge(nats_url: str, messages: list[bytes]) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream(timeout=30)
        await ensure_pipeline(js, CommonSettings())
        for data in messages:
            d = orjson.loads(data)
            await js.publish(
                recorded_subject(d["tenant"], d["project_id"]),
                data,
                headers={"Nats-Msg-Id": msg_id(d["tenant"], d["event_id"])},
            )
    finally:
        await nc.close()


def _one(dsn: str, sql: str, *args: Any) -> Any:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(sql, args).fetchone()
    return row[0] if row else None


def settled(dsn: str) -> tuple[int, int]:
    """(closed segments, segments whose node summarizes their current version)."""
    closed = _one(dsn, "SELECT count(*) FROM segments WHERE status = 'closed'")
    done = _one(
        dsn,
        "SELECT count(*) FROM segments s JOIN toc_nodes n ON n.tenant = s.tenant"
        " AND n.node_id = 'segment:' || s.segment_id AND n.source_version = s.version"
        " WHERE s.status = 'closed'",
    )
    return int(closed or 0), int(done or 0)


def wait_built(dsn: str, sessions: int, timeout: float) -> float:
    started = time.perf_counter()
    deadline = started + timeout
    while time.perf_counter() < deadline:
        open_ = _one(dsn, "SELECT count(*) FROM segments WHERE status = 'open'")
        segmented = _one(dsn, "SELECT count(DISTINCT session_id) FROM segments")
        closed, done = settled(dsn)
        if segmented == sessions and closed == done and not open_:
            return time.perf_counter() - started
        time.sleep(1)
    raise RuntimeError(f"pipeline not settled in {timeout}s: {settled(dsn)}")


def erase(query_url: str, dsn: str, project: str, scope: dict[str, Any]) -> dict[str, Any]:
    # the accept step of a whole 100,000-event project took over 60 s once: measured, not cut
    with httpx.Client(base_url=query_url, timeout=600) as client:
        started = time.perf_counter()
        r = client.post("/v1/erasures", json={"project_id": project, "scope": scope})
        r.raise_for_status()
        accepted_s = time.perf_counter() - started
        erasure_id = r.json()["erasure_id"]
        receipt: dict[str, Any] = {}
        while time.perf_counter() - started < 600:
            receipt = client.get(f"/v1/erasures/{erasure_id}").json()
            if receipt["verified"]:
                break
            time.sleep(0.05)
        wall = time.perf_counter() - started
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT r.participant, extract(epoch FROM r.reported_at - e.requested_at)"
            " FROM erasure_reports r JOIN erasures e USING (erasure_id)"
            " WHERE r.erasure_id = %s ORDER BY 2",
            (erasure_id,),
        ).fetchall()
        verified_after = conn.execute(
            "SELECT extract(epoch FROM verified_at - requested_at) FROM erasures"
            " WHERE erasure_id = %s",
            (erasure_id,),
        ).fetchone()
    return {
        "wall_s": wall,
        "accepted_s": accepted_s,
        "verified": receipt.get("verified", False),
        "events": receipt.get("events", 0),
        "counts": receipt.get("counts", {}),
        "reported": {p: float(t) for p, t in rows},
        "verified_after_s": float(verified_after[0])
        if verified_after and verified_after[0]
        else None,
    }


def report(label: str, target_s: float, result: dict[str, Any]) -> str:
    rows = [["step", "seconds after the request"]]
    rows.append(["accepted (202: audit row, tombstones)", f"{result['accepted_s']:.2f}"])
    for participant, t in result["reported"].items():
        rows.append([f"{participant} reported", f"{t:.2f}"])
    if result["verified_after_s"] is not None:
        rows.append(["streams purged + verified", f"{result['verified_after_s']:.2f}"])
    rows.append(["wall time seen by the client", f"{result['wall_s']:.2f}"])
    verdict = "met" if result["verified"] and result["wall_s"] < target_s else "NOT met"
    counts = ", ".join(f"{k} {v}" for k, v in sorted(result["counts"].items()) if v)
    return (
        f"\n{label}: {result['events']} events, verified={result['verified']}, "
        f"target < {target_s:.0f} s {verdict}\n{table(rows, [False, True])}\ncounts: {counts}\n"
    )


def bench(args: argparse.Namespace, stack: Stack) -> None:
    rng = random.Random(args.seed)
    t = time.perf_counter()
    nudges = seed(stack.dsn, "bench-project", args.events, args.per_session, rng)
    nudges += seed(stack.dsn, "bench-session", args.session_events * 5, args.session_events, rng)
    seeded_s = time.perf_counter() - t
    stack.env.update(
        {
            "AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S": "2",
            "AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S": "1",
        }
    )
    for name, module in (
        ("recorder", "agent_memory_recorder"),
        ("segmenter", "agent_memory_segmenter"),
        ("summarizer", "agent_memory_summarizer"),
        ("bm25-indexer", "agent_memory_bm25"),
    ):
        stack.run(name, module)
    stack.run("query", "agent_memory_query", ready=lambda: http_ok(stack.query_url + "/readyz"))
    asyncio.run(nudge(stack.nats.url, nudges))
    built_s = wait_built(stack.dsn, len(nudges), args.build_timeout)
    stats = {
        "segments": _one(stack.dsn, "SELECT count(*) FROM segments"),
        "toc versions": _one(stack.dsn, "SELECT count(*) FROM toc_node_versions"),
        "grips": _one(stack.dsn, "SELECT count(*) FROM toc_grips"),
    }
    print(
        f"seeded {args.events + args.session_events * 5} events in {seeded_s:.1f} s; pipeline "
        f"built {stats} in {built_s:.1f} s\n{machine_info()}"
    )
    session = erase(
        stack.query_url, stack.dsn, "bench-session", {"session_id": "bench-session-s0002"}
    )
    print(report("one session", 5, session))
    project = erase(stack.query_url, stack.dsn, "bench-project", {"project": True})
    print(report(f"one project of {args.events} events", 120, project))
    stack.check_alive()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=100_000, help="events of the big project")
    p.add_argument("--per-session", type=int, default=1000, help="events per session there")
    p.add_argument("--session-events", type=int, default=200, help="events of the one session")
    p.add_argument("--build-timeout", type=float, default=1800.0)
    p.add_argument("--seed", type=int, default=15)
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    stop_on_sigterm()
    workdir = Path(tempfile.mkdtemp(prefix="bench-erasure-"))
    stack = Stack(workdir)
    try:
        stack.start()
        bench(args, stack)
    finally:
        stack.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
