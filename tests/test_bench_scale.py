"""The parts of bench-scale (tests/bench/bench_scale.py) that run without a stack: its events,
its plot, and its disk figures read from a real Postgres."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import orjson
import psycopg
import pytest

from agent_memory_retrieval.adapters.pgvector_index import vector_literal
from tests.bench.bench_scale import (
    MAX_CHARS,
    MIN_CHARS,
    SEARCH_CONFIGS,
    ModelBench,
    Watcher,
    ab_order,
    busy_rate,
    caught_up_at,
    disk_usage,
    embedding_texts,
    event_stream,
    fit,
    load_pools,
    metrics_url,
    metrics_urls,
    model_bench,
    model_counters,
    model_use,
    paired,
    parse_args,
    server_stages,
    slowest_stage,
    stack_env,
    stage_line,
    stage_series,
    start_rates,
    time_searches_ab,
    up_args,
    write_plot,
)
from tests.bench.scale_state import (
    STANDSTILL_S,
    ModelCounters,
    RunClock,
    Sample,
    SampleLog,
    standstill,
)
from tests.bench.stack import Product

POOLS = load_pools(locomo=None)  # the repository's own texts only: the same on every machine


def first(n: int, seed: int) -> list[dict[str, Any]]:
    return list(itertools.islice(event_stream(seed, POOLS), n))


def test_event_texts_are_50_to_2000_characters_and_ids_are_unique() -> None:
    events = first(5000, 7)
    lengths = [len(e["text"]) for e in events]
    assert min(lengths) >= MIN_CHARS
    assert max(lengths) <= MAX_CHARS
    assert max(lengths) > 1000  # the long tail is there
    assert len({e["event_id"] for e in events}) == len(events)
    assert len({e["session_id"] for e in events}) > 30
    assert len({e["project_id"] for e in events}) > 10
    assert {e["role"] for e in events} == {"user", "assistant", "tool"}


def test_the_stream_is_the_same_for_a_seed_and_differs_across_seeds() -> None:
    assert first(800, 3) == first(800, 3)
    assert [e["text"] for e in first(800, 3)] != [e["text"] for e in first(800, 4)]


def test_sessions_are_consecutive_and_in_time_order() -> None:
    events = first(3000, 5)
    seen: set[str] = set()
    for previous, event in itertools.pairwise(events):
        if event["session_id"] != previous["session_id"]:
            assert event["session_id"] not in seen
            seen.add(previous["session_id"])
        else:
            assert event["ts"] > previous["ts"]


@pytest.mark.parametrize("target", [50, 51, 80, 300, 2000])
def test_fit_cuts_to_the_target_and_never_below_the_minimum(target: int) -> None:
    text = "word " * 600
    assert MIN_CHARS <= len(fit(text, target)) <= target
    assert fit("short enough text that stays as it is, whole.", 300).endswith("whole.")


def test_embedding_texts_carry_the_speaker_and_the_previous_turn_of_the_session() -> None:
    events = [
        {"session_id": "a", "text": "Do you have dogs?", "metadata": {"speaker": "Ann"}},
        {"session_id": "a", "text": "Yes, three of them!", "metadata": {"speaker": "Bob"}},
        {"session_id": "b", "text": "A new session.", "metadata": {}},
    ]
    assert embedding_texts(events) == [
        "Ann\nDo you have dogs?",
        "Bob\nYes, three of them!\nAnn: Do you have dogs?",
        "A new session.",
    ]


def sample(t: float, backlog: int, floor: int) -> Sample:
    return Sample(t=t, stored=0, backlog={"embedder": backlog}, floor={"embedder": floor})


def test_rates_count_only_the_time_a_consumer_had_a_backlog() -> None:
    samples = [sample(0, 100, 0), sample(1, 50, 50), sample(2, 0, 100), sample(10, 0, 100)]
    assert busy_rate(samples, "embedder") == pytest.approx(50.0)
    assert caught_up_at(samples, "embedder") == 2
    assert caught_up_at([sample(0, 0, 0)], "embedder") is None


def test_a_rate_of_two_consumers_counts_both_while_either_is_behind() -> None:
    def both(t: float, events: tuple[int, int], toc: tuple[int, int]) -> Sample:
        backlog = {"embedder": events[0], "embedder-toc": toc[0]}
        return Sample(
            t=t, stored=0, backlog=backlog, floor={"embedder": events[1], "embedder-toc": toc[1]}
        )

    samples = [both(0, (10, 0), (5, 0)), both(1, (0, 10), (5, 0)), both(2, (0, 10), (0, 5))]
    assert busy_rate(samples, "embedder", "embedder-toc") == pytest.approx(7.5)
    assert busy_rate(samples, "embedder") == pytest.approx(10.0)


def test_a_standstill_of_the_machine_is_not_counted_as_draining(tmp_path: Path) -> None:
    """A paused VM or a suspended laptop stops every process, but the monotonic clock may go
    on: counted, the gap would read as an embedder busy for hours that embedded nothing."""
    assert standstill(1.5, 1.0) == 0.0  # a slow poll
    assert standstill(1.0 + STANDSTILL_S, 1.0) == 0.0
    assert standstill(3_601.0, 1.0) == 3_600.0
    watcher = Watcher("http://127.0.0.1:9", tmp_path, RunClock(base=100.0, origin=0.0))
    polls = [0.0, 1.5, 3_603.0, 3_604.5]  # monotonic, a standstill of an hour after the second
    stamps = [watcher.stamp(t) for t in polls]
    assert stamps == [100.0, 101.5, 102.5, 104.0]
    # the interval across the standstill counts one poll's pause, at the rate around it
    samples = [sample(t, 100 - 10 * i, 10 * i) for i, t in enumerate(stamps)]
    assert busy_rate(samples, "embedder") == pytest.approx(30 / 4.0)
    assert watcher.clock.at(3_605.0) == pytest.approx(104.5)  # the post's times too


def test_a_run_resumed_with_more_embedders_is_measured_per_process() -> None:
    """A million events take one embedder longer than a working session; resumed with
    ``--replicas 2`` the rest drains on both cores. Held against the model on one thread, the
    rate is per process: a second of a start with two counts twice."""

    def at(t: float, backlog: int, floor: int, epoch: int, processes: int) -> Sample:
        model = ModelCounters(float(floor), 100.0 * floor, 0.9 * t)
        return Sample(
            t=t,
            stored=0,
            backlog={"embedder": backlog},
            floor={"embedder": floor},
            model=model,
            epoch=epoch,
            processes=processes,
        )

    samples = [
        at(0, 100, 0, 0, 1),
        at(10, 90, 10, 0, 1),  # one process: 1 event/s
        at(20, 90, 10, 1, 2),  # a new start: the interval across it is not counted
        at(30, 70, 30, 1, 2),  # two processes: 2 events/s, 1 each
        at(40, 50, 50, 1, 2),
    ]
    assert busy_rate(samples, "embedder") == pytest.approx(50 / 30)
    assert busy_rate(samples, "embedder", per_process=True) == pytest.approx(1.0)
    use = model_use(samples, "embedder")
    assert use is not None
    assert use["pieces_per_process_s"] == pytest.approx(100.0)
    # counters of both processes summed: 9 s of model time per 10 s... over 50 process-s
    assert use["model_share"] == pytest.approx((9.0 + 9.0 + 9.0) / 50)
    assert busy_rate(samples[:2], "embedder", per_process=True) == pytest.approx(1.0)


def test_a_call_that_spanned_a_standstill_does_not_make_the_model_busier_than_the_clock() -> None:
    """The machine stood still for an hour (the run clock leaves it out) while the model was
    encoding: the call ends reporting the hour too. Counted, the embedder would seem to have
    spent 3,600 % of its time in the model."""

    def at(t: float, seconds: float) -> Sample:
        return Sample(
            t=t,
            stored=0,
            backlog={"embedder": 10},
            floor={"embedder": int(t)},
            model=ModelCounters(t, 100.0 * t, seconds),
        )

    # a batch's 30 s reported in one poll is the model's time; the hour is not
    samples = [at(0, 0.0), at(1, 0.9), at(2, 30.9), at(32, 31.8), at(33, 3_632.8), at(34, 3_633.7)]
    use = model_use(samples, "embedder")
    assert use is not None
    assert use["model_share"] == pytest.approx((0.9 + 30.0 + 0.9 + 1.0 + 0.9) / 34)


def test_each_start_is_reported_apart() -> None:
    """A run paused for tests in one start and resumed with two embedders in the next is
    read start by start, not only as the blend."""

    def at(t: float, backlog: int, floor: int, epoch: int, processes: int) -> Sample:
        return Sample(
            t=t,
            stored=0,
            backlog={"embedder": backlog},
            floor={"embedder": floor},
            model=ModelCounters(float(floor), 100.0 * floor, 0.9 * t),
            epoch=epoch,
            processes=processes,
        )

    samples = [at(0, 90, 0, 0, 1), at(10, 80, 10, 0, 1), at(20, 80, 10, 1, 2)]
    samples += [at(30, 40, 50, 1, 2), at(40, 0, 90, 1, 2), at(50, 0, 90, 1, 2)]
    one, two = start_rates(samples)
    assert (one["epoch"], one["processes"], one["behind_s"]) == (0, 1, 10.0)
    assert (one["events_per_s"], one["events_per_process_s"]) == (1.0, 1.0)
    assert (two["epoch"], two["processes"], two["behind_s"]) == (1, 2, 20.0)
    assert (two["events_per_s"], two["events_per_process_s"]) == (4.0, 2.0)
    assert two["pieces_per_process_s"] == 200.0


def test_a_sample_keeps_its_process_count_and_older_lines_read_as_one(tmp_path: Path) -> None:
    log = SampleLog(tmp_path / "samples.jsonl")
    two = Sample(t=1.0, stored=5, backlog={"embedder": 1}, floor={"embedder": 4}, processes=2)
    log.append([two])
    with log.path.open("ab") as f:  # a line written before the field existed
        f.write(b'{"t": 2.0, "stored": 5, "backlog": {}, "floor": {}, "epoch": 0}\n')
    assert [s.processes for s in log.read()] == [2, 1]
    assert log.read()[0] == two


EXPOSITION = """\
# HELP agent_memory_embedding_texts_total Texts through the embedding model.
# TYPE agent_memory_embedding_texts_total counter
agent_memory_embedding_texts_total{mode="batch"} 128.0
agent_memory_embedding_texts_total{mode="one"} 2.0
agent_memory_embedding_pieces_total{mode="batch"} 23040.0
agent_memory_embedding_pieces_total{mode="one"} 30.0
agent_memory_embedding_seconds_bucket{le="0.5",mode="batch"} 0.0
agent_memory_embedding_seconds_count{mode="batch"} 1.0
agent_memory_embedding_seconds_sum{mode="batch"} 14.5
agent_memory_embedding_seconds_sum{mode="one"} 0.5
agent_memory_consumer_messages_total{consumer="embedder"} 128.0
process_cpu_seconds_total 12.5
"""


def test_model_counters_add_every_mode_and_ignore_other_samples() -> None:
    assert model_counters(EXPOSITION) == ModelCounters(130.0, 23070.0, 15.0, 12.5)
    assert model_counters("") == ModelCounters(0.0, 0.0, 0.0)


def test_model_use_is_measured_while_the_embedder_is_behind() -> None:
    def at(
        t: float, backlog: int, texts: float, pieces: float, seconds: float, cpu: float
    ) -> Sample:
        return Sample(
            t=t,
            stored=0,
            backlog={"embedder": backlog},
            floor={"embedder": 0},
            model=ModelCounters(texts, pieces, seconds, cpu),
        )

    # the model ran 90% of the time but the process got half a core: 1,600 pieces per CPU s
    samples = [
        at(0, 100, 0, 0, 0.0, 3.0),
        at(10, 50, 40, 8_000, 9.0, 8.0),
        at(20, 0, 80, 16_000, 18.0, 13.0),
        at(100, 0, 80, 16_000, 18.0, 90.0),  # idle afterwards: not counted
    ]
    use = model_use(samples, "embedder")
    assert use == pytest.approx(
        {
            "texts_per_s": 4.0,
            "pieces_per_s": 800.0,
            "pieces_per_process_s": 800.0,
            "model_share": 0.9,
            "pieces_per_text": 200.0,
            "pieces_per_cpu_s": 1_600.0,
            "cpu_share": 0.5,
        }
    )
    no_metrics = [Sample(t=t, stored=0, backlog={"embedder": 1}, floor={}) for t in (0, 1)]
    assert model_use(no_metrics, "embedder") is None


def test_the_embedders_metrics_port_is_read_from_its_log(tmp_path: Path) -> None:
    assert metrics_url(tmp_path, "embedder") is None
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "embedder.log").write_text(
        '{"event": "embedder.started"}\n'
        '{"port": 44229, "event": "metrics.listening", "service": "embedder"}\n'
    )
    assert metrics_url(tmp_path, "embedder") == "http://127.0.0.1:44229/metrics"


@pytest.fixture
def exposition_servers() -> Iterator[list[int]]:
    """Two /metrics endpoints serving ``EXPOSITION``, as two embedder replicas would."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = EXPOSITION.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    servers = [ThreadingHTTPServer(("127.0.0.1", 0), Handler) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield [server.server_address[1] for server in servers]
    for server in servers:
        server.shutdown()
        server.server_close()


