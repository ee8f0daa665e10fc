"""Scale benchmark (issue 18, point 6): the whole embedded stack at 10k, 100k and 1M events.

Run by ``make bench-scale``. ``agent-memory up`` in a temporary home on free ports
(``tests/bench/stack.py``), then, for each size of ``--sizes`` in turn: the events up to that
size are posted through the gateway, every consumer of the pipeline is watched until it has
caught up, and the store is measured at that size:

- accepted events/s (gateway) and recorded events/s (recorder caught up) of the increment;
- the time each consumer took to catch up after the last post, from ``/v1/status`` polled
  every second, and its rate (messages/s) while it had a backlog;
- the embedder's events/s while it had a backlog, over the model's own throughput measured in
  this process right after the drain: all-MiniLM-L6-v2 loaded as the embedder loads it, the
  embedder's default batches and torch threads, on a sample of the texts it just embedded
  (each event's text with its previous turn, as ``IndexDoc.embedding_text`` builds them);
- search p50/p95 through ``POST /v1/search`` per tier (the default search, bm25 + vector,
  bm25 alone, vector alone): every query a new string, embedded by the query service, so the
  figures include the query embedding; a TOC descent (years -> ... -> a segment and its
  events); the topic listing of a project;
- disk per event: the Postgres database (pg_database_size; pgvector's ``vector_docs`` and the
  ``events`` table shown apart), the JetStream store and the Tantivy index.

The events are coding sessions (prompts, tool calls and results, replies, composed from the
coding corpus of ``tests/bench/coding`` and the text pools of ``bench_ingest``) and
conversations (LoCoMo turns when ``shared/bench-data`` has them, else the corpus's prompts and
replies), 50 to 2,000 characters, many projects and sessions over a year, all derived from
``--seed``. Results go to ``--out``: ``scale.json`` and ``scale.png`` (latency against store
size), rewritten after every size, so a long run that stops leaves what it measured.

A stopped run (killed, the session or the machine gone) goes on from where it stopped with
``--resume RESULTS``, on the same stack and with its own arguments. ``--replicas N`` given with
it drains the rest with N embedder processes (at a million, one process on one core takes
longer than a working session); the embedder's figures against the model stay per process,
each sample recording its start's count.

A measurement, not a test: a missed target prints MISS and the exit code stays 0; it is
non-zero only when the benchmark cannot run (130 after Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import multiprocessing as mp
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import psycopg

from agent_memory_common.bus.streams import PIPELINE_CONSUMERS
from agent_memory_common.core.catalog import SERVICES
from agent_memory_embedder.settings import EmbedderOptions
from agent_memory_embedder.settings import Settings as EmbedderSettings
from agent_memory_retrieval.indexing.sources import context_of, speaker_of
from agent_memory_retrieval.settings import RetrievalSettings
from tests.bench.bench_ingest import CODE, PROSE
from tests.bench.report import percentile, stop_on_sigterm, table, timed_search
from tests.bench.scale_state import (
    STANDSTILL_S,
    ModelCounters,
    RunClock,
    Sample,
    SampleLog,
    State,
    resume_clock,
    standstill,
)
from tests.bench.stack import (
    Product,
    get_json,
    open_segments,
    shared_data,
    stop_and_clean,
    wait_for_vectors,
)

TARGET_P50_MS = 25.0
TARGET_P95_MS = 60.0
TARGET_EMBEDDER_RATIO = 0.8
# A consumer fed by segments can only finish after the segmenter's idle flush closed the last
# segment (15 s in the stack of stack.py, checked every 3 s) and the summarizer wrote it: it is
# "not slower than the embedder" when it catches up within this much after the embedder.
SEGMENT_ALLOWANCE_S = 30.0
MIN_CHARS, MAX_CHARS = 50, 2000
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (2_000, 5_000)

CODING_CORPUS = Path(__file__).resolve().parent / "coding" / "corpus.json"
LOCOMO = shared_data("locomo/locomo10.json")
START = datetime(2025, 1, 1, tzinfo=UTC)
SPAN_DAYS = 365
NOW = START + timedelta(days=SPAN_DAYS + 1)  # the searches' reference time
CHAT_SHARE = 0.35  # sessions that are conversations rather than coding sessions
CODING_PROJECTS = tuple(
    f"{a}-{b}"
    for a in ("payments", "ledger", "search", "billing", "inventory", "auth", "webshop", "infra")
    for b in ("api", "cli", "worker")
)
CHAT_PROJECTS = tuple(f"notes-{n}" for n in ("home", "travel", "health", "books", "family", "work"))
CORPUS_PROJECTS = ("payments-api", "termdeck")  # renamed to the event's project in its text
RECENT = 32  # pieces not reused within this many of a session's pieces (dedup at ingest)

# The pipeline's consumers in the order events flow through them.
CONSUMERS = tuple(spec.durable for spec in PIPELINE_CONSUMERS)
EVENT_FED = ("recorder", "segmenter", "embedder", "bm25-indexer")
SEARCH_CONFIGS: tuple[tuple[str, list[str] | None], ...] = (
    ("full", None),
    ("hybrid", ["bm25", "vector"]),
    ("bm25", ["bm25"]),
    ("vector", ["vector"]),
)

# --------------------------------------------------------------------------------------------
# The events: deterministic from the seed, generated lazily (a million do not fit in a list of
# dicts comfortably, and each checkpoint only needs its own increment)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pools:
    """The texts events are composed from, by the slot they fill in a session."""

    prompts: tuple[str, ...]
    replies: tuple[str, ...]
    calls: tuple[str, ...]
    results: tuple[str, ...]
    chats: tuple[tuple[tuple[str, str], ...], ...]  # conversations of (speaker, text) turns
    sources: tuple[str, ...]  # what they came from, for the report


def load_pools(coding: Path = CODING_CORPUS, locomo: Path | None = None) -> Pools:
    """The coding corpus (generated for this project, its license) sorted into slots, plus
    bench_ingest's prose and code; LoCoMo sessions as conversations when ``locomo`` exists
    (CC BY-NC 4.0: non-commercial evaluation), else the corpus's own prompts and replies."""
    data = json.loads(coding.read_text())
    slots: dict[tuple[str, str], list[str]] = {}
    for session in data["sessions"]:
        for event in session["events"]:
            text = event["text"].strip()
            if text:
                slots.setdefault((event["role"], event["type"]), []).append(text)
    prompts = tuple(slots[("user", "message")])
    replies = tuple(slots[("assistant", "message")]) + PROSE
    sources = [f"{coding.relative_to(coding.parents[3])} ({data['license']})", "bench_ingest"]
    chats = _locomo_chats(locomo) if locomo is not None and locomo.exists() else ()
    if chats:
        sources.append(f"LoCoMo {locomo} (CC BY-NC 4.0, Maharana et al., ACL 2024)")
    else:
        chats = _corpus_chats(data)
    return Pools(
        prompts=prompts,
        replies=replies,
        calls=tuple(slots[("assistant", "tool_call")]) + CODE,
        results=tuple(slots[("tool", "tool_result")]),
        chats=chats,
        sources=tuple(sources),
    )


def _locomo_chats(path: Path) -> tuple[tuple[tuple[str, str], ...], ...]:
    """One conversation per LoCoMo session, its turns in order."""
    out = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        n = 1
        while f"session_{n}" in conv:
            turns = tuple(
                (t["speaker"], t["text"].strip()) for t in conv[f"session_{n}"] if t["text"].strip()
            )
            if turns:
                out.append(turns)
            n += 1
    return tuple(out)


def _corpus_chats(data: dict[str, Any]) -> tuple[tuple[tuple[str, str], ...], ...]:
    """Without LoCoMo: each coding session's spoken turns, as a conversation."""
    out = []
    for session in data["sessions"]:
        turns = tuple(
            (e["role"], e["text"].strip())
            for e in session["events"]
            if e["type"] == "message" and e["role"] in ("user", "assistant") and e["text"].strip()
        )
        if turns:
            out.append(turns)
    return tuple(out)


@dataclass(frozen=True)
class Turn:
    role: str
    type: str
    text: str
    metadata: dict[str, Any]
    gap_s: float  # seconds since the session's previous event


