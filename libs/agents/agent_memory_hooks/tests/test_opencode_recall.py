"""Recall in OpenCode (issue 54): the real plugin file run by node, as OpenCode runs it, against
a real stack (gateway, recorder, both indexers, the query service with its sentence model), and
against no stack at all.

What must hold: before the session's model calls, ``experimental.chat.system.transform`` adds the
project's brief (``GET /v1/projects/{id}/brief``) to the system prompt; ``chat.message`` adds what
``POST /v1/recall`` gives the prompt as a synthetic text part of the user message, which OpenCode
stores and sends with it; what the session was given is not given again; a prompt no memory
answers gets nothing; what recall adds is never recorded as the person's words; a subagent's
session and ``AGENT_MEMORY_RECALL=off`` get nothing; with the service down or silent, nothing is
added and each hook lets OpenCode go on within a second.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.stack import Stack, recall_ready_stack

from .conftest import wait_for_events
from .opencode_node import install_plugin, run_plugin

PROJECT = "oc-recall"
FACTS = [
    "We decided the billing service stores money as integer cents, never floats.",
    "The staging deploy failed because the migration took an exclusive lock on invoices.",
    "Decision: the recorder acknowledges a message only after the Postgres commit.",
    "I prefer pytest fixtures over unittest setUp methods in this repository.",
    "The nightly export job writes gzip JSON lines to the archive bucket.",
    "We use ruff for linting and formatting, with a line length of 100.",
]
MONEY = "how do we store money amounts in billing?"
SYSTEM = ["You are OpenCode."]  # what the stand-in's system prompt holds before the plugin


@pytest.fixture(scope="module")
def recall_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """The services recall needs: its confidence is the best cosine, so the vector tier too."""
    with recall_ready_stack(pg_server, tmp_path_factory, PROJECT, FACTS) as s:
        yield s


def plugin_env(tmp_path: Path, gateway_url: str, query_url: str, **extra: str) -> dict[str, str]:
    """OpenCode's environment, which the plugin's hook processes inherit."""
    return {
        "PATH": "/usr/bin:/bin",
        "AGENT_MEMORY_HOME": str(tmp_path / "am-home"),
        "AGENT_MEMORY_GATEWAY_URL": gateway_url,
        "AGENT_MEMORY_QUERY_URL": query_url,
        "AGENT_MEMORY_HOOK_TIMEOUT_MS": "3000",  # capture on a loaded machine (conftest)
        "AGENT_MEMORY_HOOK_BUDGET_MS": "4000",
        **extra,
    }


def added(turn: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts the plugin added to the user message (the stand-in sends one)."""
    parts: list[dict[str, Any]] = turn["parts"][1:]
    return parts


def test_opencode_gets_the_brief_and_each_prompts_recall(
    recall_stack: Stack, tmp_path: Path
) -> None:
    plugin = install_plugin(tmp_path, project_id=PROJECT)
    env = plugin_env(tmp_path, recall_stack.gateway_url, recall_stack.query_url)
    session = "ses_oc_recall_1"
    run = run_plugin(plugin, env, session, [MONEY, MONEY, "thanks"])
    assert run.returncode == 0, run.stderr
    first, again, thanks = run.turns

    # the brief, in the system prompt of every model call of the session, as the service gives it
    brief = plain_http.get(
        f"{recall_stack.query_url}/v1/projects/{PROJECT}/brief",
        params={"budget_tokens": 1500, "session_id": session},
        timeout=30,
    ).json()
    assert brief["context"] and "Last session" in brief["context"]
    for turn in (first, again, thanks):
        assert turn["system"] == [*SYSTEM, brief["context"]]

    # the prompt's recall: one synthetic text part of the user message, after the prompt
    prompt_part = first["parts"][0]
    (part,) = added(first)
    assert "integer cents" in part["text"]
    assert "[e-000000]" in part["text"]  # each line cites the memory it quotes
    assert part["type"] == "text" and part["synthetic"] is True
    assert (part["sessionID"], part["messageID"]) == (session, prompt_part["messageID"])
    assert part["id"].startswith("prt_") and len(part["id"]) == len(prompt_part["id"])
    assert part["id"] > prompt_part["id"]  # OpenCode reads a message's parts in id order
    # the same prompt again: what the session was given is not given twice
    assert not any("integer cents" in p["text"] for p in added(again))
    assert added(thanks) == []  # no memory answers it

    # capture is untouched: the prompts are stored as typed, the recalled text nowhere
    # (session start, three prompts, tool call and result, the reply)
    events = wait_for_events(recall_stack.query_url, session, 7)
    prompts = sorted(e["text"] for e in events if (e["role"], e["type"]) == ("user", "message"))
    assert prompts == sorted([MONEY, MONEY, "thanks"])
    assert not any("integer cents" in e["text"] for e in events)
    assert {e["project_id"] for e in events} == {PROJECT}

    # a subagent's session (its prompt is the model's) and recall turned off: nothing at all
    child = run_plugin(plugin, env, "ses_oc_child", [MONEY], parent=session)
    off = run_plugin(plugin, {**env, "AGENT_MEMORY_RECALL": "off"}, "ses_oc_off", [MONEY])
    for other in (child, off):
        assert other.returncode == 0, other.stderr
        (turn,) = other.turns
        assert (added(turn), turn["system"]) == ([], SYSTEM)


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A port that accepts connections and never answers: a service hung mid-request."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


@pytest.mark.serial  # a wall-clock budget: measured alone, not beside the other workers
def test_with_the_service_down_or_silent_opencode_gets_nothing_within_a_second(
    tmp_path: Path, silent_server: str
) -> None:
    plugin = install_plugin(tmp_path, project_id=PROJECT)
    for url in ("http://127.0.0.1:9", silent_server):
        env = plugin_env(tmp_path, "http://127.0.0.1:9", url)
        started = time.monotonic()
        run = run_plugin(plugin, env, f"ses_oc_down_{url[-5:]}", [MONEY, MONEY])
        assert run.returncode == 0, run.stderr
        assert len(run.turns) == 2
        for turn in run.turns:
            assert (added(turn), turn["system"]) == ([], SYSTEM), url
            # each awaited hook: at most the hook's deadline (600 ms) and its process's start
            assert turn["chat_ms"] < 1000 and turn["system_ms"] < 1000, (url, turn)
        assert time.monotonic() - started < 10