def _listening(port: int) -> str:
    return f'{{"port": {port}, "event": "metrics.listening", "service": "embedder"}}\n'


def test_replicas_of_the_embedder_are_read_together(
    tmp_path: Path, exposition_servers: list[int]
) -> None:
    """``--replicas N``: every process's counters summed; while one has not logged its port
    yet, no sample (a sum without it would read as the model slowing down)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    one, two = exposition_servers
    (logs / "embedder-1.log").write_text(_listening(1) + _listening(one))  # restarted: last
    (logs / "embedder-toc.log").write_text(_listening(9))  # not a replica's log
    # an earlier start's single process (a run resumed with --replicas 2): nobody listens
    (logs / "embedder.log").write_text(_listening(7))
    assert metrics_urls(tmp_path, "embedder", 2) == [f"http://127.0.0.1:{one}/metrics"]
    assert metrics_urls(tmp_path, "embedder") == ["http://127.0.0.1:7/metrics"]
    watcher = Watcher("http://127.0.0.1:1", tmp_path, RunClock(), embedders=2)
    with httpx.Client(timeout=5) as client:
        assert watcher._model(client) is None
        (logs / "embedder-2.log").write_text(_listening(two))
        alone = model_counters(EXPOSITION)
        assert watcher._model(client) == alone + alone == ModelCounters(260.0, 46140.0, 30.0, 25.0)


def test_replicas_reach_agent_memory_up() -> None:
    assert up_args(parse_args(["--replicas", "2"])) == ("--replicas", "embedder=2")
    assert up_args(parse_args([])) == ()
    with pytest.raises(SystemExit):
        parse_args(["--replicas", "0"])
    assert parse_args([]).replicas is None  # 1, unless given: --resume keeps the run's own


def test_the_model_alone_runs_with_the_stacks_settings_not_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--env`` reaches the stack and the model sample alike; this process's own
    AGENT_MEMORY_* variables reach neither (the stack filters them out)."""
    monkeypatch.setenv("AGENT_MEMORY_EMBEDDING_MAX_TOKENS", "64")
    assert model_bench({}) == ModelBench()
    args = parse_args(
        [
            "--env",
            "AGENT_MEMORY_EMBEDDING_PRECISION=int8",
            "--env",
            "AGENT_MEMORY_EMBEDDER__BATCH_SIZE=32",
        ]
    )
    env = stack_env(args)
    assert env == {
        "AGENT_MEMORY_EMBEDDING_PRECISION": "int8",
        "AGENT_MEMORY_EMBEDDER__BATCH_SIZE": "32",
    }
    model = model_bench(env)
    assert (model.precision, model.fetch_batch, model.max_tokens) == ("int8", 32, 256)
    assert os.environ["AGENT_MEMORY_EMBEDDING_MAX_TOKENS"] == "64"  # put back as it was
    assert "AGENT_MEMORY_EMBEDDING_PRECISION" not in os.environ


