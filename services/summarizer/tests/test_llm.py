"""The optional LLM summarizer against a fake OpenAI-compatible endpoint (the only fake in
these tests: an external model server), and its fallback to the extractive summarizer."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pydantic import SecretStr

from agent_memory_embedded.servers import NatsServer, free_port
from agent_memory_summarizer.llm import LlmSummarizer, build_prompt
from agent_memory_summarizer.model import SourceEvent
from agent_memory_summarizer.settings import LlmOptions
from tests.helpers import eventually
from tests.stack import make_stack
from tests.toc_support import (
    all_summarized,
    insert_events,
    make_events,
    publish_segments,
    segment_payload,
    utc,
)

GOOD_ANSWER = {
    "title": "Model title: the rollup lock",
    "keywords": ["rollup lock", "Grips"],
    "bullets": [
        {"text": "The recorder acknowledges only after the commit.", "events": [1]},
        {"text": "Grips link bullets to events.", "events": [2, 99]},
        {"text": "A bullet citing nothing real is dropped.", "events": [42]},
    ],
}


@dataclass
class FakeLlm:
    """An OpenAI-style /chat/completions endpoint with a switchable behaviour."""

    mode: str = "ok"  # ok | fenced | error | slow | garbage
    usage: int = 5_000
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def serve(self) -> http.server.ThreadingHTTPServer:
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                fake.requests.append(
                    {"path": self.path, "auth": self.headers.get("authorization"), **body}
                )
                if fake.mode == "error":
                    self._send(500, {"error": {"message": "overloaded"}})
                    return
                if fake.mode == "slow":
                    time.sleep(3)
                content = json.dumps(GOOD_ANSWER)
                if fake.mode == "fenced":
                    content = "```json\n" + content + "\n```"
                if fake.mode == "garbage":
                    content = "Sure! Here is a summary: the team worked on locks."
                self._send(
                    200,
                    {
                        "choices": [{"message": {"role": "assistant", "content": content}}],
                        "usage": {"total_tokens": fake.usage},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_: object) -> None:
                pass

        return _QuietServer(("127.0.0.1", self.port), Handler)


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that timed out and hung up (the "slow" mode) is expected, not news."""


@pytest.fixture
def fake_llm() -> Iterator[FakeLlm]:
    fake = FakeLlm()
    server = fake.serve()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


EVENTS = [
    SourceEvent(
        "ev-1",
        datetime(2026, 3, 2, 9, tzinfo=UTC),
        "user",
        "message",
        "We looked at the queue. The recorder acknowledges only after the commit. Then lunch.",
    ),
    SourceEvent(
        "ev-2",
        datetime(2026, 3, 2, 9, 1, tzinfo=UTC),
        "assistant",
        "message",
        "Added grips: they link each bullet to the events it came from.",
    ),
]


def options(fake: FakeLlm, **over: Any) -> LlmOptions:
    base: dict[str, Any] = {
        "base_url": fake.url,
        "model": "fake-model",
        "api_key": SecretStr("sk-test"),
        "timeout_s": 1.0,
    }
    return LlmOptions(**{**base, **over})


async def summarize(fake: FakeLlm, **over: Any) -> Any:
    llm = LlmSummarizer(options(fake, **over))
    try:
        return await llm.summarize(EVENTS, build_prompt(EVENTS, 10_000))
    finally:
        await llm.close()


async def test_model_bullets_become_gripped_bullets(fake_llm: FakeLlm) -> None:
    summary, spent = await summarize(fake_llm)
    assert spent == 5_000
    assert summary is not None and summary.title == "Model title: the rollup lock"
    assert summary.keywords == ["rollup lock", "grips"]
    assert [b.text for b in summary.bullets] == [
        "The recorder acknowledges only after the commit.",
        "Grips link bullets to events.",
    ], "the bullet citing no real event is dropped"
    first, second = summary.bullets
    assert first.grips[0].event_ids == ("ev-1",)
    assert "The recorder acknowledges only after the commit." in first.grips[0].excerpt
    assert [g.event_ids for g in second.grips] == [("ev-2",)]
    request = fake_llm.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["auth"] == "Bearer sk-test"
    assert request["model"] == "fake-model" and request["temperature"] == 0
    assert "[1] user message: We looked at the queue." in request["messages"][1]["content"]


async def test_fenced_json_is_accepted(fake_llm: FakeLlm) -> None:
    fake_llm.mode = "fenced"
    summary, _ = await summarize(fake_llm)
    assert summary is not None and len(summary.bullets) == 2


@pytest.mark.parametrize("mode", ["error", "slow", "garbage"])
async def test_failures_ask_for_the_fallback(fake_llm: FakeLlm, mode: str) -> None:
    fake_llm.mode = mode
    started = time.monotonic()
    summary, spent = await summarize(fake_llm, timeout_s=0.5)
    assert summary is None
    assert spent > 0, "an attempt is charged to the budget"
    assert time.monotonic() - started < 2.5, "the timeout bounds the wait"
    assert len(fake_llm.requests) == 1


