"""``lean_nats``: a process that imports the shared code and then nats-py does not load aiohttp,
unless its NATS URL is a WebSocket one; aiohttp itself stays importable. Each case runs in a
fresh interpreter (an import hook acts once per process)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import sys
import agent_memory_common.bus.natslink  # what a service imports: it imports nats
import nats.aio.transport as t
print("aiohttp loaded:", "aiohttp" in sys.modules, "transport has it:", t.aiohttp is not None)
import aiohttp  # a later importer (the OpenSearch adapter) still gets the package
print("importable:", bool(aiohttp.ClientSession))
"""


def _probe(nats_url: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "AGENT_MEMORY_NATS_URL"}
    if nats_url is not None:
        env["AGENT_MEMORY_NATS_URL"] = nats_url
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("url", [None, "nats://127.0.0.1:4222", "tls://nats.example:4222"])
def test_a_tcp_connection_loads_no_aiohttp(url: str | None) -> None:
    out = _probe(url)
    assert "aiohttp loaded: False transport has it: False" in out
    assert "importable: True" in out


@pytest.mark.parametrize("url", ["ws://127.0.0.1:8080", "nats://a:4222,wss://b:443"])
def test_a_websocket_url_gets_aiohttp(url: str) -> None:
    out = _probe(url)
    assert "aiohttp loaded: True transport has it: True" in out
