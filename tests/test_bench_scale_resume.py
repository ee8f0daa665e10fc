"""bench-scale survives its own death: a run killed with ``kill -9`` (the benchmark and every
process of its stack) while an increment drains is continued by ``--resume`` on the same
stack, and finishes with every size measured once and every event stored once.

A million events take the embedder longer than a working session on two cores; this is what
lets the 1M figures be measured at all. A finished run's kept store is searched again by
``--remeasure``, for query-side changes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.bench.bench_scale import main

REPO = Path(__file__).resolve().parents[1]
# The run's own stack setting: the model reads 32 word pieces of a text, not up to 256. What is
# tested is the kill, the resume and the counts, not the vectors; the embedder's drain was most
# of this test's time (minutes on two busy cores), and it shrinks with the pieces read.
RUN_ENV = {"AGENT_MEMORY_EMBEDDING_MAX_TOKENS": "32"}
SMALL = ["--sizes", "150,400", "--queries", "4", "--warmup", "1", "--descents", "2",
         "--topic-calls", "2", "--model-sample", "16", "--no-locomo",
         *(f"--env={k}={v}" for k, v in RUN_ENV.items())]  # fmt: skip


def kill_everything(bench: subprocess.Popen[bytes], workdir: Path) -> None:
    """SIGKILL the benchmark, its stack (a session of its own) and anything else working in
    the stack's folder (a daemonized server), as a crash or a closed laptop would."""
    victims = [psutil.Process(bench.pid)]
    victims += victims[0].children(recursive=True)
    for proc in psutil.process_iter(["cmdline", "environ"]):
        try:
            text = " ".join(proc.info["cmdline"] or []) + str(proc.info["environ"] or {})
        except psutil.Error:
            continue
        if str(workdir) in text and proc not in victims:
            victims.append(proc)
    for proc in victims:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            continue
    psutil.wait_procs(victims, timeout=30)


def state(out: Path) -> dict[str, object]:
    try:
        doc: dict[str, object] = json.loads((out / "state.json").read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return doc


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_a_run_killed_while_it_drains_is_resumed_and_finishes(tmp_path: Path) -> None:
    out = tmp_path / "results"
    cmd = [sys.executable, "-m", "tests.bench.bench_scale", *SMALL, "--out", str(out)]
    with (tmp_path / "first.log").open("wb") as log:
        bench = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    samples = out / "samples-400.jsonl"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and bench.poll() is None:
        st = state(out)
        posted = st.get("size") == 400 and st.get("post")
        if posted and samples.exists() and len(samples.read_bytes().splitlines()) >= 3:
            break
        time.sleep(0.2)
    assert bench.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
    workdir = Path(str(state(out)["workdir"]))
    kill_everything(bench, workdir)
    bench.wait(timeout=30)
    measured = json.loads((out / "scale.json").read_text())["checkpoints"]
    assert [cp["size"] for cp in measured] == [150]

    resumed = subprocess.run(
        # with a second embedder from now on, as the 1M run was when one took too long
        [
            sys.executable,
            "-m",
            "tests.bench.bench_scale",
            "--resume",
            str(out),
            "--keep",
            "--replicas",
            "2",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert "the 250 events were posted" in resumed.stdout
    doc = json.loads((out / "scale.json").read_text())
    small, large = doc["checkpoints"]
    assert (small["size"], large["size"]) == (150, 400)
    assert small == measured[0]  # measured once, kept as it was
    assert large["stack_starts"] == 2
    assert large["embedder"]["processes_by_start"] == [1, 2]
    # the model alone measured as the drain's last start ran: two processes at once
    assert large["embedder"]["model_processes"] == 2
    assert large["embedder"]["model_texts_per_s"] > 0
    assert [s["processes"] for s in large["embedder"]["starts"]] == [1, 2]
    # every event stored once: the drain ends only when the table holds exactly 400
    last = json.loads((out / "samples-400.jsonl").read_bytes().splitlines()[-1])
    assert last["stored"] == 400 and last["epoch"] == 1 and last["processes"] == 2
    assert large["consumers"]["embedder"]["drain_s"] > 0
    assert large["search"]["full"]["n"] == 4
    final = state(out)
    assert final["done"] is True and final["starts"] == 2
    assert final["args"]["replicas"] == 2  # type: ignore[index]
    assert main(["--resume", str(out)]) == 2  # nothing left to continue

    # the kept store searched again, as an A/B of a query-side change would
    setting = "AGENT_MEMORY_QUERY__SEARCH__CANDIDATES=20"
    assert main(["--remeasure", str(out), "--env", setting]) == 0
    (again,) = out.glob("remeasure-*.json")
    figures = json.loads(again.read_text())
    assert figures["size"] == 400 and figures["search"]["vector"]["n"] == 4
    # the A/B's setting on top of the run's own
    assert figures["env"] == {**RUN_ENV, "AGENT_MEMORY_QUERY__SEARCH__CANDIDATES": "20"}
    shutil.rmtree(workdir)
    assert main(["--remeasure", str(out)]) == 2  # nothing kept to search