def log_uniform(rng: random.Random, lo: int, hi: int) -> int:
    """Lengths spread as in real logs: many short texts, a long tail up to ``hi``."""
    return round(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def fit(text: str, target: int) -> str:
    """``text`` cut to ``target`` characters, on a word boundary when one is near, never
    below ``MIN_CHARS`` (the caller hands in at least ``target`` >= ``MIN_CHARS``)."""
    if len(text) <= target:
        return text
    text = text[:target]
    cut = text.rfind(" ", max(MIN_CHARS, int(target * 0.9)))
    return text[:cut] if cut > 0 else text


def _pick(rng: random.Random, pool: Sequence[str], recent: deque[str]) -> str:
    """A piece not used lately in the session: the recorder's dedup at ingest would otherwise
    mark near-repeats as duplicates and no later stage would see them."""
    piece = rng.choice(pool)
    for _ in range(6):
        if piece not in recent:
            break
        piece = rng.choice(pool)
    recent.append(piece)
    return piece


def compose(
    rng: random.Random,
    pool: Sequence[str],
    span: tuple[int, int],
    recent: deque[str],
    project: str,
    sep: str = " ",
) -> str:
    """Pieces of ``pool`` joined up to a length drawn from ``span``, then cut to it."""
    target = log_uniform(rng, *span)
    parts: list[str] = []
    length = -len(sep)
    while length < target:
        piece = _pick(rng, pool, recent)
        for name in CORPUS_PROJECTS:
            piece = piece.replace(name, project)
        parts.append(piece)
        length += len(piece) + len(sep)
    return fit(sep.join(parts), target)


def _tool_name(call: str) -> str:
    first = call.split(" ", 1)[0]
    return "Bash" if first in ("$", "`") or not first.isalpha() else first


def coding_turns(rng: random.Random, pools: Pools, count: int, project: str) -> list[Turn]:
    """A Claude Code session: a prompt, a few tool calls with their results, a reply..."""
    recent: deque[str] = deque(maxlen=RECENT)
    out: list[Turn] = []
    while len(out) < count:
        prompt = compose(rng, pools.prompts, (MIN_CHARS, 800), recent, project)
        out.append(Turn("user", "message", prompt, {}, rng.uniform(20, 900)))
        for _ in range(rng.randint(0, 4)):
            call = compose(rng, pools.calls, (MIN_CHARS, 500), recent, project)
            tool = {"tool": _tool_name(call)}
            out.append(Turn("assistant", "tool_call", call, tool, rng.uniform(2, 40)))
            result = compose(rng, pools.results, (120, MAX_CHARS), recent, project, "\n")
            meta = {**tool, "exit_code": int(rng.random() < 0.15)}
            out.append(Turn("tool", "tool_result", result, meta, rng.uniform(1, 30)))
        reply = compose(rng, pools.replies, (80, MAX_CHARS), recent, project)
        out.append(Turn("assistant", "message", reply, {}, rng.uniform(5, 60)))
    return out[:count]


def chat_turns(rng: random.Random, pools: Pools, count: int) -> list[Turn]:
    """A conversation: consecutive turns of one, a short turn joined with the next ones."""
    conv = rng.choice(pools.chats)
    first = conv[0][0]
    j = rng.randrange(len(conv))
    out: list[Turn] = []
    while len(out) < count:
        target = log_uniform(rng, MIN_CHARS, 600)
        speaker, text = conv[j % len(conv)]
        j += 1
        while len(text) < target:
            text = f"{text} {conv[j % len(conv)][1]}"
            j += 1
        role = "user" if speaker == first else "assistant"
        out.append(
            Turn(role, "message", fit(text, target), {"speaker": speaker}, rng.uniform(5, 120))
        )
    return out


def event_stream(seed: int, pools: Pools) -> Iterator[dict[str, Any]]:
    """Events in the gateway's JSON, endless; session ``k`` depends only on ``seed`` and ``k``
    (its own random generator), so any prefix of the stream is the same on every run."""
    index = 0
    start_ms = int(START.timestamp() * 1000)
    for k in itertools.count():
        rng = random.Random(f"bench-scale/{seed}/{k}")
        chat = rng.random() < CHAT_SHARE
        if chat:
            project, agent = rng.choice(CHAT_PROJECTS), "chat-assistant"
            turns = chat_turns(rng, pools, rng.randint(8, 60))
        else:
            project, agent = rng.choice(CODING_PROJECTS), "claude-code"
            turns = coding_turns(rng, pools, rng.randint(10, 160), project)
        ts = start_ms + int(rng.uniform(0, SPAN_DAYS * 86_400) * 1000)
        for turn in turns:
            ts += int(turn.gap_s * 1000)
            event: dict[str, Any] = {
                "event_id": f"scale-{index:08d}",
                "ts": ts,
                "project_id": project,
                "agent_id": agent,
                "session_id": f"{'chat' if chat else 'code'}-{k:06d}",
                "role": turn.role,
                "type": turn.type,
                "text": turn.text,
            }
            if turn.metadata:
                event["metadata"] = turn.metadata
            yield event
            index += 1


def embedding_texts(events: Sequence[dict[str, Any]]) -> list[str]:
    """What the embedder embeds for each event (``IndexDoc.embedding_text``): the speaker as
    title, the text, then the previous turn of the session as context (the events of a
    session are consecutive in the stream)."""
    out = []
    previous: dict[str, Any] | None = None
    for e in events:
        context = ""
        if previous is not None and previous["session_id"] == e["session_id"]:
            context = context_of(previous["text"], previous.get("metadata"))
        parts = (speaker_of(e.get("metadata")), e["text"], context)
        out.append("\n".join(p for p in parts if p))
        previous = e
    return out


# --------------------------------------------------------------------------------------------
# Posting, and watching the pipeline drain
# --------------------------------------------------------------------------------------------


def encode_batches(events: Sequence[dict[str, Any]], batch: int) -> list[bytes]:
    """Request bodies encoded before the clock starts, so the timed loop only sends."""
    return [
        orjson.dumps({"events": list(events[i : i + batch])}) for i in range(0, len(events), batch)
    ]


def post_all(url: str, bodies: Sequence[bytes], clients: int) -> tuple[float, float]:
    """Every body to ``/v1/events`` from ``clients`` threads in a closed loop; the monotonic
    time of the first send and of the last 202. A refusal other than a brief 503 aborts."""
    lock = threading.Lock()
    pending = iter(bodies)
    stop = threading.Event()
    errors: list[str] = []

    def worker() -> None:
        headers = {"content-type": "application/json"}
        with httpx.Client(timeout=120) as client:
            while not stop.is_set():
                with lock:
                    body = next(pending, None)
                if body is None:
                    return
                for attempt in range(20):
                    r = client.post(f"{url}/v1/events", content=body, headers=headers)
                    if r.status_code != 503 or attempt == 19:
                        break
                    time.sleep(1)
                if r.status_code != 202:
                    errors.append(f"gateway answered {r.status_code}: {r.text[:300]}")
                    stop.set()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    finally:
        stop.set()
    if errors:
        raise RuntimeError(errors[0])
    return started, time.monotonic()


def model_counters(text: str) -> ModelCounters:
    """From a Prometheus exposition (``metrics.py`` names; absent samples count as 0)."""
    sums = {"texts_total": 0.0, "pieces_total": 0.0, "seconds_sum": 0.0}
    cpu = 0.0
    for line in text.splitlines():
        m = METRIC_LINE.match(line)
        if m and m.group(1) in sums:
            sums[m.group(1)] += float(m.group(2))
        elif line.startswith(CPU_LINE):
            cpu = float(line[len(CPU_LINE) :])
    return ModelCounters(sums["texts_total"], sums["pieces_total"], sums["seconds_sum"], cpu)


METRIC_LINE = re.compile(r"^agent_memory_embedding_(\w+?)(?:\{[^}]*\})? (\S+)$")
CPU_LINE = "process_cpu_seconds_total "  # prometheus_client's process collector (Linux)


def metrics_url(home: Path, service: str) -> str | None:
    """A consumer service's ``/metrics`` URL: the bench gives it a free port (0), which the
    service logs as ``metrics.listening``; the last one logged (a resumed run's stack started
    again on other ports), None until there is one."""
    return _listening(home / "logs" / f"{service}.log")


def metrics_urls(home: Path, service: str, processes: int = 1) -> list[str]:
    """Every process of ``service``: one (``embedder.log``), or its ``processes`` replicas
    (``embedder-1.log``, ...: the logs ``agent-memory up --replicas`` gives them), each the
    last port its log names. Only the logs of that many: a run resumed with another number of
    replicas leaves the others behind, naming ports nobody listens on any more."""
    logs = [home / "logs" / f"{service}.log"]
    if processes > 1:
        logs = [home / "logs" / f"{service}-{i}.log" for i in range(1, processes + 1)]
    return [url for log in logs if (url := _listening(log)) is not None]


def _listening(log: Path) -> str | None:
    if not log.is_file():
        return None
    url = None
    for line in log.read_text(errors="replace").splitlines():
        if '"metrics.listening"' in line:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                url = f"http://127.0.0.1:{int(orjson.loads(line)['port'])}/metrics"
    return url


class Watcher(threading.Thread):
    """``/v1/status`` about once a second, in the background while events are posted and
    drained; its count(*) of ``events`` costs Postgres a few ms per poll at a million rows.
    Every sample is written to ``log`` as it is taken, on the run's ``clock``, tagged with
    ``epoch``; ``samples`` starts with those of earlier epochs (a resumed run)."""

    def __init__(
        self,
        query_url: str,
        home: Path,
        clock: RunClock,
        epoch: int = 0,
        log: SampleLog | None = None,
        samples: Sequence[Sample] = (),
        interval: float = 1.0,
        embedders: int = 1,
    ) -> None:
        super().__init__(daemon=True)
        self.url = query_url
        self.home = home
        self.clock = clock
        self.epoch = epoch
        self.log = log
        self.interval = interval
        self.samples: list[Sample] = list(samples)
        self.halt = threading.Event()
        self.embedders = embedders
        self._model_urls: list[str] = []
        self._last_poll: float | None = None

    def run(self) -> None:
        with httpx.Client(timeout=10) as client:
            while not self.halt.is_set():
                sample = self._poll(client, self.stamp(time.monotonic()))
                if sample is not None:
                    self.samples.append(sample)
                    if self.log is not None:
                        self.log.append([sample])
                self.halt.wait(self.interval)

    def stamp(self, now: float) -> float:
        """The run-clock time of a poll begun at ``now`` (monotonic). A gap since the last poll
        far longer than a poll and its pause is the machine standing still (suspended, a
        paused VM): it is taken out of the run clock first, so that the interval across it
        counts for nothing (it would read as a consumer busy for hours without progress)."""
        if self._last_poll is not None:
            self.clock.stood_still(standstill(now - self._last_poll, self.interval))
        self._last_poll = now
        return self.clock.at(now)

    def _poll(self, client: httpx.Client, t: float) -> Sample | None:
        try:
            r = client.get(f"{self.url}/v1/status")
            st = r.json() if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        if not st:
            return None
        consumers = {c["name"]: c for c in st.get("consumers", []) if c.get("exists")}
        return Sample(
            t=t,
            stored=int(st.get("events_stored", 0)),
            backlog={n: int(c["pending"]) + int(c["ack_pending"]) for n, c in consumers.items()},
            floor={n: int(c["ack_floor"]) for n, c in consumers.items()},
            model=self._model(client),
            epoch=self.epoch,
            processes=self.embedders,
        )

    def _model(self, client: httpx.Client) -> ModelCounters | None:
        """The embedder's counters, its processes' summed (replicas); the ports are looked up
        again while one cannot be read (not logged yet, or an earlier start's): a sum with a
        process missing would read as a drop."""
        for _ in range(2):
            if not self._model_urls:
                self._model_urls = metrics_urls(self.home, "embedder", self.embedders)
                if len(self._model_urls) < self.embedders:
                    self._model_urls = []
                    return None
            total = ModelCounters(0.0, 0.0, 0.0)
            try:
                for url in self._model_urls:
                    r = client.get(url)
                    if r.status_code != 200:
                        return None
                    total += model_counters(r.text)
            except httpx.HTTPError:
                self._model_urls = []
                continue
            return total
        return None

    def latest(self) -> Sample | None:
        return self.samples[-1] if self.samples else None


def drained(sample: Sample, total: int) -> bool:
    """Every consumer exists and has nothing pending, and every event is stored."""
    return sample.stored == total and all(sample.backlog.get(n, 1) == 0 for n in CONSUMERS)


def wait_drained(product: Product, watcher: Watcher, total: int, stall_s: float) -> None:
    """Until drained with no open segment, three polls in a row (the last segments are closed
    by the segmenter's idle flush, then summarized, then indexed). Raises when nothing moved
    for ``stall_s`` (the time the machine stood still not counted)."""
    stable, last_move, last_state, last_print = 0, time.monotonic(), None, 0.0
    woke = last_move
    while stable < 3:
        time.sleep(1)
        now = time.monotonic()
        last_move += standstill(now - woke, 1.0)
        woke = now
        s = watcher.latest()
        if s is None:
            continue
        state = (s.stored, tuple(sorted(s.floor.items())))
        if state != last_state:
            last_state, last_move = state, now
        elif now - last_move > stall_s:
            raise RuntimeError(f"the pipeline made no progress for {stall_s:.0f} s: {s.backlog}")
        stable = stable + 1 if drained(s, total) and open_segments(product) == 0 else 0
        if now - last_print >= 30:
            busy = ", ".join(f"{n} {b:,}" for n, b in s.backlog.items() if b)
            print(f"    stored {s.stored:,} / {total:,}; backlog: {busy or 'none'}", flush=True)
            last_print = now


def caught_up_at(samples: Sequence[Sample], name: str) -> float | None:
    """When ``name`` was first seen with nothing pending after it was last seen busy (None:
    never seen busy)."""
    busy = [i for i, s in enumerate(samples) if s.backlog.get(name, 1) > 0]
    if not busy:
        return None
    after = busy[-1] + 1
    return samples[after].t if after < len(samples) else samples[-1].t


def busy_rate(samples: Sequence[Sample], *names: str, per_process: bool = False) -> float | None:
    """Messages/s of the consumers ``names`` together over the intervals that began with a
    backlog for any of them: their own speed, not the speed of whatever feeds them. An
    interval across a restart of the stack (two epochs) is not counted. ``per_process``: per
    second of each embedder process (an interval of a start with two counts twice), the
    figure to hold against the model on one thread when a resumed run changed ``--replicas``."""
    done, seconds = 0, 0.0
    for a, b in itertools.pairwise(samples):
        if a.epoch == b.epoch and any(a.backlog.get(n, 0) > 0 for n in names):
            done += sum(b.floor[n] - a.floor[n] for n in names if n in a.floor and n in b.floor)
            seconds += (b.t - a.t) * (a.processes if per_process else 1)
    return done / seconds if seconds > 0 and done > 0 else None


def _model_seconds(a: Sample, b: Sample) -> float:
    """The model's seconds between two samples (both with counters). The counters are lumpy
    (a batch's time is reported when it ends, several seconds in one poll), but an encoding
    call that was running while the machine stood still (a paused VM, the SIGSTOP a long run
    gets while tests run) reports the standstill too, which the run clock leaves out: more
    than a standstill's worth beyond the interval's own process-seconds, and the interval
    counts as busy throughout, no more."""
    assert a.model is not None and b.model is not None
    seconds = b.model.seconds - a.model.seconds
    own = (b.t - a.t) * a.processes
    return own if seconds > own + STANDSTILL_S * a.processes else seconds


def model_use(samples: Sequence[Sample], *names: str) -> dict[str, float] | None:
    """Over the same intervals as ``busy_rate`` (a backlog for any of ``names``): the texts and
    word pieces the embedder's model took per second of wall time, and the share of that time
    the model was running. The share is the embedder's own overhead measured directly: what is
    not model time is fetching, reading Postgres, locks, writing vectors, or waiting. The
    share and ``pieces_per_process_s`` are per embedder process (the model seconds of every
    process added up, over the wall time of each)."""
    texts = pieces = model_s = seconds = process_s = cpu_s = cpu_pieces = 0.0
    for a, b in itertools.pairwise(samples):
        if a.model is None or b.model is None or a.epoch != b.epoch:
            continue
        if any(a.backlog.get(n, 0) > 0 for n in names):
            texts += b.model.texts - a.model.texts
            pieces += b.model.pieces - a.model.pieces
            model_s += _model_seconds(a, b)
            seconds += b.t - a.t
            process_s += (b.t - a.t) * a.processes
            if a.model.cpu > 0 and b.model.cpu > a.model.cpu:
                cpu_s += b.model.cpu - a.model.cpu
                cpu_pieces += b.model.pieces - a.model.pieces
    if seconds <= 0 or texts <= 0:
        return None
    return {
        "texts_per_s": texts / seconds,
        "pieces_per_s": pieces / seconds,
        "pieces_per_process_s": pieces / process_s,
        "model_share": model_s / process_s,
        "pieces_per_text": pieces / texts,
        "pieces_per_cpu_s": cpu_pieces / cpu_s if cpu_s > 0 else 0.0,
        "cpu_share": cpu_s / process_s,
    }


# --------------------------------------------------------------------------------------------
# Measuring a store of a given size
# --------------------------------------------------------------------------------------------

WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]{2,}")
PREFIXES = ("", "", "", "where did we ", "what did we decide about ", "how did we fix ", "why ")


