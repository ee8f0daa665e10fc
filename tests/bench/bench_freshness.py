"""``make bench-freshness``: how soon a team's new events can be found (issue 57, point 3).

A memory is only useful to the next prompt if it is searchable by then. This benchmark starts
the product as a user does (``agent-memory up``, ``tests/bench/stack.py``), then lets
``--agents`` simulated coding agents post realistic sessions (bench-scale's coding and
conversation texts, ``bench_scale.coding_turns`` / ``chat_turns``) through the gateway, one
event per request as a hook posts it, at a combined ``--rate`` for ``--seconds``. Every
``--probe-every`` seconds the next event posted carries a unique nonce word, and probes time,
from that event's 202:

- **BM25**: ``POST /v1/search`` with ``tiers: ["bm25"]`` for the nonce in its project, until
  it returns the event (or a grip quoting it, which the search may show in its place);
- **vector**: ``POST /v1/search`` with ``tiers: ["vector"]`` and the event's own text as the
  query, until it returns the event (or such a grip);
- **TOC**: until ``GET /v1/toc/nodes/{id}`` shows a segment node holding the event. A segment
  is summarized once it closes: on the segmenter's token budget (the session went on), or on
  its idle flush (the session stopped posting), so this is the time to a segment holding it,
  and the report says how each one closed.

Asking the vector search and the TOC every half second for every pending event would embed
a 2,000-character query several times a second and take the cores from the embedder being
measured; so Postgres is asked first, once per round for every pending event (is it a
near-duplicate the recorder will never index? is its vector row written? its segment node?),
and the API only then. The time recorded is always that of the API's answer that found it.
BM25 (no embedding) is asked directly, less often as the event ages.

The embedder's texts/s come from its ``/metrics`` (``bench_scale.Watcher``), with the
backlog of the consumers behind the three figures, per minute of the run.

A measurement, not a test: the exit code is 0 whatever the figures; non-zero only when the
benchmark cannot run.

    python -m tests.bench.bench_freshness [--agents 20] [--rate 20] [--seconds 600]
        [--probe-every 2] [--probe-timeout 300] [--out FILE.json] [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import string
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg

from agent_memory_retrieval.docs import event_doc_id
from tests.bench.bench_scale import (
    CHAT_SHARE,
    CODING_PROJECTS,
    LOCOMO,
    Pools,
    Turn,
    Watcher,
    chat_turns,
    coding_turns,
    load_pools,
)
from tests.bench.report import percentile, stop_on_sigterm, table
from tests.bench.scale_state import RunClock, Sample
from tests.bench.stack import Product, stop_and_clean, wait_for_vectors

TENANT = "default"  # the embedded stack's one tenant
TARGETS = ("bm25", "vector", "toc")
LABELS = {"bm25": "BM25", "vector": "vector", "toc": "TOC segment"}
# The consumers each figure waits for (their backlog is printed per minute).
BEHIND = {"bm25": "bm25-indexer", "vector": "embedder", "toc": "summarizer"}
SHORT = {"bm25-indexer": "bm25", "embedder": "embed", "summarizer": "summ"}
STACK_IDLE_FLUSH = "AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S"
PRODUCT_IDLE_FLUSH_S = 600  # SegmenterOptions.idle_flush_s: what a user's stack waits
ROUND_S = 0.25  # the probe loop's step; Postgres is asked every other step
MAX_QUERY_CHARS = 4000  # SearchRequest.query's limit
MOMENTS = ("event", "grip")  # results that show an event (ranking.MOMENT_TYPES)


# --------------------------------------------------------------------------------------------
# The team: agents posting sessions, one event per request
# --------------------------------------------------------------------------------------------


@dataclass
class Agent:
    """One team member's coding agent: sessions one after another in its project, coding
    sessions and conversations as bench-scale mixes them, every turn a new event."""

    index: int
    project: str
    pools: Pools
    seed: int
    sessions: int = 0
    session_id: str = ""
    turns: list[Turn] = field(default_factory=list)
    posted: int = 0
    said: set[str] = field(default_factory=set)  # the texts of the current session
    repeated: bool = False  # the last event's text was said before in its session

    @property
    def agent_id(self) -> str:
        return f"agent-{self.index:02d}"

    def next_event(self) -> dict[str, Any]:
        """The next turn of the current session (a new session when it is over), without the
        ``ts``, which is the wall clock at the moment it is posted."""
        if not self.turns:
            self._new_session()
        turn = self.turns.pop(0)
        self.repeated = turn.text in self.said
        self.said.add(turn.text)
        event: dict[str, Any] = {
            "event_id": f"fresh-{self.index:02d}-{self.posted:06d}",
            "project_id": self.project,
            "agent_id": self.agent_id,
            "session_id": self.session_id,
            "role": turn.role,
            "type": turn.type,
            "text": turn.text,
        }
        if turn.metadata:
            event["metadata"] = turn.metadata
        self.posted += 1
        return event

    def _new_session(self) -> None:
        """Session ``k`` of this agent depends only on the seed, the agent and ``k``; lengths
        as bench-scale draws them (coding 10-160 events, conversations 8-60)."""
        rng = random.Random(f"bench-freshness/{self.seed}/{self.index}/{self.sessions}")
        if rng.random() < CHAT_SHARE:
            self.turns = chat_turns(rng, self.pools, rng.randint(8, 60))
        else:
            self.turns = coding_turns(rng, self.pools, rng.randint(10, 160), self.project)
        self.session_id = f"fresh-{self.index:02d}-s{self.sessions:04d}"
        self.said = set()
        self.sessions += 1


def team(agents: int, projects: int, pools: Pools, seed: int) -> list[Agent]:
    """``agents`` agents spread over the first ``projects`` of bench-scale's coding projects
    (a team: several agents in each project at once)."""
    names = CODING_PROJECTS[: max(1, min(projects, len(CODING_PROJECTS)))]
    return [Agent(i, names[i % len(names)], pools, seed) for i in range(agents)]


# --------------------------------------------------------------------------------------------
# A probe: a sampled event and when each way of finding it first found it
# --------------------------------------------------------------------------------------------


@dataclass
class Probe:
    """A sampled event: what finds it (its nonce, its text, its project), and what did."""

    event_id: str
    project_id: str
    session_id: str
    text: str
    nonce: str
    posted: float  # run seconds at the gateway's 202
    posted_wall: float  # time.time() at the 202: Postgres's timestamps are wall-clock
    found: dict[str, float] = field(default_factory=dict)  # target -> seconds after the 202
    found_as: dict[str, str] = field(default_factory=dict)  # target -> the result's type
    given_up: set[str] = field(default_factory=set)
    due: dict[str, float] = field(default_factory=dict)  # target -> run time of next ask
    # target -> seconds after the 202 when Postgres first held what the API reads (its vector
    # row, its segment node): from then on the API is asked
    indexed: dict[str, float] = field(default_factory=dict)
    node_id: str | None = None  # that segment node
    close_reason: str | None = None  # the segmenter's, for the segment that holds it
    closed_after: float | None = None  # seconds from the 202 to that segment's closing
    stored: dict[str, Any] = field(default_factory=dict)  # its row, read at the end
    # the recorder kept it as a near-duplicate of an earlier event of its session: never
    # indexed nor summarized, by design, so not a probe
    duplicate: bool = False

    def pending(self, target: str) -> bool:
        return not self.duplicate and target not in self.found and target not in self.given_up

    def done(self) -> bool:
        return not any(self.pending(t) for t in TARGETS)


def nonce_word(rng: random.Random) -> str:
    """A word no text holds (12 lowercase letters: any tokenizer keeps it whole, no stemmer
    folds it onto another, no date parser reads it), so that BM25 finds only its event."""
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(10))


def backoff(age: float) -> float:
    """Seconds until a probe asks again: a tenth of its age, 0.5 to 5 s, so the resolution
    stays ~10% of the latency and a slow pipeline is not asked twice a second per event."""
    return min(5.0, max(0.5, 0.1 * age))


# --------------------------------------------------------------------------------------------
# The run: agents post, the prober asks, the watcher reads /v1/status and the embedder
# --------------------------------------------------------------------------------------------


@dataclass
class Posting:
    """What the agents did, written by their threads under ``lock``."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    sent: list[float] = field(default_factory=list)  # run seconds of every 202
    request_ms: list[float] = field(default_factory=list)
    late_ms: list[float] = field(default_factory=list)  # behind the schedule when sent
    retried: int = 0