def test_a_segment_fed_consumer_may_finish_a_little_after_the_embedder() -> None:
    def consumers(**drain: float) -> dict[str, dict[str, float | None]]:
        return {name: {"drain_s": s, "busy_msgs_per_s": None} for name, s in drain.items()}

    late_summary = consumers(embedder=100.0, recorder=1.0, summarizer=120.0)
    assert slowest_stage(late_summary) == ("summarizer", 20.0, True)
    slow_recorder = consumers(embedder=100.0, recorder=101.0, summarizer=100.0)
    assert slowest_stage(slow_recorder) == ("recorder", 1.0, False)


def test_server_stages_keep_the_stages_timed_in_most_searches_main_ones_first() -> None:
    timed = {
        "rank": [1.0, 2.0, 3.0, 4.0],
        "total": [10.0, 20.0, 30.0, 40.0],
        "embed": [5.0, 6.0, 7.0, 8.0],
        "beyond_period": [9.0],  # a fallback in one search of four: no median worth showing
    }
    server = server_stages(timed, searches=4)
    assert server == {"rank": 2.0, "total": 20.0, "embed": 6.0}  # nearest-rank medians
    assert stage_line(server) == "total 20.0, embed 6.0, rank 2.0"
    assert stage_line({"zeta": 1.0, "alpha": 2.0, "total": 3.0}) == "total 3.0, alpha 2.0, zeta 1.0"


