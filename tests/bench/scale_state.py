"""What lets a bench-scale run outlive the process that started it.

A million events take the embedder about ten hours on a two-core machine, longer than a
working session, a laptop's battery or a CI job: a run that stops (Ctrl-C, SIGTERM, a
``kill -9`` of everything, a reboot) is continued with ``--resume RESULTS`` from what it had
written down, on the same stack (its folder is kept whenever a run does not finish):

- ``state.json``: the run's arguments, its stack's folder, the size being filled and, once the
  increment was posted, when that happened;
- ``samples-<size>.jsonl``: every poll of ``/v1/status`` (and the embedder's counters) while
  the increment drains, one line each, written as it is taken;
- ``scale.json``: the sizes already measured (``bench_scale.save``).

Times are on a **run clock**: monotonic within one process, continued on resume from the last
sample written, so the time the stack was down is not counted as draining. Each stack start
is an *epoch*; a rate is never taken across two epochs (the embedder's counters restart, and
the interval between the last sample and the kill is not known). Nor is the time the machine
stood still counted (a suspended laptop, a paused virtual machine: every process stops, but
the monotonic clock may go on): a gap between two polls far longer than a poll can take is
taken out of the run clock (``standstill``), so it is neither draining time nor a stall.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

STATE_VERSION = 1
# A poll takes well under a second, a few tens of seconds at worst when its requests time out
# (10 s each): a gap this much longer than expected is the machine standing still, not the
# stack being slow.
STANDSTILL_S = 60.0


def standstill(elapsed: float, expected: float) -> float:
    """Seconds of ``elapsed`` (between two steps of a loop that should take ``expected``) during
    which nothing ran: all of the excess when it is longer than ``STANDSTILL_S``, else none."""
    excess = elapsed - expected
    return excess if excess > STANDSTILL_S else 0.0


@dataclass(frozen=True)
class ModelCounters:
    """The embedder's cumulative ``agent_memory_embedding_*`` counters, every mode together."""

    texts: float
    pieces: float
    seconds: float
    # CPU seconds of the embedder processes (process_cpu_seconds_total; 0 in samples of runs
    # from before it was read): with it the embedder's cost per word piece is held against
    # the model's own whatever share of the cores the other consumers took meanwhile
    cpu: float = 0.0

    def __add__(self, other: ModelCounters) -> ModelCounters:
        """Two processes' counters together (replicas of the embedder)."""
        return ModelCounters(
            self.texts + other.texts,
            self.pieces + other.pieces,
            self.seconds + other.seconds,
            self.cpu + other.cpu,
        )


@dataclass(frozen=True)
class Sample:
    t: float  # run clock, seconds
    stored: int
    backlog: dict[str, int]  # pending + ack_pending per consumer
    floor: dict[str, int]  # ack floor (stream sequence) per consumer
    model: ModelCounters | None = None  # the embedder's /metrics, when it could be read
    epoch: int = 0  # which start of the stack took it
    # embedder processes of that start (a run resumed with another --replicas changes it)
    processes: int = 1

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @staticmethod
    def from_json(line: bytes | str) -> Sample:
        d = orjson.loads(line)
        model = d.get("model")
        return Sample(
            t=float(d["t"]),
            stored=int(d["stored"]),
            backlog={k: int(v) for k, v in d["backlog"].items()},
            floor={k: int(v) for k, v in d["floor"].items()},
            model=ModelCounters(**model) if model else None,
            epoch=int(d.get("epoch", 0)),
            processes=int(d.get("processes", 1)),
        )


@dataclass
class RunClock:
    """Seconds of the run's own time: ``base`` plus the monotonic time since this process
    made the clock, less the time the machine stood still (``stood_still``)."""

    base: float = 0.0
    origin: float = field(default_factory=time.monotonic)
    still: float = 0.0

    def at(self, monotonic: float) -> float:
        """The run-clock reading of a ``time.monotonic()`` value taken in this process (after
        any standstill before it was taken has been reported)."""
        return self.base + monotonic - self.origin - self.still

    def stood_still(self, seconds: float) -> None:
        """``seconds`` during which nothing ran: not the run's time."""
        self.still += seconds

    def now(self) -> float:
        return self.at(time.monotonic())


class SampleLog:
    """``samples-<size>.jsonl``: appended one line per sample, flushed as written, so a kill
    loses at most the line being written (a torn last line is skipped on reading)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> list[Sample]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_bytes().splitlines():
            try:
                out.append(Sample.from_json(line))
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                continue  # the line a kill cut short
        return out

    def append(self, samples: Iterable[Sample]) -> None:
        with self.path.open("ab") as f:
            for s in samples:
                f.write(s.to_json() + b"\n")
            f.flush()

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


@dataclass
class State:
    """``state.json`` of a results folder."""

    out: Path
    args: dict[str, Any]
    workdir: str
    size: int | None = None  # the size being filled
    post: dict[str, float] | None = None  # run-clock first send and last 202 of its increment
    done: bool = False
    starts: int = 0  # how many times the stack was started for this run

    @property
    def path(self) -> Path:
        return self.out / "state.json"

    def samples(self, size: int) -> SampleLog:
        return SampleLog(self.out / f"samples-{size}.jsonl")

    def save(self) -> None:
        """Written to a new file, then renamed over the old one: a kill leaves one or the other."""
        doc = {
            "version": STATE_VERSION,
            "args": self.args,
            "workdir": self.workdir,
            "size": self.size,
            "post": self.post,
            "done": self.done,
            "starts": self.starts,
        }
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
        os.replace(tmp, self.path)

    @staticmethod
    def load(out: Path, finished: bool = False) -> State:
        """The state of the run whose results are in ``out``; ValueError saying why it cannot
        be continued (or, with ``finished``, measured again: its stack kept)."""
        path = out / "state.json"
        if not path.is_file():
            raise ValueError(f"{path} does not exist: not the results folder of a bench-scale run")
        doc = json.loads(path.read_text())
        if doc.get("version") != STATE_VERSION:
            raise ValueError(f"{path}: state version {doc.get('version')}, not {STATE_VERSION}")
        state = State(
            out=out,
            args=doc["args"],
            workdir=doc["workdir"],
            size=doc.get("size"),
            post=doc.get("post"),
            done=bool(doc.get("done")),
            starts=int(doc.get("starts", 0)),
        )
        if state.done and not finished:
            raise ValueError(f"the run in {out} is complete: nothing to resume")
        if not Path(state.workdir, "home").is_dir():
            hint = "run it with --keep" if finished else "start a new run"
            raise ValueError(f"the run's stack folder {state.workdir} is gone: {hint}")
        return state


def resume_clock(
    log: SampleLog, post: dict[str, float] | None
) -> tuple[RunClock, int, list[Sample]]:
    """The clock of an increment continued from the last thing written of it (a sample, or
    the end of its post), the next epoch, and the samples so far."""
    samples = log.read()
    times = ([samples[-1].t] if samples else []) + ([post["last"]] if post else [])
    last = max(times, default=0.0)
    epoch = samples[-1].epoch + 1 if samples else 0
    return RunClock(base=last), epoch, samples
