"""The process plumbing every test stack and ``make run`` stand on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_memory_embedded.servers import ManagedProcess, free_port


def test_free_port_never_hands_out_a_port_twice() -> None:
    """The kernel gives a just-closed port to the next ``bind(0)`` often (about one call in ten
    here): two services of one stack were handed the same port and one died at start."""
    ports = [free_port() for _ in range(2000)]
    assert len(set(ports)) == len(ports)


def test_a_child_that_dies_at_start_says_why_in_the_error(tmp_path: Path) -> None:
    child = ManagedProcess(
        "query",
        [sys.executable, "-c", "print('[Errno 98] address already in use'); raise SystemExit(3)"],
        tmp_path / "query.log",
        ready=lambda: False,
    )
    with pytest.raises(RuntimeError, match=r"(?s)query exited with 3.*address already in use"):
        child.start(timeout=30)