async def test_unreachable_endpoint_asks_for_the_fallback() -> None:
    llm = LlmSummarizer(
        LlmOptions(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", timeout_s=1.0)
    )
    try:
        summary, _ = await llm.summarize(EVENTS, build_prompt(EVENTS, 10_000))
    finally:
        await llm.close()
    assert summary is None


def summarizers(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT bucket, summarizer FROM toc_node_versions WHERE level = 'segment'"
        ).fetchall()
    return dict(rows)


def test_service_uses_the_model_until_the_project_budget_is_spent(
    fake_llm: FakeLlm, nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    first = make_events("llm1", utc(2026, 3, 2, 9), 6, session="a")
    second = make_events("llm2", utc(2026, 3, 2, 13), 6, session="b")
    insert_events(pg_dsn, first + second)
    stack = make_stack(
        nats_server,
        pg_dsn,
        tmp_path,
        AGENT_MEMORY_SUMMARIZER__BATCH_SIZE="1",
        AGENT_MEMORY_SUMMARIZER__LLM__BASE_URL=fake_llm.url,
        AGENT_MEMORY_SUMMARIZER__LLM__MODEL="fake-model",
        AGENT_MEMORY_SUMMARIZER__LLM__MAX_TOKENS="64",
        # room for one call (estimated at ~600 tokens), not after it reports 5,000 used
        AGENT_MEMORY_SUMMARIZER__LLM__PROJECT_TOKENS_PER_DAY="5500",
    )
    try:
        publish_segments(
            nats_server.url,
            [
                segment_payload(first, segment_id="sg_llm1"),
                segment_payload(second, segment_id="sg_llm2"),
            ],
        )
        stack.start("summarizer")
        expected = {"sg_llm1": 1, "sg_llm2": 1}
        eventually(lambda: all_summarized(pg_dsn, expected), timeout=60, what="summarized")
    finally:
        stack.stop()
    assert summarizers(pg_dsn) == {"sg_llm1": "llm:fake-model", "sg_llm2": "extractive"}
    assert len(fake_llm.requests) == 1, "over budget: the model is not even asked"
    with psycopg.connect(pg_dsn) as conn:
        title, bullets = conn.execute(
            "SELECT title, bullets FROM toc_node_versions WHERE node_id = 'segment:sg_llm1'"
        ).fetchone() or ("", [])
        used = conn.execute("SELECT tokens FROM summarizer_llm_usage").fetchone()
        grip_events = conn.execute(
            "SELECT DISTINCT unnest(event_ids) FROM toc_grips WHERE node_id = 'segment:sg_llm1'"
        ).fetchall()
    assert title == "Model title: the rollup lock"
    assert len(bullets) == 2 and all(b["grip_ids"] for b in bullets)
    assert {r[0] for r in grip_events} == {"llm1-00000", "llm1-00001"}
    assert used == (5_000,)


def test_service_falls_back_when_the_model_fails(
    fake_llm: FakeLlm, nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    fake_llm.mode = "error"
    events = make_events("llmx", utc(2026, 3, 3, 9), 6)
    insert_events(pg_dsn, events)
    stack = make_stack(
        nats_server,
        pg_dsn,
        tmp_path,
        AGENT_MEMORY_SUMMARIZER__LLM__BASE_URL=fake_llm.url,
        AGENT_MEMORY_SUMMARIZER__LLM__MODEL="fake-model",
    )
    try:
        publish_segments(nats_server.url, [segment_payload(events, segment_id="sg_llmx")])
        stack.start("summarizer")
        eventually(lambda: all_summarized(pg_dsn, {"sg_llmx": 1}), timeout=60, what="done")
    finally:
        stack.stop()
    assert summarizers(pg_dsn) == {"sg_llmx": "extractive"}
    assert len(fake_llm.requests) == 1


def test_batches_shrink_so_that_model_calls_end_within_the_ack_wait() -> None:
    from agent_memory_common.bus.streams import SUMMARIZER
    from agent_memory_summarizer.app import batch_size
    from agent_memory_summarizer.settings import SummarizerOptions

    assert batch_size(SummarizerOptions(batch_size=32)) == 32  # no model: as configured
    with_model = SummarizerOptions(
        batch_size=32, llm=LlmOptions(base_url="http://x/v1", model="m", timeout_s=2)
    )
    fits = int(SUMMARIZER.ack_wait_s // 3)  # each call may take its timeout, x1.5
    assert 1 < fits < 32
    assert batch_size(with_model) == fits
    slow = SummarizerOptions(llm=LlmOptions(base_url="http://x/v1", model="m", timeout_s=600))
    assert batch_size(slow) == 1