def make_queries(
    rng: random.Random, sources: Sequence[tuple[str, str]], count: int, seen: set[str]
) -> list[dict[str, Any]]:
    """What agents ask: a few words of something stored, sometimes as a question; 70% scoped
    to the project they came from; every string new in the run (``seen``), so every search
    embeds its query."""
    out: list[dict[str, Any]] = []
    for _ in range(count * 50):
        if len(out) == count:
            break
        project, text = rng.choice(sources)
        words = WORD.findall(text)
        if len(words) < 3:
            continue
        n = rng.randint(2, 6)
        start = rng.randrange(max(1, len(words) - n + 1))
        query = (rng.choice(PREFIXES) + " ".join(words[start : start + n])).strip()
        if query in seen:
            continue
        seen.add(query)
        body: dict[str, Any] = {"query": query, "limit": 10, "now": NOW.isoformat()}
        if rng.random() < 0.7:
            body["project_id"] = project
        out.append(body)
    return out


def time_searches(url: str, queries: Sequence[dict[str, Any]], warmup: int) -> dict[str, Any]:
    """Each configuration in turn on consecutive queries (one client, one search at a time),
    so that the machine's noise falls on all of them alike. Wall time per search, ms, and the
    median of each stage the server times (``explain.timings_ms``), so that a miss says where
    the time went: the query's embedding, an index, fusion, ranking, or outside the engine."""
    times: dict[str, list[float]] = {name: [] for name, _ in SEARCH_CONFIGS}
    results: dict[str, list[int]] = {name: [] for name, _ in SEARCH_CONFIGS}
    stages: dict[str, dict[str, list[float]]] = {name: {} for name, _ in SEARCH_CONFIGS}
    with httpx.Client(timeout=60) as client:
        for i, body in enumerate(queries):
            name, tiers = SEARCH_CONFIGS[i % len(SEARCH_CONFIGS)]
            payload = orjson.dumps({**body, "tiers": tiers} if tiers else body)
            ms, answer = timed_search(client, url, payload)
            if i >= warmup * len(SEARCH_CONFIGS):
                times[name].append(ms)
                results[name].append(len(answer["results"]))
                for stage, value in answer["explain"]["timings_ms"].items():
                    stages[name].setdefault(stage, []).append(float(value))
    return {
        name: {
            **latency(times[name]),
            "results_mean": round(sum(results[name]) / max(1, len(results[name])), 2),
            "server_p50_ms": server_stages(stages[name], len(times[name])),
        }
        for name in times
    }