class Run:
    """The shared state of one run: its clock, its schedule of probes, what was posted."""

    def __init__(self, args: argparse.Namespace, product: Product) -> None:
        self.args = args
        self.product = product
        self.t0 = time.monotonic()
        self.end = self.t0 + args.seconds
        self.halt = threading.Event()  # an error anywhere, or Ctrl-C: everyone stops
        self.posting_done = threading.Event()
        self.posting = Posting()
        self.probes: list[Probe] = []
        self._next_probe = self.t0
        self._probe_lock = threading.Lock()
        self._nonces = random.Random(f"bench-freshness/{args.seed}/nonces")
        self.unanswered = 0  # probe requests the query service failed (5xx, timeout)

    def now(self) -> float:
        return time.monotonic() - self.t0

    def claim_probe(self) -> str | None:
        """A nonce when a probe is due (one every ``--probe-every`` seconds), else None."""
        with self._probe_lock:
            if time.monotonic() < self._next_probe:
                return None
            self._next_probe += self.args.probe_every
            return nonce_word(self._nonces)

    def add_probe(self, probe: Probe) -> None:
        with self._probe_lock:
            self.probes.append(probe)

    def pending_probes(self) -> list[Probe]:
        with self._probe_lock:
            return [p for p in self.probes if not p.done()]


