"""The embedded Postgres is sized from the machine (or the container), and a real server takes
the settings: its buffers, the planner's cache size and the autoprewarm worker."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from agent_memory_embedded import PostgresServer, free_port, pgmemory, postgres_memory_settings

GIB = 1024**3


def test_auto_is_a_quarter_of_memory_within_bounds() -> None:
    assert postgres_memory_settings(memory=24 * GIB)["shared_buffers"] == "6144MB"
    assert postgres_memory_settings(memory=24 * GIB)["effective_cache_size"] == "12288MB"
    assert postgres_memory_settings(memory=256 * 1024**2)["shared_buffers"] == "128MB"
    assert postgres_memory_settings(memory=256 * GIB)["shared_buffers"] == "8192MB"


def test_an_explicit_size_is_kept_and_a_wrong_one_is_named() -> None:
    assert postgres_memory_settings("512MB", memory=24 * GIB)["shared_buffers"] == "512MB"
    for wrong in ("4 GB", "4G", "0MB", "-1MB", "lots"):
        with pytest.raises(ValueError, match="shared_buffers"):
            postgres_memory_settings(wrong)


def test_a_container_is_sized_by_its_cgroup_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    v2, v1 = tmp_path / "memory.max", tmp_path / "memory.limit_in_bytes"
    monkeypatch.setattr(pgmemory, "_CGROUP_LIMITS", (v2, v1))
    physical = pgmemory.machine_memory()  # neither file exists: the physical memory
    v2.write_text("max\n")
    v1.write_text("9223372036854771712\n")  # cgroup v1's "no limit"
    assert pgmemory.machine_memory() == physical
    v1.write_text(f"{2 * GIB}\n")
    assert pgmemory.machine_memory() == min(physical, 2 * GIB)
    assert (
        postgres_memory_settings()["shared_buffers"] == f"{min(physical, 2 * GIB) // 4 // 2**20}MB"
    )


def test_a_real_server_takes_the_settings(tmp_path: Path) -> None:
    server = PostgresServer(
        tmp_path / "data",
        free_port(),
        tmp_path / "postgres.log",
        settings={**postgres_memory_settings("256MB", memory=4 * GIB), "fsync": "off"},
        trust=True,
    )
    server.start(timeout=60)
    try:
        with psycopg.connect(server.dsn(), autocommit=True) as conn:
            assert conn.execute("SHOW shared_buffers").fetchone() == ("256MB",)
            assert conn.execute("SHOW effective_cache_size").fetchone() == ("2GB",)
            conn.execute("CREATE TABLE warm AS SELECT generate_series(1, 10000) AS n")
    finally:
        server.stop()
    # the autoprewarm worker wrote down what was in the buffers, for the next start to read
    blocks = tmp_path / "data" / "autoprewarm.blocks"
    assert blocks.exists() and blocks.stat().st_size > 0