def test_the_plot_is_a_png(tmp_path: Path) -> None:
    path = tmp_path / "scale.png"
    lines: dict[str, list[float | None]] = {
        "search full p50": [12.0, 15.0, 19.0],
        "search full p95": [30.0, 41.0, 55.0],
        "TOC descent p50": [8.0, None, 9.5],
    }
    write_plot(path, [10_000, 100_000, 1_000_000], lines)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 5_000
    one_panel = path.stat().st_size
    stages: dict[str, list[float | None]] = {"full: embed": [5.0, 6.0, 6.2]}
    write_plot(path, [10_000, 100_000, 1_000_000], lines, stages)
    assert path.stat().st_size > one_panel  # the stages drawn beside the latencies


def test_stage_series_follow_the_default_searchs_stages_across_sizes() -> None:
    def checkpoint(**server: float) -> dict[str, Any]:
        return {"search": {"full": {"server_p50_ms": server}}}

    cps = [checkpoint(total=11.5, embed=5.3, vector=8.4), checkpoint(total=19.9, vector=15.2)]
    assert stage_series(cps) == {
        "full: total": [11.5, 19.9],
        "full: embed": [5.3, None],
        "full: vector (embed included)": [8.4, 15.2],
    }
    assert stage_series([{"search": {"full": {}}}]) == {}  # a run from before the stages


