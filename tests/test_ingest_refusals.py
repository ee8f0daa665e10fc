"""Refusals are said (issue 53, point 4): events whose ids were erased are answered as refused.

An erased event id is never stored again (the recorder drops it: ``erased_events``). The
gateway asks Postgres which ids of a batch were erased and answers them as ``refused`` with
the reason ``erased``, over HTTP and gRPC alike, instead of counting them as accepted; and
``agent-memory import`` prints them in its summary. Every part a real process on a real
nats-server and Postgres.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc

from agent_memory_proto.v1 import event_pb2_grpc
from agent_memory_proto.v1.event_pb2 import ROLE_USER, Event, EventBatch
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.stack import Stack

AGENT_MEMORY = str(Path(sys.executable).parent / "agent-memory")
CLAUDE = (
    Path(__file__).parents[1]
    / "libs/agents/agent_memory_hooks/tests/fixtures/hooks/claude-code/projects"
)
SESSION = "5d0c7a3e-9b1f-4e2a-8c6d-2f4e6a8b0c1d"  # of the Claude Code fixture: 20 events


def _events_of(stack: Stack, **params: Any) -> list[dict[str, Any]]:
    r = plain_http.get(f"{stack.query_url}/v1/events", params={**params, "limit": 1000}, timeout=10)
    r.raise_for_status()
    events: list[dict[str, Any]] = r.json()["events"]
    return events


def _stored(stack: Stack, count: int, **params: Any) -> list[dict[str, Any]]:
    def enough() -> list[dict[str, Any]] | None:
        got = _events_of(stack, **params)
        return got if len(got) >= count else None

    return eventually(enough, what=f"{count} events stored")


def _erase(stack: Stack, project: str, scope: dict[str, Any]) -> None:
    r = plain_http.post(
        f"{stack.query_url}/v1/erasures",
        json={"project_id": project, "scope": scope},
        timeout=30,
    )
    assert r.status_code == 202, r.text


def _post(stack: Stack, events: list[dict[str, Any]]) -> dict[str, Any]:
    r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events}, timeout=10)
    assert r.status_code == 202, r.text
    answer: dict[str, Any] = r.json()
    return answer


def test_reposting_erased_event_ids_counts_them_as_refused(shared_stack: Stack) -> None:
    events = [make_event(900 + i, project="refusals", session="r1") for i in range(3)]
    fresh = _post(shared_stack, events)
    assert fresh == {
        "accepted": 3,
        "event_ids": [e["event_id"] for e in events],
        "refused": 0,
        "refusals": [],
    }
    _stored(shared_stack, 3, session_id="r1", project_id="refusals")
    erased = [events[0]["event_id"], events[1]["event_id"]]
    _erase(shared_stack, "refusals", {"event_ids": erased})

    newcomer = make_event(903, project="refusals", session="r1")
    again = _post(shared_stack, [*events, newcomer])
    assert again == {
        "accepted": 2,
        "event_ids": [events[2]["event_id"], newcomer["event_id"]],
        "refused": 2,
        "refusals": [{"event_id": e, "reason": "erased"} for e in erased],
    }
    only_erased = _post(shared_stack, events[:2])  # all refused: still an answer, not an error
    assert only_erased["accepted"] == 0 and only_erased["event_ids"] == []
    assert only_erased["refused"] == 2

    with grpc.insecure_channel(shared_stack.gateway_grpc) as channel:
        stub = event_pb2_grpc.IngestServiceStub(channel)
        batch = EventBatch(
            events=[
                Event(
                    event_id=e["event_id"],
                    project_id="refusals",
                    agent_id="claude-code",
                    session_id="r1",
                    role=ROLE_USER,
                    text=e["text"],
                )
                for e in events
            ]
        )
        answer = stub.IngestEvents(batch, timeout=10)
    assert answer.accepted == 1 and list(answer.event_ids) == [events[2]["event_id"]]
    assert answer.refused == 2
    assert [(r.event_id, r.reason) for r in answer.refusals] == [(e, "erased") for e in erased]

    stored = {e["event_id"] for e in _stored(shared_stack, 2, session_id="r1")}
    assert stored == {events[2]["event_id"], newcomer["event_id"]}  # the erased stay erased


def test_import_after_an_erasure_says_the_events_were_refused(shared_stack: Stack) -> None:
    # the console script is installed with the workspace (make install): its absence is a
    # broken environment, said loudly, not a reason to skip
    assert shutil.which(AGENT_MEMORY), f"{AGENT_MEMORY} is missing: run make install"

    def run_import() -> str:
        proc = subprocess.run(
            [AGENT_MEMORY, "import", "claude-code", str(CLAUDE), "--quiet"],
            env={**shared_stack.env, "AGENT_MEMORY_PROJECT_ID": "refused-import"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    assert "20 event(s) sent" in run_import()
    _stored(shared_stack, 20, session_id=SESSION)
    _erase(shared_stack, "refused-import", {"session_id": SESSION})
    out = run_import()
    assert "0 event(s) sent" in out, out
    assert "20 event(s) refused: 20 erased" in out, out