def post_one(client: httpx.Client, url: str, event: dict[str, Any], run: Run) -> float:
    """One event as a hook posts it; the run time of the 202. A brief 503 or a timeout is
    retried (counted); any other refusal stops the run (the benchmark's own mistake)."""
    for attempt in range(10):
        try:
            r = client.post(f"{url}/v1/events", json={"events": [event]})
        except httpx.TimeoutException:
            r = None
        if r is not None and r.status_code == 202:
            return run.now()
        if r is not None and r.status_code != 503:
            raise RuntimeError(f"the gateway refused an event: {r.status_code} {r.text[:300]}")
        with run.posting.lock:
            run.posting.retried += 1
        time.sleep(min(2.0, 0.2 * (attempt + 1)))
    raise RuntimeError("the gateway did not accept an event in ten tries")


def agent_loop(agent: Agent, run: Run, errors: list[BaseException]) -> None:
    """Post the agent's events at Poisson times of rate ``rate / agents`` (independent agents
    add up to a steady rate) until the run's end. A late agent posts at once and is late."""
    rng = random.Random(f"bench-freshness/{run.args.seed}/schedule/{agent.index}")
    rate = run.args.rate / run.args.agents
    due = run.t0 + rng.expovariate(rate)
    try:
        with httpx.Client(timeout=30) as client:
            while due < run.end and not run.halt.is_set():
                if run.halt.wait(max(0.0, due - time.monotonic())):
                    return
                post_and_sample(client, agent, run, due)
                due += rng.expovariate(rate)
    except BaseException as exc:  # handed to the main thread, which stops
        errors.append(exc)
        run.halt.set()


def post_and_sample(client: httpx.Client, agent: Agent, run: Run, due: float) -> None:
    """Post the agent's next event, with a nonce when a probe is due; record the 202. A text
    its session said before is not sampled: the recorder keeps it as a duplicate, never
    indexed (a conversation's turns come round again), and the probe goes to the next."""
    event = agent.next_event()
    nonce = None if agent.repeated else run.claim_probe()
    if nonce is not None:
        event["text"] = f"{event['text']} {nonce}"
    late = time.monotonic() - due
    event["ts"] = int(time.time() * 1000)
    start = time.perf_counter()
    accepted = post_one(client, run.product.gateway_url, event, run)
    wall = time.time()
    with run.posting.lock:
        run.posting.sent.append(accepted)
        run.posting.request_ms.append((time.perf_counter() - start) * 1000)
        run.posting.late_ms.append(late * 1000)
    if nonce is not None:
        run.add_probe(
            Probe(
                event["event_id"],
                event["project_id"],
                event["session_id"],
                event["text"],
                nonce,
                accepted,
                wall,
            )
        )


# --------------------------------------------------------------------------------------------
# The prober
# --------------------------------------------------------------------------------------------