def ab_order(i: int) -> str:
    """The order query ``i`` (of a run through every configuration) is asked of the two
    services: AB, then BA for the next round, and so on (ABBA), so that neither always goes
    first, when a just-read page or a just-run model favours the second."""
    return "AB" if (i // len(SEARCH_CONFIGS)) % 2 == 0 else "BA"


def paired(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """B against A over the same questions: the median of B - A per question (the machine's
    drift cancels, as both answered within milliseconds of each other), how often B was faster,
    and B's p50 over A's."""
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    return {
        "median_b_minus_a_ms": round(percentile(diffs, 50), 2),
        "b_faster_share": round(sum(d < 0 for d in diffs) / max(1, len(diffs)), 3),
        "p50_ratio_b_a": round(percentile(b, 50) / max(percentile(a, 50), 1e-9), 3),
    }


def time_searches_ab(
    urls: dict[str, str], queries: Sequence[dict[str, Any]], warmup: int
) -> dict[str, Any]:
    """Every query asked of both services ``urls["A"]`` and ``urls["B"]``, one right after the
    other in ABBA order (one client, one search at a time): a paired comparison of two
    query-side settings on one store. Per configuration: each side's latency and server
    stages, and ``paired``."""
    names = [name for name, _ in SEARCH_CONFIGS]
    times: dict[str, dict[str, list[float]]] = {side: {name: [] for name in names} for side in "AB"}
    stages: dict[str, dict[str, dict[str, list[float]]]] = {
        side: {name: {} for name in names} for side in "AB"
    }
    with httpx.Client(timeout=60) as client:
        for i, body in enumerate(queries):
            name, tiers = SEARCH_CONFIGS[i % len(SEARCH_CONFIGS)]
            payload = orjson.dumps({**body, "tiers": tiers} if tiers else body)
            for side in ab_order(i):
                ms, answer = timed_search(client, urls[side], payload)
                if i >= warmup * len(SEARCH_CONFIGS):
                    times[side][name].append(ms)
                    for stage, value in answer["explain"]["timings_ms"].items():
                        stages[side][name].setdefault(stage, []).append(float(value))
    return {
        name: {
            **{
                side: {
                    **latency(times[side][name]),
                    "server_p50_ms": server_stages(stages[side][name], len(times[side][name])),
                }
                for side in "AB"
            },
            "paired": paired(times["A"][name], times["B"][name]),
        }
        for name in names
    }


def ab_rows(search: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    rows = [("tier", "A p50 / p95 ms", "B p50 / p95 ms", "B - A per question (median); B faster")]
    for name, r in search.items():
        a, b, d = r["A"], r["B"], r["paired"]
        rows.append(
            (
                name,
                f"{a['p50']:.1f} / {a['p95']:.1f}",
                f"{b['p50']:.1f} / {b['p95']:.1f}",
                f"{d['median_b_minus_a_ms']:+.1f} ms; {d['b_faster_share']:.0%}",
            )
        )
    return rows


def server_stages(stages: dict[str, list[float]], searches: int) -> dict[str, float]:
    """The median of each stage the server timed in at least half the searches (a stage timed
    only now and then, such as a fallback, would mislead as a median)."""
    return {
        stage: round(percentile(values, 50), 2)
        for stage, values in stages.items()
        if len(values) * 2 >= searches
    }


def latency(values: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), 2),
        "p95": round(percentile(values, 95), 2),
        "p99": round(percentile(values, 99), 2),
    }


def descend(client: httpx.Client, rng: random.Random, project: str) -> int:
    """Years -> month -> week -> day -> a segment, its node and its events: the calls an agent
    makes to walk down the TOC. Returns the number of calls (0: the project has no TOC)."""

    def get(path: str, **params: Any) -> dict[str, Any]:
        return get_json(client, path, **params)

    years = get("/v1/toc", project_id=project)["years"]
    if not years:
        return 0
    node = rng.choice(years)
    calls = 1
    while node["level"] != "segment" and calls < 8:
        children = get(f"/v1/toc/nodes/{node['node_id']}/children")["children"]
        calls += 1
        if not children:
            return calls
        node = rng.choice(children)
    get(f"/v1/toc/nodes/{node['node_id']}")
    get(f"/v1/toc/nodes/{node['node_id']}/children")
    return calls + 2


def time_descents(url: str, projects: Sequence[str], rng: random.Random, n: int) -> list[float]:
    times: list[float] = []
    with httpx.Client(base_url=url, timeout=60) as client:
        for i in range(n + 5):
            t0 = time.perf_counter()
            calls = descend(client, rng, rng.choice(projects))
            ms = (time.perf_counter() - t0) * 1000
            if i >= 5 and calls:  # five warm-ups
                times.append(ms)
    return times


def time_topic_lists(
    url: str, projects: Sequence[str], rng: random.Random, n: int
) -> tuple[list[float], float]:
    """``GET /v1/topics?project_id=`` (20 topics by importance); ms, and topics per answer."""
    times: list[float] = []
    found = 0
    with httpx.Client(base_url=url, timeout=60) as client:
        for i in range(n + 5):
            t0 = time.perf_counter()
            r = client.get("/v1/topics", params={"project_id": rng.choice(projects)})
            ms = (time.perf_counter() - t0) * 1000
            if r.status_code != 200:
                raise RuntimeError(f"GET /v1/topics: {r.status_code} {r.text[:300]}")
            if i >= 5:
                times.append(ms)
                found += len(r.json()["topics"])
    return times, found / max(1, n)


def dir_bytes(path: Path) -> int:
    """Disk used under ``path`` (allocated blocks, as du counts)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(FileNotFoundError):  # rotated away meanwhile
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


def disk_usage(product: Product) -> dict[str, int]:
    home = product.workdir / "home"
    with psycopg.connect(product.pg_dsn) as conn:
        row = conn.execute(
            "SELECT pg_database_size(current_database()), pg_total_relation_size('events'),"
            # a partitioned table has no storage of its own: its partitions hold the rows
            " (SELECT COALESCE(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits"
            "  WHERE inhparent = 'vector_docs'::regclass)"
            " + pg_total_relation_size('vector_docs')"
        ).fetchone()
    assert row is not None
    return {
        "postgres": int(row[0]),
        "postgres_events": int(row[1]),
        "postgres_pgvector": int(row[2]),
        "postgres_dir": dir_bytes(home / "postgres"),  # WAL included
        "jetstream": dir_bytes(home / "nats"),
        "tantivy": dir_bytes(home / "tantivy"),
    }


@dataclass(frozen=True)
class ModelBench:
    """all-MiniLM-L6-v2 alone, loaded and run as the embedder service runs it: its default
    fetch batch, encode batch, runtime (the ONNX export or torch) and threads, at its CPU
    niceness (the consumers lower
    theirs; on a shared machine the same niceness gets the same share of the cores)."""

    fetch_batch: int = field(default_factory=lambda: EmbedderOptions().batch_size)
    encode_batch: int | None = RetrievalSettings.model_fields["embedding_batch_size"].default
    threads: int = int(RetrievalSettings.model_fields["torch_threads"].default)
    nice: int = int(RetrievalSettings.model_fields["background_nice"].default)
    onnx: bool = bool(RetrievalSettings.model_fields["embedding_onnx"].default)
    precision: str = str(RetrievalSettings.model_fields["embedding_precision"].default)
    max_tokens: int = int(RetrievalSettings.model_fields["embedding_max_tokens"].default)
    bfloat16: str = str(RetrievalSettings.model_fields["embedding_bfloat16"].default)

    def settings(self) -> RetrievalSettings:
        """The embedding settings the model alone is loaded with: the embedder's."""
        return RetrievalSettings(
            embedding_batch_size=self.encode_batch,
            torch_threads=self.threads,
            embedding_onnx=self.onnx,
            embedding_precision=self.precision,
            embedding_max_tokens=self.max_tokens,
            embedding_bfloat16=self.bfloat16,
        )

    def runtime(self) -> tuple[str, int]:
        """What the embedder runs batches through with these settings, and its texts per run
        (``load_embedder``'s own choice)."""
        from agent_memory_retrieval.adapters.factory import batch_runtime

        bf16, batch = batch_runtime(self.settings())
        return "bfloat16" if bf16 else (self.precision if self.onnx else "torch"), batch

    def rates(self, texts: Sequence[str], processes: int = 1) -> tuple[float, float, float]:
        """Texts/s, word pieces/s and word pieces per CPU second of one process. In child
        processes, so that this one (the HTTP client timing the searches) keeps its priority
        and does not hold torch's memory. ``processes`` > 1: that many at once, timed
        together after each has loaded the model (the cores shared as the embedder's
        replicas share them), their mean."""
        ctx = mp.get_context("spawn")
        queue: mp.Queue[tuple[float, float, float]] = ctx.Queue()
        start = ctx.Barrier(processes)
        children = [
            ctx.Process(target=_embed_alone, args=(self, list(texts), queue, start))
            for _ in range(processes)
        ]
        for child in children:
            child.start()
        try:
            got = [queue.get(timeout=7200) for _ in children]
            return (
                statistics.fmean(g[0] for g in got),
                statistics.fmean(g[1] for g in got),
                statistics.fmean(g[2] for g in got),
            )
        finally:
            for child in children:
                child.join(timeout=30)
                if child.is_alive():
                    child.kill()


def _embed_alone(
    setup: ModelBench,
    texts: list[str],
    queue: mp.Queue[tuple[float, float, float]],
    start: threading.Barrier | None = None,
) -> None:
    """Texts/s and word pieces/s over ``texts`` in the embedder's fetch batches, after one
    untimed batch (and, with ``start``, once every process of the measurement is ready).
    Pieces, because the embedder embeds TOC nodes and grips too, shorter or longer than
    events: pieces are what the model's time grows with."""
    from agent_memory_retrieval.adapters.factory import load_embedder
    from agent_memory_retrieval.adapters.minilm import MiniLMEmbedder
    from agent_memory_retrieval.adapters.onnx_only import OnnxOnlyEmbedder

    os.nice(setup.nice)
    embedder = load_embedder(setup.settings())
    # what the embedder service loads: in full, or its stamped ONNX export alone
    assert isinstance(embedder, MiniLMEmbedder | OnnxOnlyEmbedder)
    pieces = embedder.pieces(texts)
    embedder.embed(texts[: setup.fetch_batch])
    if start is not None:
        start.wait(timeout=600)
    t0, cpu0 = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), setup.fetch_batch):
        embedder.embed(texts[i : i + setup.fetch_batch])
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    queue.put((len(texts) / seconds, pieces / seconds, pieces / cpu))