def test_the_pgvector_disk_figure_counts_every_partition(pg_dsn: str, tmp_path: Path) -> None:
    """vector_docs is partitioned (migration 0020): its own size is 0, its rows are in the
    partitions, and bench-scale's disk per event must count them."""
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO vector_docs (id, tenant, type, project_id, agent_id, session_id, ts,"
            " level, kind, salience, title, text, event_ids, embedding)"
            " SELECT 'event:acme:' || n, 'acme', 'event', 'p' || (n %% 9), 'a', 's', now(),"
            " 'event', 'observation', 0.5, '', repeat('x', 500), ARRAY['e'], %s::vector"
            " FROM generate_series(1, 400) AS n",
            (vector_literal([1.0] + [0.0] * 383),),
        )
    usage = disk_usage(Product(tmp_path, {}, pg_dsn=pg_dsn))
    assert usage["postgres_pgvector"] > 400 * 1536  # at least the vectors themselves
    assert usage["postgres_pgvector"] < usage["postgres"]


def test_an_ab_asks_each_question_of_both_services_in_abba_order() -> None:
    rounds = len(SEARCH_CONFIGS)
    assert [ab_order(i) for i in range(rounds)] == ["AB"] * rounds
    assert [ab_order(rounds + i) for i in range(rounds)] == ["BA"] * rounds
    asked: list[tuple[str, str]] = []

    def handler(side: str, ms: float) -> type[BaseHTTPRequestHandler]:
        class Search(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                asked.append((side, orjson.loads(body)["query"]))
                answer = orjson.dumps(
                    {"results": [], "explain": {"timings_ms": {"total": ms, "bm25": ms / 2}}}
                )
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        return Search

    servers = {
        side: ThreadingHTTPServer(("127.0.0.1", 0), handler(side, ms))
        for side, ms in (("A", 4.0), ("B", 2.0))
    }
    for server in servers.values():
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        urls = {side: f"http://127.0.0.1:{srv.server_address[1]}" for side, srv in servers.items()}
        queries = [{"query": f"q{i}", "limit": 10} for i in range(3 * rounds)]
        found = time_searches_ab(urls, queries, warmup=1)
    finally:
        for server in servers.values():
            server.shutdown()
            server.server_close()
    # every question asked of both, one right after the other, the order turning each round
    assert (
        [q for _, q in asked[::2]] == [q for _, q in asked[1::2]] == [q["query"] for q in queries]
    )
    assert "".join(side for side, _ in asked) == "AB" * rounds + "BA" * rounds + "AB" * rounds
    for name, _ in SEARCH_CONFIGS:
        assert found[name]["A"]["n"] == found[name]["B"]["n"] == 2  # the first round is warm-up
        assert found[name]["A"]["server_p50_ms"] == {"total": 4.0, "bm25": 2.0}
        assert found[name]["B"]["server_p50_ms"] == {"total": 2.0, "bm25": 1.0}
        assert set(found[name]["paired"]) == {
            "median_b_minus_a_ms",
            "b_faster_share",
            "p50_ratio_b_a",
        }


def test_paired_figures_compare_the_same_questions() -> None:
    figures = paired([10.0, 20.0, 30.0], [9.0, 22.0, 27.0])
    assert figures["median_b_minus_a_ms"] == -1.0  # -1, +2, -3
    assert figures["b_faster_share"] == 0.667
    assert figures["p50_ratio_b_a"] == 1.1  # 22 / 20
    with pytest.raises(ValueError):
        paired([1.0, 2.0], [1.0])  # not the same questions


def test_an_ab_needs_a_kept_store_and_settings_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--ab", "AGENT_MEMORY_QUERY__POOL_SIZE=8"])
    assert "only with --remeasure" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--remeasure", "/tmp/x", "--ab", "POOL_SIZE=8"])
    assert "--ab: NAME=VALUE" in capsys.readouterr().err
    args = parse_args(["--remeasure", "/tmp/x", "--ab", "AGENT_MEMORY_QUERY__POOL_SIZE=8"])
    assert args.ab == ["AGENT_MEMORY_QUERY__POOL_SIZE=8"]


def test_the_stack_is_quiet_only_when_its_processes_rest(tmp_path: Path) -> None:
    def session(code: str) -> Product:
        product = Product(tmp_path, {})
        product.proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        return product

    busy = session("while True: pass")
    try:
        time.sleep(0.6)
        assert busy.cpu_seconds() > 0.2
        assert busy.wait_until_quiet(share=0.15, window_s=0.3, timeout_s=1.0) >= 1.0  # gave up
    finally:
        assert busy.proc is not None
        busy.proc.kill()
        busy.proc.wait()
    idle = session("import time; time.sleep(30)")
    try:
        assert idle.wait_until_quiet(share=0.15, window_s=0.3, timeout_s=5.0) < 1.0
    finally:
        assert idle.proc is not None
        idle.proc.kill()
        idle.proc.wait()