DUPLICATES = """
SELECT event_id FROM event_duplicates WHERE tenant = %(tenant)s AND event_id = ANY(%(ids)s)
"""
VECTOR_ROWS = """
SELECT id FROM vector_docs
WHERE tenant = %(tenant)s AND project_id = ANY(%(projects)s) AND id = ANY(%(ids)s)
"""
# The closed segment holding each event as one of its own (not a carried overlap) events.
SEGMENTS = """
SELECT u.event_id, s.close_reason, extract(epoch FROM s.closed_at)
FROM segments s
CROSS JOIN LATERAL unnest(s.event_ids[s.overlap_count + 1:]) AS u (event_id)
WHERE s.tenant = %(tenant)s AND s.project_id = ANY(%(projects)s) AND s.status = 'closed'
  AND u.event_id = ANY(%(ids)s)
"""
# The segment node whose latest version holds each event (what the TOC shows).
SEGMENT_NODES = """
SELECT u.event_id, n.node_id
FROM toc_nodes n
JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
CROSS JOIN LATERAL unnest(v.event_ids) AS u (event_id)
WHERE n.tenant = %(tenant)s AND n.project_id = ANY(%(projects)s) AND n.level = 'segment'
  AND u.event_id = ANY(%(ids)s)
"""


def ask_postgres(conn: psycopg.Connection[Any], probes: Sequence[Probe], now: float) -> None:
    """Which pending events are duplicates, have their vector row, a closed segment, a
    segment node: one query each for all of them, so that the API is only asked when it can
    answer yes."""
    projects = sorted({p.project_id for p in probes})
    by_event = {p.event_id: p for p in probes}
    params = {"tenant": TENANT, "ids": list(by_event)}
    for (event_id,) in conn.execute(DUPLICATES, params).fetchall():
        by_event[event_id].duplicate = True
    by_doc = {event_doc_id(TENANT, p.event_id): p for p in probes if p.pending("vector")}
    if by_doc:
        params = {"tenant": TENANT, "projects": projects, "ids": list(by_doc)}
        for (doc_id,) in conn.execute(VECTOR_ROWS, params).fetchall():
            by_doc[doc_id].indexed.setdefault("vector", now - by_doc[doc_id].posted)
    by_id = {p.event_id: p for p in probes if p.pending("toc")}
    if not by_id:
        return
    params = {"tenant": TENANT, "projects": projects, "ids": list(by_id)}
    for event_id, reason, closed_at in conn.execute(SEGMENTS, params).fetchall():
        probe = by_id[event_id]
        probe.close_reason = str(reason)
        probe.closed_after = float(closed_at) - probe.posted_wall
    for event_id, node_id in conn.execute(SEGMENT_NODES, params).fetchall():
        probe = by_id[event_id]
        probe.node_id = str(node_id)
        probe.indexed.setdefault("toc", now - probe.posted)


def found_by_search(answer: dict[str, Any], event_id: str) -> str | None:
    """The type of the first result showing the event: the event itself, or a grip quoting
    it (the search keeps one of the two, whichever ranks first: ``novelty_gate`` drops a
    moment whose events are all shown above it). A summary citing it among many is not
    finding it. None when neither is there."""
    for r in answer.get("results", ()):
        if r.get("type") in MOMENTS and event_id in r.get("event_ids", ()):
            return str(r["type"])
    return None


class Unanswered(Exception):
    """The service failed this once (a 5xx, a timeout): asked again later, and counted."""