# --------------------------------------------------------------------------------------------
# One checkpoint, the report, the plot
# --------------------------------------------------------------------------------------------


@dataclass
class Run:
    args: argparse.Namespace
    product: Product
    pools: Pools
    stream: Iterator[dict[str, Any]]
    model: ModelBench = field(default_factory=ModelBench)
    posted: int = 0
    projects: set[str] = field(default_factory=set)
    sources: list[tuple[str, str]] = field(default_factory=list)  # reservoir for queries
    seen_queries: set[str] = field(default_factory=set)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)

    def take(self, n: int) -> list[dict[str, Any]]:
        """The next ``n`` events of the stream; a reservoir of them is kept for queries."""
        events = list(itertools.islice(self.stream, n))
        rng = random.Random(f"reservoir/{self.args.seed}/{self.posted}")
        for i, e in enumerate(events, self.posted):
            self.projects.add(e["project_id"])
            item = (e["project_id"], e["text"])
            if len(self.sources) < 20_000:
                self.sources.append(item)
            elif (j := rng.randrange(i + 1)) < 20_000:
                self.sources[j] = item
        return events


def ingest_and_drain(run: Run, size: int, state: State) -> dict[str, Any]:
    """Post the increment up to ``size`` and watch every consumer catch up; when ``state``
    says a stopped run was filling this size, go on from where it stopped (a post cut short
    is sent again: the gateway takes each event id once)."""
    a = run.args
    events = run.take(size - run.posted)
    texts = embedding_texts(events)
    sample = random.Random(a.seed + size).sample(texts, min(a.model_sample, len(texts)))
    log = state.samples(size)
    if state.size != size:
        state.size, state.post = size, None
        state.save()
    if state.post is None:
        log.clear()  # the drain is timed from the end of the post: a new post, a new record
    clock, epoch, earlier = resume_clock(log, state.post)
    embedders = replicas(a)
    watcher = Watcher(
        run.product.query_url,
        run.product.workdir / "home",
        clock,
        epoch,
        log,
        earlier,
        embedders=embedders,
    )
    watcher.start()
    try:
        if state.post is None:
            bodies = encode_batches(events, a.batch)
            del events
            requests = f"{len(bodies):,} requests, {a.clients} clients"
            print(f"  posting {len(texts):,} events ({requests})")
            sent, done = post_all(run.product.gateway_url, bodies, a.clients)
            del bodies
            state.post = {"first": clock.at(sent), "last": clock.at(done)}
            state.save()
            print(f"    accepted in {done - sent:.1f} s; waiting for every consumer", flush=True)
        else:
            del events
            print(f"  the {len(texts):,} events were posted; waiting for every consumer "
                  f"(stack start {epoch + 1} of this size, {embedders} embedder process(es))",
                  flush=True)  # fmt: skip
        wait_drained(run.product, watcher, size, a.stall)
    finally:
        watcher.halt.set()
        watcher.join()
    run.posted = size
    first, last = state.post["first"], state.post["last"]
    samples = [s for s in watcher.samples if s.t >= first]
    consumers: dict[str, dict[str, float | None]] = {}
    for name in CONSUMERS:
        at = caught_up_at(samples, name)
        rate = busy_rate(samples, name)
        consumers[name] = {
            "drain_s": round(max(0.0, at - last), 1) if at is not None else 0.0,
            "busy_msgs_per_s": _round(rate),
        }
    # the first poll that found every event in the table; with polls a second apart, a lower
    # bound of the rate when the increment is recorded within a few seconds
    recorded_at = next((s.t for s in samples if s.stored >= size), samples[-1].t)
    # the model alone, as many processes at once as the embedder has now (the drain's last
    # start): each process's rate with the cores shared the same way
    print(
        f"    drained; measuring the model alone on {len(sample):,} texts"
        + (f", {embedders} processes at once" if embedders > 1 else ""),
        flush=True,
    )
    model, model_pieces, model_cpu_pieces = run.model.rates(sample, embedders)
    runtime = run.model.runtime()
    embedder = consumers["embedder"]["busy_msgs_per_s"]
    each = busy_rate(samples, "embedder", per_process=True)
    use = model_use(samples, "embedder", "embedder-toc")
    starts = start_rates(samples)
    return {
        "size": size,
        "increment": len(texts),
        # 1 unless the run was stopped and resumed while this size drained
        "stack_starts": len({s.epoch for s in samples}),
        "accepted_per_s": round(len(texts) / (last - first), 1),
        "recorded_per_s": round(len(texts) / max(recorded_at - first, 1e-9), 1),
        "post_s": round(last - first, 2),
        "duplicates_stored": _duplicates(run.product),
        "consumers": consumers,
        "embedder": {
            "events_per_s": embedder,
            # the same process embeds TOC node versions too, under the same model lock
            "with_toc_per_s": _round(busy_rate(samples, "embedder", "embedder-toc")),
            "model_texts_per_s": round(model, 1),
            "model_processes": embedders,
            "processes": embedders,
            # each start of the stack apart: its process count and rates
            "starts": starts,
            # each start's count, in order: more than one when a resumed run changed it
            "processes_by_start": [s["processes"] for s in starts],
            # per process: the model alone ran as model_processes processes at once, one
            # thread each, as the embedder's processes share the cores
            "ratio": round(each / model, 3) if each else None,
            "model_pieces_per_s": round(model_pieces, 1),
            # from the embedder's own /metrics: every text it embedded (events, TOC nodes and
            # their grips), while it was behind
            "texts_per_s": _round(use["texts_per_s"]) if use else None,
            "pieces_per_s": _round(use["pieces_per_s"]) if use else None,
            "pieces_per_text": _round(use["pieces_per_text"]) if use else None,
            "model_share": round(use["model_share"], 3) if use else None,
            "pieces_ratio": (round(use["pieces_per_process_s"] / model_pieces, 3) if use else None),
            # the same per CPU second, the embedder's and the model's alone: what the embedder
            # does besides the model (decoding, Postgres, NATS), whatever share of the cores
            # the other consumers took while it drained (the wall-time ratio above counts both)
            "model_pieces_per_cpu_s": round(model_cpu_pieces, 1),
            "cpu_ratio": (
                round(use["pieces_per_cpu_s"] / model_cpu_pieces, 3)
                if use and use.get("pieces_per_cpu_s")
                else None
            ),
            "cpu_share": round(use["cpu_share"], 3) if use and use.get("cpu_share") else None,
            "model_sample": len(sample),
            "fetch_batch": run.model.fetch_batch,
            "encode_batch": runtime[1],
            "runtime": runtime[0],
            "torch_threads": run.model.threads,
            "onnx": run.model.onnx,
            "precision": run.model.precision,
            "max_tokens": run.model.max_tokens,
            "nice": run.model.nice,
        },
    }


def start_rates(samples: Sequence[Sample]) -> list[dict[str, float | int | None]]:
    """Each start of the stack (epoch) apart, in order: its embedder processes, how long the
    embedder was behind, events/s (all processes, and per process) and word pieces/s per
    process: a run resumed with another ``--replicas``, or disturbed in one start, is read
    start by start."""
    out: list[dict[str, float | int | None]] = []
    for epoch in sorted({s.epoch for s in samples}):
        part = [s for s in samples if s.epoch == epoch]
        busy = sum(
            b.t - a.t for a, b in itertools.pairwise(part) if a.backlog.get("embedder", 0) > 0
        )
        use = model_use(part, "embedder", "embedder-toc")
        out.append(
            {
                "epoch": epoch,
                "processes": part[0].processes,
                "behind_s": round(busy, 1),
                "events_per_s": _round(busy_rate(part, "embedder")),
                "events_per_process_s": _round(busy_rate(part, "embedder", per_process=True)),
                "pieces_per_process_s": _round(use["pieces_per_process_s"]) if use else None,
            }
        )
    return out


