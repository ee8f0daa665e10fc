"""The command honours the same settings as the services: ports, tokens, addresses.

Each of these once went wrong: ``migrate`` and ``admin rebuild-index`` connected to the default
Postgres port whatever ``AGENT_MEMORY_EMBEDDED__PG_PORT`` said (and wrote into another stack's
database), and ``agent-memory status`` ignored ``AGENT_MEMORY_TOKEN``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agent_memory_cli.__main__ import main
from agent_memory_embedded.servers import NatsServer, PostgresServer
from tests.stack import LEAN, Stack, make_stack

AGENT_MEMORY = str(Path(sys.executable).parent / "agent-memory")


def test_migrate_connects_to_the_embedded_port_it_is_given(
    pg_server: PostgresServer, tmp_path: Path
) -> None:
    env = {
        "PATH": str(Path(sys.executable).parent),
        "AGENT_MEMORY_HOME": str(tmp_path),
        "AGENT_MEMORY_EMBEDDED__PG_PORT": str(pg_server.port),
    }
    # Only the port is given: the database is the default one, created on *this* server.
    out = subprocess.run(
        [AGENT_MEMORY, "migrate"], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "migration" in out.stdout
    with psycopg.connect(pg_server.dsn("agent_memory")) as conn:
        row = conn.execute("SELECT count(*) FROM schema_migrations").fetchone()
    assert row is not None and row[0] > 0
    # And a port where nothing listens is an error naming the connection, not a silent success
    # against the default port.
    env["AGENT_MEMORY_EMBEDDED__PG_PORT"] = "9"
    out = subprocess.run(
        [AGENT_MEMORY, "migrate"], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode != 0
    assert out.stderr.startswith("agent-memory: Postgres not reachable") and "9" in out.stderr


def test_a_wrong_setting_is_named_not_a_traceback(tmp_path: Path) -> None:
    env = {
        "PATH": str(Path(sys.executable).parent),
        "AGENT_MEMORY_HOME": str(tmp_path),
        "AGENT_MEMORY_EMBEDDED__PG_PORT": "abc",
        "AGENT_MEMORY_EMBEDDED__PG_SHARED_BUFFERS": "4 GB",
    }
    out = subprocess.run([AGENT_MEMORY, "up"], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert (
        lines[0].startswith("agent-memory: AGENT_MEMORY_EMBEDDED__PG_PORT: ")
        and "'abc'" in lines[0]
    )
    assert lines[1].startswith("agent-memory: AGENT_MEMORY_EMBEDDED__PG_SHARED_BUFFERS: ")
    assert not (tmp_path / "postgres").exists()  # nothing was started


@pytest.fixture
def secured(nats_server: NatsServer, pg_dsn: str, tmp_path: Path) -> Iterator[Stack]:
    # no sentence model: the search below finds nothing by any tier
    s = make_stack(nats_server, pg_dsn, tmp_path, AGENT_MEMORY_TOKENS="token-a:acme", **LEAN)
    try:
        s.start("query")
        yield s
    finally:
        s.stop()


def test_status_and_search_read_the_token_from_the_environment(
    secured: Stack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENT_MEMORY_QUERY__PORT", secured.query_url.rsplit(":", 1)[1])
    monkeypatch.delenv("AGENT_MEMORY_TOKEN", raising=False)
    assert main(["status"]) == 1
    assert "401" in capsys.readouterr().out

    monkeypatch.setenv("AGENT_MEMORY_TOKEN", "token-a")
    assert main(["status"]) == 0
    assert "events stored: 0" in capsys.readouterr().out
    assert main(["search", "anything at all", "--json"]) == 0
    assert '"results": []' in capsys.readouterr().out

    # --token still wins over the environment
    assert main(["status", "--token", "wrong"]) == 1
    assert "401" in capsys.readouterr().out


def test_unreachable_service_is_one_line_and_exit_code_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENT_MEMORY_QUERY__PORT", "9")
    for argv in (["status"], ["search", "x"], ["toc"]):
        assert main(argv) == 2
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and "unavailable at http://127.0.0.1:9" in out, out


def test_replicas_per_service_and_a_wrong_one_named() -> None:
    from agent_memory_cli.supervisor import CONSUMERS, replica_counts

    assert replica_counts([]) == dict.fromkeys(CONSUMERS, 1)
    assert replica_counts(["2"]) == dict.fromkeys(CONSUMERS, 2)
    counts = replica_counts(["2", "embedder=3", "recorder=1"])
    assert counts["embedder"] == 3 and counts["recorder"] == 1 and counts["topics"] == 2
    for bad, said in (
        ("embeder=2", "'embeder' is not a consumer service"),
        ("query=2", "'query' is not a consumer service"),
        ("embedder=0", "must be 1 or more"),
        ("two", "must be 1 or more"),
    ):
        with pytest.raises(ValueError, match=said):
            replica_counts([bad])


def test_services_left_out_by_name_and_a_wrong_one_named() -> None:
    from agent_memory_cli.supervisor import left_out

    assert left_out([]) == frozenset()
    assert left_out(["dashboard", "embedder,topics", " pruner , "]) == {
        "dashboard",
        "embedder",
        "topics",
        "pruner",
    }
    with pytest.raises(ValueError, match=r"--without embeder: not a service .*embedder"):
        left_out(["dashboard,embeder"])


def test_up_with_a_wrong_replica_count_says_so_and_starts_nothing(tmp_path: Path) -> None:
    env = {"PATH": str(Path(sys.executable).parent), "AGENT_MEMORY_HOME": str(tmp_path)}
    out = subprocess.run(
        [AGENT_MEMORY, "up", "--replicas", "embeder=2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert "--replicas embeder=2: 'embeder' is not a consumer service" in out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "postgres").exists()