def search(client: httpx.Client, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """The answer; a 4xx is the benchmark's own mistake and stops the run."""
    try:
        r = client.post(f"{url}/v1/search", json=body)
    except httpx.TimeoutException as exc:
        raise Unanswered(str(exc)) from exc
    if r.status_code >= 500:
        raise Unanswered(f"{r.status_code} {r.text[:300]}")
    if r.status_code != 200:
        raise RuntimeError(f"search refused: {r.status_code} {r.text[:300]}")
    answer: dict[str, Any] = r.json()
    return answer


def ask_bm25(client: httpx.Client, url: str, probe: Probe) -> str | None:
    body = {"query": probe.nonce, "project_id": probe.project_id, "tiers": ["bm25"]}
    return found_by_search(search(client, url, body), probe.event_id)


def ask_vector(client: httpx.Client, url: str, probe: Probe) -> str | None:
    query = probe.text[:MAX_QUERY_CHARS]
    body = {"query": query, "project_id": probe.project_id, "tiers": ["vector"]}
    return found_by_search(search(client, url, body), probe.event_id)


def ask_toc(client: httpx.Client, url: str, probe: Probe) -> str | None:
    """The segment node Postgres named, as an agent opens it: it holds the event."""
    if probe.node_id is None:
        return None
    try:
        r = client.get(f"{url}/v1/toc/nodes/{probe.node_id}")
    except httpx.TimeoutException as exc:
        raise Unanswered(str(exc)) from exc
    if r.status_code >= 500:
        raise Unanswered(f"{r.status_code} {r.text[:300]}")
    held = r.status_code == 200 and probe.event_id in r.json().get("event_ids", ())
    return "segment" if held else None


ASK: dict[str, Callable[[httpx.Client, str, Probe], str | None]] = {
    "bm25": ask_bm25,
    "vector": ask_vector,
    "toc": ask_toc,
}


def ready(probe: Probe, target: str) -> bool:
    """Whether the API is worth asking yet (Postgres has what the answer reads)."""
    return target == "bm25" or target in probe.indexed


def probe_round(client: httpx.Client, run: Run, probes: Sequence[Probe]) -> None:
    """Ask the API for every pending (probe, target) that is due; give up on the old ones."""
    url = run.product.query_url
    for probe in probes:
        for target in TARGETS:
            if not probe.pending(target):
                continue
            age = run.now() - probe.posted
            if age > run.args.probe_timeout:
                probe.given_up.add(target)
            elif ready(probe, target) and probe.due.get(target, 0.0) <= run.now():
                try:
                    shown_as = ASK[target](client, url, probe)
                except Unanswered:
                    run.unanswered += 1
                    shown_as = None
                if shown_as is not None:
                    probe.found[target] = run.now() - probe.posted
                    probe.found_as[target] = shown_as
                else:
                    probe.due[target] = run.now() + backoff(age)


def prober(run: Run, errors: list[BaseException]) -> None:
    """Until posting has stopped and every probe is found or given up."""
    try:
        with (
            httpx.Client(timeout=30) as client,
            psycopg.connect(run.product.pg_dsn, autocommit=True) as conn,
        ):
            step = 0
            while not run.halt.is_set():
                probes = run.pending_probes()
                if not probes and run.posting_done.is_set():
                    return
                if probes and step % 2 == 0:
                    ask_postgres(conn, probes, run.now())
                probe_round(client, run, probes)
                step += 1
                time.sleep(ROUND_S)
    except BaseException as exc:  # handed to the main thread, which stops
        errors.append(exc)
        run.halt.set()


def read_stored(product: Product, probes: Sequence[Probe]) -> None:
    """Each sampled event as stored (``GET /v1/events/{id}``): whether it was kept as a
    duplicate (never indexed), and the server's own times of its arrival and recording."""
    with httpx.Client(timeout=30) as client:
        for probe in probes:
            r = client.get(f"{product.query_url}/v1/events/{probe.event_id}")
            probe.stored = r.json() if r.status_code == 200 else {}


# --------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------


def stats(values: Sequence[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "max": max(values),
    }


def recorded_s(probe: Probe) -> float | None:
    """Seconds from the gateway's receipt to the recorder's commit (server clocks)."""
    row = probe.stored
    if not row.get("received_at") or not row.get("recorded_at"):
        return None
    received = datetime.fromisoformat(row["received_at"])
    return (datetime.fromisoformat(row["recorded_at"]) - received).total_seconds()


def target_figures(probes: Sequence[Probe], target: str) -> dict[str, Any]:
    """Its latencies; ``unresolved``: never found, of which ``indexed_unfound`` had their
    vector row or segment node in Postgres (the search or the TOC did not return them)."""
    probes = [p for p in probes if not p.duplicate]
    values = [p.found[target] for p in probes if target in p.found]
    lost = [p for p in probes if target in p.given_up]
    return {
        **stats(values),
        "unresolved": len(lost),
        "indexed_unfound": sum(1 for p in lost if target in p.indexed),
        "indexed": stats([p.indexed[target] for p in probes if target in p.indexed]),
        "found_as": dict(Counter(p.found_as[target] for p in probes if target in p.found_as)),
    }


def minute_of(t: float) -> int:
    return int(t // 60)


def embedder_rate(samples: Sequence[Sample], lo: float, hi: float) -> float | None:
    """Texts/s through the embedder's model between run times ``lo`` and ``hi`` (the samples
    closest inside), None without two readings."""
    inside = [s for s in samples if lo <= s.t <= hi and s.model is not None]
    if len(inside) < 2 or inside[-1].t <= inside[0].t:
        return None
    first, last = inside[0].model, inside[-1].model
    assert first is not None and last is not None
    return (last.texts - first.texts) / (inside[-1].t - inside[0].t)


def max_backlog(samples: Sequence[Sample], name: str, lo: float, hi: float) -> int | None:
    seen = [s.backlog[name] for s in samples if lo <= s.t <= hi and name in s.backlog]
    return max(seen) if seen else None


def per_minute(run: Run, samples: Sequence[Sample]) -> list[dict[str, Any]]:
    """Each minute of posting: the rate achieved, the probes posted in it and their figures,
    the embedder's texts/s and the largest backlog seen behind each figure."""
    minutes = max(1, math.ceil(run.args.seconds / 60))
    rows = []
    for m in range(minutes):
        lo, hi = 60.0 * m, min(60.0 * (m + 1), float(run.args.seconds))
        probes = [p for p in run.probes if minute_of(p.posted) == m]
        sent = sum(1 for t in run.posting.sent if lo <= t < hi)
        rows.append(
            {
                "minute": m + 1,
                "events_per_s": sent / (hi - lo) if hi > lo else None,
                "probes": sum(1 for p in probes if not p.duplicate),
                **{t: target_figures(probes, t) for t in TARGETS},
                "embedder_texts_per_s": embedder_rate(samples, lo, hi),
                "backlog_max": {c: max_backlog(samples, c, lo, hi) for c in BEHIND.values()},
            }
        )
    return rows


def close_figures(probes: Sequence[Probe]) -> dict[str, Any]:
    """The TOC figure split by why the segment closed: ``token_budget`` and ``gap`` while the
    session went on, ``idle`` only once it stopped posting (after the idle flush)."""
    out: dict[str, Any] = {}
    for reason in sorted({p.close_reason for p in probes if p.close_reason}):
        some = [p for p in probes if p.close_reason == reason]
        out[reason] = {
            "toc": stats([p.found["toc"] for p in some if "toc" in p.found]),
            "closed_after": stats([p.closed_after for p in some if p.closed_after is not None]),
        }
    return out


def after_posting(run: Run, samples: Sequence[Sample]) -> dict[str, Any]:
    """Once the agents stopped, while the last probes waited: did the pipeline catch up?"""
    after = [s for s in samples if s.t >= run.args.seconds]
    last = after[-1] if after else None
    return {
        "seconds": (last.t - run.args.seconds) if last else None,
        "embedder_texts_per_s": embedder_rate(after, float(run.args.seconds), math.inf),
        "backlog_end": {c: last.backlog.get(c) for c in BEHIND.values()} if last else {},
    }


def figures(run: Run, samples: Sequence[Sample], idle_flush_s: float) -> dict[str, Any]:
    sent = run.posting.sent
    span = (sent[-1] - sent[0]) if len(sent) > 1 else 0.0
    posting = [s for s in samples if s.t <= run.args.seconds]
    return {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(run.args).items()},
        "idle_flush_s": idle_flush_s,
        "posted": len(sent),
        "events_per_s": len(sent) / span if span else None,
        "request_ms": stats(run.posting.request_ms),
        "late_ms": stats(run.posting.late_ms),
        "retried": run.posting.retried,
        "probe_requests_failed": run.unanswered,
        "probes": sum(1 for p in run.probes if not p.duplicate),
        "overall": {t: target_figures(run.probes, t) for t in TARGETS},
        "recorded_s": stats([v for p in run.probes if (v := recorded_s(p)) is not None]),
        "duplicates": sum(1 for p in run.probes if p.duplicate),
        "not_stored": sum(1 for p in run.probes if not p.stored),
        "toc_by_close": close_figures(run.probes),
        "embedder_texts_per_s": embedder_rate(posting, 0.0, float(run.args.seconds)),
        "after_posting": after_posting(run, samples),
        "per_minute": per_minute(run, samples),
        "raw": [probe_json(p) for p in run.probes],
    }


def probe_json(p: Probe) -> dict[str, Any]:
    return {
        "event_id": p.event_id,
        "project_id": p.project_id,
        "session_id": p.session_id,
        "posted_s": p.posted,
        "found_s": p.found,
        "found_as": p.found_as,
        "indexed_s": p.indexed,
        "unresolved": sorted(p.given_up),
        "duplicate": p.duplicate,
        "close_reason": p.close_reason,
        "closed_after_s": p.closed_after,
    }


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def report(doc: dict[str, Any]) -> str:
    """The plain-text tables."""
    a = doc["args"]
    lines = [
        f"freshness: {a['agents']} agents in {a['projects']} projects, {a['rate']:g} events/s"
        f" asked for {a['seconds']} s, one probe every {a['probe_every']:g} s, given up after"
        f" {a['probe_timeout']} s",
        f"posted {doc['posted']:,} events, one per request: {rate(doc['events_per_s'])} events/s"
        f" achieved; 202 in p50 {doc['request_ms']['p50'] or 0:.0f} ms / p95"
        f" {doc['request_ms']['p95'] or 0:.0f} ms; agents behind schedule p95"
        f" {doc['late_ms']['p95'] or 0:.0f} ms; {doc['retried']} retried; probe requests"
        f" the query service failed: {doc['probe_requests_failed']}",
        f"embedder: {rate(doc['embedder_texts_per_s'])} texts/s while posting (events, TOC"
        " nodes and their grips); " + drain_line(doc["after_posting"]),
        "",
        overall_table(doc),
        "",
        close_lines(doc),
        "",
        "per minute of posting (probes by the minute they were posted; lost: never found;"
        " backlog: the most messages seen pending for the BM25 indexer, the embedder and the"
        " summarizer)",
        minute_table(doc["per_minute"]),
    ]
    return "\n".join(lines)


def drain_line(after: dict[str, Any]) -> str:
    if after["seconds"] is None:
        return "nothing read after posting"
    backlog = ", ".join(f"{c} {'-' if v is None else v}" for c, v in after["backlog_end"].items())
    return (
        f"{rate(after['embedder_texts_per_s'])} texts/s in the {after['seconds']:.0f} s after"
        f" posting; backlog at the end: {backlog}"
    )


def overall_table(doc: dict[str, Any]) -> str:
    head = ["found by", "probes", "found", "p50 s", "p95 s", "max s", "never found"]
    rows = [[*head, "of them in Postgres"]]
    for t in TARGETS:
        f = doc["overall"][t]
        spread = [seconds(f["p50"]), seconds(f["p95"]), seconds(f["max"])]
        in_pg = "-" if t == "bm25" else str(f["indexed_unfound"])
        rows.append([LABELS[t], str(doc["probes"]), str(f["n"]), *spread])
        rows[-1] += [str(f["unresolved"]), in_pg]
    r = doc["recorded_s"]
    spread = [seconds(r["p50"]), seconds(r["p95"]), seconds(r["max"])]
    rows.append(["(recorded, server clocks)", "", str(r["n"]), *spread, "", ""])
    shown = "; ".join(
        f"{LABELS[t]} as " + ", ".join(f"{k} {v}" for k, v in doc["overall"][t]["found_as"].items())
        for t in ("bm25", "vector")
        if doc["overall"][t]["found_as"]
    )
    note = (
        f"  found {shown} (a grip quoting the event stands for it when it ranks first)\n"
        f"  sampled events the recorder kept as near-duplicates (never indexed, not counted):"
        f" {doc['duplicates']}; not stored: {doc['not_stored']}"
    )
    return table(rows, [False] + [True] * 7) + "\n" + note


def close_lines(doc: dict[str, Any]) -> str:
    """How the segments holding the sampled events closed, and what that cost."""
    by = doc["toc_by_close"]
    if not by:
        return "TOC: no sampled event's segment closed"
    rows = [["segment closed by", "events", "closed p50 s", "p95 s", "in TOC p50 s", "p95 s"]]
    for reason, f in by.items():
        c, t = f["closed_after"], f["toc"]
        rows.append(
            [
                reason,
                str(c["n"]),
                seconds(c["p50"]),
                seconds(c["p95"]),
                seconds(t["p50"]),
                seconds(t["p95"]),
            ]
        )
    idle = by.get("idle", {}).get("closed_after", {}).get("n", 0)
    total = sum(f["closed_after"]["n"] for f in by.values())
    note = (
        f"  {idle} of {total} closed only once their session stopped posting (the idle flush,"
        f" {doc['idle_flush_s']:g} s here; {PRODUCT_IDLE_FLUSH_S} s in a user's stack by default):"
        " their TOC time is the session's remaining length plus that wait; token_budget and gap"
        " segments closed while the session went on"
    )
    return table(rows, [False] + [True] * 5) + "\n" + note


def minute_table(rows_in: Sequence[dict[str, Any]]) -> str:
    head = ["min", "posted/s", "probes"]
    for t in TARGETS:
        head += [f"{t} p50", "p95", "lost"]
    head += ["embed texts/s", "backlog " + "/".join(SHORT[c] for c in BEHIND.values())]
    rows = [head]
    for m in rows_in:
        row = [str(m["minute"]), rate(m["events_per_s"]), str(m["probes"])]
        for t in TARGETS:
            f = m[t]
            row += [seconds(f["p50"]), seconds(f["p95"]), str(f["unresolved"])]
        row += [rate(m["embedder_texts_per_s"])]
        row += ["/".join("-" if v is None else str(v) for v in m["backlog_max"].values())]
        rows.append(row)
    return table(rows, [True] * len(head))


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=20, help="simulated agents (20)")
    parser.add_argument("--projects", type=int, default=4, help="projects they share (4)")
    parser.add_argument("--rate", type=float, default=20.0, help="events/s, all agents (20)")
    parser.add_argument("--seconds", type=int, default=600, help="seconds of posting (600)")
    parser.add_argument(
        "--probe-every", type=float, default=2.0, help="seconds between sampled events (2)"
    )
    parser.add_argument(
        "--probe-timeout",
        type=float,
        default=300.0,
        help="seconds after its 202 a sampled event is given up on (300)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--no-locomo", action="store_true", help="conversations from the coding corpus only"
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="VAR=VALUE", help="extra stack setting"
    )
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the stack's folder")
    args = parser.parse_args(argv)
    if args.agents < 1 or args.rate <= 0 or args.seconds < 1 or args.probe_every <= 0:
        parser.error("--agents, --rate, --seconds and --probe-every must be positive")
    return args


@contextlib.contextmanager
def watching(product: Product, t0: float) -> Iterator[Watcher]:
    """``/v1/status`` and the embedder's counters every 5 s, on the run's clock."""
    home = product.workdir / "home"
    watcher = Watcher(product.query_url, home, RunClock(origin=t0), interval=5.0)
    watcher.start()
    try:
        yield watcher
    finally:
        watcher.halt.set()
        watcher.join(timeout=30)


def start_stack(product: Product) -> None:
    """The product on free ports, its models loaded and its start-up work done: the figures
    are the steady state's, not the first minute's."""
    t0 = time.monotonic()
    product.start()
    wait_for_vectors(product)
    waited = product.wait_until_quiet()
    print(f"  stack up in {time.monotonic() - t0:.0f} s (then quiet in {waited:.0f} s)")


def run_team(args: argparse.Namespace, product: Product) -> dict[str, Any]:
    """Post for ``--seconds``, probe until every sampled event is found or given up."""
    pools = load_pools(locomo=None if args.no_locomo else LOCOMO)
    agents = team(args.agents, args.projects, pools, args.seed)
    run = Run(args, product)
    errors: list[BaseException] = []
    with watching(product, run.t0) as watcher:
        posters = [
            threading.Thread(target=agent_loop, args=(a, run, errors), daemon=True) for a in agents
        ]
        probe_thread = threading.Thread(target=prober, args=(run, errors), daemon=True)
        try:
            for thread in [*posters, probe_thread]:
                thread.start()
            for thread in posters:
                thread.join()
            run.posting_done.set()
            print(f"  posted for {run.now():.0f} s; waiting for the last probes", flush=True)
            probe_thread.join()
        finally:
            run.halt.set()  # Ctrl-C lands here, in the main thread: the others stop too
    if errors:
        raise RuntimeError(f"the run failed: {errors[0]!r}") from errors[0]
    read_stored(product, run.probes)
    idle = float((product.env or {}).get(STACK_IDLE_FLUSH, PRODUCT_IDLE_FLUSH_S))
    return figures(run, watcher.samples, idle)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    stop_on_sigterm()
    workdir = Path(tempfile.mkdtemp(prefix="agent-memory-bench-freshness-"))
    product = Product(workdir, dict(item.split("=", 1) for item in args.set))
    print(f"bench-freshness: {workdir}", flush=True)
    failed = True
    try:
        start_stack(product)
        doc = run_team(args, product)
        failed = False
    except KeyboardInterrupt:
        print("interrupted")
        return 130
    finally:
        stop_and_clean(product, workdir, args.keep or failed)
    print()
    print(report(doc))
    if args.out:
        args.out.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"\nfigures: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