def _per_process(e: dict[str, Any]) -> str:
    """The label's tail for the per-process figures: nothing for one process."""
    counts = e.get("processes_by_start") or [e.get("processes", 1)]
    if len(set(counts)) > 1:
        return f", per process ({' then '.join(str(n) for n in dict.fromkeys(counts))} processes)"
    return f", per process of {counts[0]}" if counts[0] > 1 else ""


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _duplicates(product: Product) -> int:
    with httpx.Client(timeout=10) as client:
        st = client.get(f"{product.query_url}/v1/status").json()
    return int(st.get("duplicates_stored", 0))


def stack_env(args: argparse.Namespace) -> dict[str, str]:
    """The run's ``--env`` settings (a run begun before the option had none)."""
    return dict(item.split("=", 1) for item in getattr(args, "env", None) or ())


def model_bench(env: dict[str, str]) -> ModelBench:
    """The model alone as the stack's embedder runs it: the defaults, with the run's settings
    (and nothing from this process's own environment, which the stack does not get either)."""
    saved = {k: v for k, v in os.environ.items() if k.startswith("AGENT_MEMORY_")}
    for k in saved:
        del os.environ[k]
    os.environ.update(env)
    try:
        s = EmbedderSettings()
    finally:
        for k in env:
            os.environ.pop(k, None)
        os.environ.update(saved)
    return ModelBench(
        fetch_batch=s.embedder.batch_size,
        encode_batch=s.embedding_batch_size,
        threads=s.torch_threads,
        nice=s.background_nice,
        onnx=s.embedding_onnx,
        precision=s.embedding_precision,
        max_tokens=s.embedding_max_tokens,
        bfloat16=s.embedding_bfloat16,
    )


def replicas(args: argparse.Namespace) -> int:
    """Embedder processes of the run (a run begun before the option had one)."""
    return int(getattr(args, "replicas", None) or 1)


def up_args(args: argparse.Namespace) -> tuple[str, ...]:
    n = replicas(args)
    return ("--replicas", f"embedder={n}") if n > 1 else ()


# A remeasure searches a finished store: the query service answers (with the gateway, which the
# stack's readiness check asks), and the services that write behind them would add nothing but
# their own start-up load to the searches it times.
FRONT = ("gateway", "query")
QUERY_ONLY = ("--without", ",".join(svc.name for svc in SERVICES if svc.name not in FRONT))


def query_count(args: argparse.Namespace) -> int:
    return (int(args.queries) + int(args.warmup)) * len(SEARCH_CONFIGS)


def replay(run: Run) -> None:
    """A resumed run brought back to where its measured sizes left it: their events taken
    from the stream again in the same increments (the query reservoir and the projects), and
    their queries made again, so that no query of the sizes to come repeats one of theirs."""
    for cp in run.checkpoints:
        size = int(cp["size"])
        run.take(size - run.posted)
        run.posted = size
        rng = random.Random(f"measure/{run.args.seed}/{size}")
        make_queries(rng, run.sources, query_count(run.args), run.seen_queries)


def measure_queries(run: Run, rng: random.Random) -> list[dict[str, Any]]:
    """The questions a size is measured with: new to the run, the same at every remeasure."""
    return make_queries(rng, run.sources, query_count(run.args), run.seen_queries)


def measure_store(run: Run, size: int) -> dict[str, Any]:
    """Latencies and disk at the current size, the stack idle."""
    a = run.args
    rng = random.Random(f"measure/{a.seed}/{size}")
    queries = measure_queries(run, rng)
    print(f"    searching ({a.queries} timed queries per tier)", flush=True)
    load_before = os.getloadavg()[0]
    search = time_searches(run.product.query_url, queries, a.warmup)
    search_load = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    projects = sorted(run.projects)
    descents = time_descents(run.product.query_url, projects, rng, a.descents)
    topic_ms, topics_per_answer = time_topic_lists(
        run.product.query_url, projects, rng, a.topic_calls
    )
    disk = disk_usage(run.product)
    return {
        "search": search,
        # the 1-minute load average as the searches began and ended: a stage still busy after
        # the drain (autovacuum, the topic clusterer) shows here
        "search_load": search_load,
        "toc_descent": latency(descents) if descents else None,
        "topics_list": {**latency(topic_ms), "topics_mean": round(topics_per_answer, 1)},
        "disk": disk,
        "disk_per_event": {k: round(v / size, 1) for k, v in disk.items()},
        "load_average": [round(v, 2) for v in os.getloadavg()],
    }


def verdict(value: float | None, ok: bool) -> str:
    return "-" if value is None else ("PASS" if ok else "MISS")


def slowest_stage(consumers: dict[str, dict[str, float | None]]) -> tuple[str, float, bool]:
    """The consumer that caught up latest relative to the embedder, how long after it, and
    whether every consumer counts as not slower: an event-fed one catches up no later than the
    embedder, a segment-fed one within ``SEGMENT_ALLOWANCE_S`` after it."""
    emb = float(consumers["embedder"]["drain_s"] or 0.0)
    excess = {
        name: float(c["drain_s"] or 0.0) - emb - (0.0 if name in EVENT_FED else SEGMENT_ALLOWANCE_S)
        for name, c in consumers.items()
        if name != "embedder"
    }
    worst = max(excess, key=lambda name: excess[name])
    lag = float(consumers[worst]["drain_s"] or 0.0) - emb
    return worst, lag, all(v <= 0 for v in excess.values())


def result_rows(cp: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(figure, value, target, verdict) for one checkpoint: its drain, then its store."""
    rows = [
        ("events/s accepted (gateway)", f"{cp['accepted_per_s']:,.0f}", "-", "-"),
        ("events/s recorded (recorder)", f"{cp['recorded_per_s']:,.0f}", "-", "-"),
        ("duplicates stored (dedup at ingest)", f"{cp['duplicates_stored']:,}", "-", "-"),
    ]
    for name, c in cp["consumers"].items():
        rate = c["busy_msgs_per_s"]
        extra = f" ({rate:,.0f} msg/s while behind)" if rate else ""
        rows.append((f"drain after posting: {name}", f"{c['drain_s']:.1f} s{extra}", "-", "-"))
    e = cp["embedder"]
    rows.append(("embedder events/s while behind", _num(e["events_per_s"]), "-", "-"))
    rows.append(("  events + TOC versions/s", _num(e["with_toc_per_s"]), "-", "-"))
    runtime = e.get("runtime") or ("onnx" if e.get("onnx") else "torch")  # older runs: no name
    rows.append(
        (
            f"model alone texts/s ({runtime}, batch "
            f"{e['fetch_batch']}/{e['encode_batch']}, {e['torch_threads']} thread"
            + (f", {n} processes at once" if (n := e.get("model_processes", 1)) > 1 else "")
            + ")",
            _num(e["model_texts_per_s"]),
            "-",
            "-",
        )
    )
    ratio, pieces = e["ratio"], e.get("pieces_ratio")
    shown = "n/a" if ratio is None else f"{ratio:.2f}"
    each = _per_process(e)
    rows.append((f"embedder events/s / model texts/s{each}", shown, "-", "-"))
    if pieces is not None:
        per_text = e["model_pieces_per_s"] / e["model_texts_per_s"]
        rows += [
            ("embedder texts/s, all kinds (its /metrics)", _num(e["texts_per_s"]), "-", "-"),
            (
                "  word pieces per text, embedder / model sample",
                f"{e['pieces_per_text']:.0f} / {per_text:.0f}",
                "-",
                "-",
            ),
            (
                f"embedder / model (word pieces/s){each}",
                f"{pieces:.2f}",
                f">= {TARGET_EMBEDDER_RATIO:.1f}",
                verdict(pieces, pieces >= TARGET_EMBEDDER_RATIO),
            ),
        ]
        rows.append(
            (f"  share of its time in the model{each}", f"{e['model_share']:.0%}", "-", "-")
        )
    if (cpu := e.get("cpu_ratio")) is not None:
        rows += [
            (
                f"embedder / model (word pieces per CPU second){each}",
                f"{cpu:.2f}",
                f">= {TARGET_EMBEDDER_RATIO:.1f}",
                verdict(cpu, cpu >= TARGET_EMBEDDER_RATIO),
            ),
            (f"  share of a core it got while behind{each}", f"{e['cpu_share']:.0%}", "-", "-"),
        ]
    worst, lag, ok = slowest_stage(cp["consumers"])
    rows.append(
        (
            "last to catch up vs embedder",
            f"{worst} {lag:+.1f} s",
            f"<= 0 s (+{SEGMENT_ALLOWANCE_S:.0f} s segment-fed)",
            "PASS" if ok else "MISS",
        )
    )
    return rows + store_rows(cp)


def store_rows(cp: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The rows of ``measure_store``: searches, TOC descents, topic listings, disk."""
    rows: list[tuple[str, str, str, str]] = []
    for name, s in cp["search"].items():
        rows.append(
            (f"search {name} p50", f"{s['p50']:.1f} ms", f"<= {TARGET_P50_MS:.0f} ms",
             verdict(s["p50"], s["p50"] <= TARGET_P50_MS))
        )  # fmt: skip
        if server := s.get("server_p50_ms"):
            rows.append((f"  {name}: server p50 ms", stage_line(server), "-", "-"))
        rows.append(
            (f"search {name} p95", f"{s['p95']:.1f} ms", f"<= {TARGET_P95_MS:.0f} ms",
             verdict(s["p95"], s["p95"] <= TARGET_P95_MS))
        )  # fmt: skip
    if load := cp.get("search_load"):
        rows.append(
            ("  load average during the searches", f"{load[0]:.2f} -> {load[1]:.2f}", "-", "-")
        )
    d = cp["toc_descent"]
    if d:
        rows.append(("TOC descent p50 / p95", f"{d['p50']:.1f} / {d['p95']:.1f} ms", "-", "-"))
    t = cp["topics_list"]
    rows.append(("topic listing p50", f"{t['p50']:.1f} ms ({t['topics_mean']} topics)", "-", "-"))
    per = cp["disk_per_event"]
    for key, label in (
        ("postgres", "disk/event Postgres database"),
        ("postgres_pgvector", "  of which pgvector (vector_docs)"),
        ("postgres_events", "  of which events table"),
        ("jetstream", "disk/event JetStream"),
        ("tantivy", "disk/event Tantivy"),
    ):
        rows.append((label, f"{per[key]:,.0f} B", "-", "-"))
    return rows


# the stages worth reading first, in the order a search runs them; the rest follow
STAGE_ORDER = ("total", "embed", "vector", "bm25", "fuse", "access", "rank", "scope", "attribute")


def stage_line(server: dict[str, float]) -> str:
    """``total 21.0, embed 6.1, ...``: the server's stage medians, main stages first."""
    names = [n for n in STAGE_ORDER if n in server] + sorted(set(server) - set(STAGE_ORDER))
    return ", ".join(f"{n} {server[n]:.1f}" for n in names)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f}"


def series(checkpoints: Sequence[dict[str, Any]]) -> dict[str, list[float | None]]:
    """The latencies plotted against store size, one list per line (None: not measured)."""
    out: dict[str, list[float | None]] = {}
    for name, _ in SEARCH_CONFIGS:
        for p in ("p50", "p95"):
            out[f"search {name} {p}"] = [cp["search"][name][p] for cp in checkpoints]
    out["TOC descent p50"] = [
        cp["toc_descent"]["p50"] if cp["toc_descent"] else None for cp in checkpoints
    ]
    out["topic listing p50"] = [cp["topics_list"]["p50"] for cp in checkpoints]
    return out


# the server's stages of the default search plotted beside the latencies: what grows
PLOTTED_STAGES = ("total", "embed", "vector", "bm25", "segments", "access", "rank")


def stage_series(checkpoints: Sequence[dict[str, Any]]) -> dict[str, list[float | None]]:
    """The server's stage medians of the default search (``full``), one list per stage."""
    out: dict[str, list[float | None]] = {}
    for stage in PLOTTED_STAGES:
        values = [cp["search"]["full"].get("server_p50_ms", {}).get(stage) for cp in checkpoints]
        if any(v is not None for v in values):
            # the vector tier's time starts with the query's embedding
            label = "vector (embed included)" if stage == "vector" else stage
            out[f"full: {label}"] = values
    return out


def growth(checkpoints: Sequence[dict[str, Any]]) -> list[tuple[str, float, float, float, str]]:
    """What grows with the store and what does not: each latency, disk per event and rate
    from the first size to the last, and their ratio (flat within 25%)."""
    if len(checkpoints) < 2:
        return []
    first, last = checkpoints[0], checkpoints[-1]
    lines: dict[str, tuple[float | None, float | None]] = {
        k: (v[0], v[-1]) for k, v in {**series(checkpoints), **stage_series(checkpoints)}.items()
    }
    for key in ("postgres", "jetstream", "tantivy"):
        lines[f"disk/event {key}"] = (first["disk_per_event"][key], last["disk_per_event"][key])
    lines["embedder events/s"] = (
        first["embedder"]["events_per_s"],
        last["embedder"]["events_per_s"],
    )
    lines["recorded events/s"] = (first["recorded_per_s"], last["recorded_per_s"])
    out = []
    for label, (a, b) in lines.items():
        if not a or not b:
            continue
        factor = b / a
        word = "grows" if factor >= 1.25 else "falls" if factor <= 0.8 else "flat"
        out.append((label, a, b, factor, word))
    return out


def write_plot(
    path: Path,
    sizes: Sequence[int],
    lines: dict[str, list[float | None]],
    stages: dict[str, list[float | None]] | None = None,
) -> None:
    """Latency against store size, log x axis, the search targets as dashed lines; beside it,
    when ``stages`` has any, the server's stage medians of the default search, so the plot
    says which part of a search grows with the store (Agg: no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if stages else 1
    fig, axes = plt.subplots(1, panels, figsize=(9 + 6 * (panels - 1), 5.5), dpi=110)
    ax = axes[0] if panels == 2 else axes
    _draw(ax, sizes, lines)
    ax.axhline(TARGET_P50_MS, color="grey", lw=0.8, ls=":", label="search targets (p50, p95)")
    ax.axhline(TARGET_P95_MS, color="grey", lw=0.8, ls=":")
    ax.set_ylabel("latency, ms (one client, query embedding included)")
    ax.set_title("agent-memory: latency against store size")
    ax.legend(fontsize=7, ncol=2)
    if stages:
        right = axes[1]
        _draw(right, sizes, stages)
        right.set_ylabel("server stage median, ms (explain.timings_ms)")
        right.set_title("where the default search's time goes")
        right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def _draw(ax: Any, sizes: Sequence[int], lines: dict[str, list[float | None]]) -> None:
    """One line per entry (a p95 dashed with hollow markers, in its p50's colour)."""
    import matplotlib.pyplot as plt

    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    bases = list(dict.fromkeys(k.rsplit(" ", 1)[0] if k.endswith(("p50", "p95")) else k
                               for k in lines))  # fmt: skip
    for i, (label, values) in enumerate(lines.items()):
        points = [(s, v) for s, v in zip(sizes, values, strict=True) if v is not None]
        if not points:
            continue
        p95 = label.endswith("p95")
        base = label.rsplit(" ", 1)[0] if label.endswith(("p50", "p95")) else label
        colour = colours[bases.index(base) % len(colours)]
        xs, ys = zip(*points, strict=True)
        ax.plot(
            xs,
            ys,
            "--" if p95 else "-",
            marker="v" if p95 else "o",
            markerfacecolor="none" if p95 else colour,
            color=colour,
            label=label,
            zorder=3 + i % 2,
        )
    ax.set_xscale("log")
    ax.set_xticks(list(sizes), [f"{s:,}" for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel("events in the store")
    ax.grid(True, alpha=0.3)


def save(run: Run, out: Path) -> None:
    """scale.json and scale.png, rewritten after every size."""
    doc = {
        "benchmark": "bench-scale",
        "seed": run.args.seed,
        "sizes": run.args.sizes,
        "batch": run.args.batch,
        "clients": run.args.clients,
        "sources": list(run.pools.sources),
        "machine": machine(),
        "checkpoints": run.checkpoints,
        "growth": [
            {"figure": g[0], "first": g[1], "last": g[2], "factor": round(g[3], 3), "trend": g[4]}
            for g in growth(run.checkpoints)
        ],
    }
    (out / "scale.json").write_text(json.dumps(doc, indent=1) + "\n")
    sizes = [cp["size"] for cp in run.checkpoints]
    write_plot(out / "scale.png", sizes, series(run.checkpoints), stage_series(run.checkpoints))


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average": [round(v, 2) for v in os.getloadavg()],
    }


def print_report(run: Run) -> None:
    for cp in run.checkpoints:
        print(f"\nat {cp['size']:,} events (+{cp['increment']:,})")
        rows = [("figure", "value", "target", ""), *result_rows(cp)]
        print(table(rows, [False, True, True, False]))
    trend = growth(run.checkpoints)
    if trend:
        first, last = run.checkpoints[0]["size"], run.checkpoints[-1]["size"]
        print(f"\nfrom {first:,} to {last:,} events (x{last / first:,.0f}):")
        head = ("figure", f"at {first:,}", f"at {last:,}", "ratio", "")
        trend_rows = [(g[0], f"{g[1]:,.1f}", f"{g[2]:,.1f}", f"x{g[3]:.2f}", g[4]) for g in trend]
        print(table([head, *trend_rows], [False, True, True, True, False]))


# --------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="store sizes")
    p.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES}: a smoke run")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", type=Path, help="results folder (default: a new one in the temp dir)")
    p.add_argument("--batch", type=int, default=200, help="events per request")
    p.add_argument("--clients", type=int, default=4, help="posting threads")
    p.add_argument("--queries", type=int, default=200, help="timed searches per tier and size")
    p.add_argument("--warmup", type=int, default=10, help="untimed searches per tier first")
    p.add_argument("--descents", type=int, default=100, help="timed TOC descents per size")
    p.add_argument("--topic-calls", type=int, default=100, help="timed topic listings per size")
    p.add_argument("--model-sample", type=int, default=512, help="texts the model embeds alone")
    p.add_argument("--stall", type=float, default=900, help="fail after this long with no progress")
    p.add_argument(
        "--replicas",
        type=int,
        help="embedder processes (agent-memory up --replicas embedder=N): one per core; "
        "1 unless given. With --resume: the processes from this start on",
    )
    p.add_argument("--no-locomo", action="store_true", help="conversations without LoCoMo")
    p.add_argument("--keep", action="store_true", help="keep the stack's work folder")
    p.add_argument(
        "--remeasure",
        type=Path,
        metavar="RESULTS",
        help="search again the store a finished run kept (--keep), written to remeasure-*.json",
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting of the stack (AGENT_MEMORY_...); the model alone runs with it too. "
        "With --remeasure, on top of the run's own: an A/B",
    )
    p.add_argument(
        "--ab",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="with --remeasure: a paired A/B, a second query service with this setting "
        "(AGENT_MEMORY_...; repeatable) asked every question right after the stack's own",
    )
    p.add_argument(
        "--ab-python",
        metavar="PYTHON",
        help="with --remeasure: a paired A/B of code, B's query service run by this "
        "interpreter (another checkout's .venv/bin/python)",
    )
    p.add_argument(
        "--resume",
        type=Path,
        metavar="RESULTS",
        help="continue the stopped run whose results folder this is, with its own arguments "
        "(but --replicas, when given)",
    )
    args = p.parse_args(argv)
    for option, values in (("--env", args.env), ("--ab", args.ab)):
        if bad := [e for e in values if "=" not in e or not e.startswith("AGENT_MEMORY_")]:
            p.error(f"{option}: NAME=VALUE with a name AGENT_MEMORY_..., not {bad[0]!r}")
    if (args.ab or args.ab_python) and args.remeasure is None:
        p.error("--ab, --ab-python: only with --remeasure (a paired A/B on a kept store)")
    if args.ab_python and not Path(args.ab_python).is_file():
        p.error(f"--ab-python: no interpreter at {args.ab_python}")
    sizes = list(QUICK_SIZES) if args.quick else [int(s) for s in args.sizes.split(",") if s]
    if not sizes or sizes != sorted(set(sizes)) or sizes[0] < 100:
        p.error("--sizes: ascending, distinct, each at least 100")
    if args.batch < 1 or args.batch > 1000:
        p.error("--batch: 1 to 1000 (the gateway's limit)")
    if args.replicas is not None and not 1 <= args.replicas <= 16:
        p.error("--replicas: 1 to 16 embedder processes")
    args.sizes = sizes
    return args


def open_state(args: argparse.Namespace) -> tuple[State, argparse.Namespace]:
    """A new run's results folder, stack folder and ``state.json``; or, with ``--resume``, the
    stopped run's, with its own arguments (ValueError when it cannot be continued)."""
    if args.resume is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        out = args.out or Path(tempfile.gettempdir()) / f"bench-scale-{stamp}"
        out.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix="agent-memory-bench-scale-"))
        saved = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
        state = State(out=out, args=saved, workdir=str(workdir))
        state.save()
        return state, args
    state = State.load(args.resume)
    if args.replicas is not None and args.replicas != state.args.get("replicas"):
        # the figures stay per process: each sample records its start's count
        state.args["replicas"] = args.replicas
        state.save()
    resumed = argparse.Namespace(**{**state.args, "out": args.resume, "resume": args.resume})
    resumed.keep = bool(resumed.keep or args.keep)
    return state, resumed


def measured_before(out: Path) -> list[dict[str, Any]]:
    path = out / "scale.json"
    return list(json.loads(path.read_text())["checkpoints"]) if path.exists() else []


def remeasure(
    results: Path, env: Sequence[str] = (), ab: Sequence[str] = (), ab_python: str | None = None
) -> int:
    """The searches, TOC descents and topic listings of a kept store timed again, on the same
    new queries every time (none of them asked before in the run): an A/B of query-side
    changes on a store that took hours to fill, without filling it again.

    With ``ab`` settings or ``ab_python`` (the interpreter of another checkout: its code), a
    paired A/B instead: a second query service on the same store with those settings or that
    code (B) beside the stack's own (A), every query asked of both in turn; only the
    searches, written to ``remeasure-ab-*.json``. Two single runs one after the other differ by
    more than most query-side changes do (a stack just restarted settles for minutes, and the
    shared machine drifts); questions asked of both within milliseconds do not."""
    try:
        state = State.load(results, finished=True)
    except ValueError as exc:
        print(f"bench-scale: --remeasure: {exc}", file=sys.stderr)
        return 2
    args = argparse.Namespace(**{**state.args, "out": results})
    settings = {**stack_env(args), **stack_env(argparse.Namespace(env=env))}
    pools = load_pools(locomo=None if args.no_locomo else LOCOMO)
    product = Product(Path(state.workdir), settings, up_args=QUERY_ONLY)
    run = Run(args, product, pools, event_stream(args.seed, pools))
    run.checkpoints = measured_before(results)
    if not run.checkpoints:
        print(f"bench-scale: --remeasure: {results} has no measured size yet", file=sys.stderr)
        return 2
    replay(run)
    size = run.posted
    b_settings = stack_env(argparse.Namespace(env=ab))
    paired_run = bool(b_settings or ab_python)
    try:
        product.start()
        wait_for_vectors(product)
        print(f"remeasuring the store of {size:,} events in {state.workdir}", flush=True)
        if paired_run:
            with product.second_query_service(b_settings, ab_python or sys.executable) as url_b:
                print(f"    quiet after {product.wait_until_quiet():.0f} s", flush=True)
                figures = measure_ab(run, size, url_b)
        else:
            print(f"    quiet after {product.wait_until_quiet():.0f} s", flush=True)
            figures = measure_store(run, size)
    except KeyboardInterrupt:
        return 130
    finally:
        product.stop()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = results / f"remeasure-{'ab-' if paired_run else ''}{stamp}.json"
    doc = {"size": size, "env": settings, "machine": machine(), **figures}
    if paired_run:
        doc["b"] = {"env": b_settings, "python": ab_python or sys.executable}
    path.write_text(json.dumps(doc, indent=1) + "\n")
    if paired_run:
        b_is = [*ab, *([f"the code of {ab_python}"] if ab_python else [])]
        print("A: the stack's query service; B: the same with " + ", ".join(b_is))
        print(table(ab_rows(figures["search"]), [False, True, True, True]))
    else:
        rows = [("figure", "value", "target", ""), *store_rows(figures)]
        print(table(rows, [False, True, True, False]))
    print(f"\nresults: {path}")
    return 0


def measure_ab(run: Run, size: int, url_b: str) -> dict[str, Any]:
    """``measure_store``'s searches, asked of the stack's query service and of ``url_b``."""
    a = run.args
    queries = measure_queries(run, random.Random(f"measure/{a.seed}/{size}"))
    print(f"    searching A and B ({a.queries} timed queries per tier each)", flush=True)
    load_before = os.getloadavg()[0]
    search = time_searches_ab({"A": run.product.query_url, "B": url_b}, queries, a.warmup)
    return {"search": search, "search_load": [round(load_before, 2), round(os.getloadavg()[0], 2)]}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    stop_on_sigterm()
    if args.remeasure is not None:
        return remeasure(args.remeasure, args.env, args.ab, args.ab_python)
    try:
        state, args = open_state(args)
    except ValueError as exc:
        print(f"bench-scale: --resume: {exc}", file=sys.stderr)
        return 2
    out, workdir = state.out, Path(state.workdir)
    pools = load_pools(locomo=None if args.no_locomo else LOCOMO)
    print("agent-memory scale benchmark" + (" (resumed)" if args.resume else ""))
    print(
        f"machine: {os.cpu_count()} CPU(s), load {', '.join(f'{v:.2f}' for v in os.getloadavg())}"
    )
    print(f"sizes {', '.join(f'{s:,}' for s in args.sizes)}; seed {args.seed}; results in {out}")
    print("texts from: " + "; ".join(pools.sources), flush=True)
    env = stack_env(args)
    if env:
        print("stack settings: " + ", ".join(f"{k}={v}" for k, v in env.items()))
    product = Product(workdir, env, up_args=up_args(args))
    run = Run(args, product, pools, event_stream(args.seed, pools), model_bench(env))
    run.checkpoints = measured_before(out)
    replay(run)
    finished = False
    try:
        t0 = time.monotonic()
        product.start()
        state.starts += 1
        state.save()
        print(f"stack up in {time.monotonic() - t0:.0f} s (work folder {workdir})", flush=True)
        wait_for_vectors(product)
        for size in args.sizes:
            if size <= run.posted:
                continue  # measured before the run was resumed
            print(f"\nstore size {size:,}", flush=True)
            cp = ingest_and_drain(run, size, state)
            cp.update(measure_store(run, size))
            run.checkpoints.append(cp)
            save(run, out)
            print(table([("figure", "value", "target", ""), *result_rows(cp)],
                        [False, True, True, False]), flush=True)  # fmt: skip
        state.done = finished = True
        state.save()
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        print(f"\nbenchmark failed: {exc!r}", file=sys.stderr)
        return 1
    finally:
        # a run that did not finish keeps its stack, to be continued
        stop_and_clean(product, workdir, args.keep or not finished)
        if not finished:
            print(f"continue it with: make bench-scale ARGS='--resume {out}'", file=sys.stderr)
    print("\nsummary (a measurement: the exit code is 0 whatever the figures)")
    print_report(run)
    print(f"\nresults: {out / 'scale.json'}, plot: {out / 'scale.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
