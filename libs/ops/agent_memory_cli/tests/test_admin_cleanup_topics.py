"""``agent-memory admin cleanup`` (the real command, in-process cleanup on a real Postgres)
reports and prunes faded topics like the pruner service: index "topics", the topics service's
variables, text and JSON output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.topics_support import seed_topic, topic_rows


def cleanup(pg_dsn: str, home: Path, *flags: str) -> str:
    env = {
        **os.environ,
        "AGENT_MEMORY_PG_DSN": pg_dsn,
        "AGENT_MEMORY_HOME": str(home),
        "AGENT_MEMORY_TOPIC_PRUNE_BELOW": "0.1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "admin", "cleanup", *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_cleanup_command_prunes_faded_topics(pg_dsn: str, tmp_path: Path) -> None:
    now = datetime.now(UTC)
    seed_topic(pg_dsn, "topic:faded", ended=now - timedelta(days=365), label="flamingo cache")
    seed_topic(pg_dsn, "topic:fresh", ended=now - timedelta(days=1))

    text = cleanup(pg_dsn, tmp_path, "--dry-run")
    assert "topics (postgres): 1 would go" in text, text
    assert "importance >= 0.1 (half-life 30d)" in text and "topic:faded" in text, text
    assert len(topic_rows(pg_dsn)["topics"]) == 2

    report = json.loads(cleanup(pg_dsn, tmp_path, "--json", "--tenant", "acme"))
    (topics,) = [i for i in report["indexes"] if i["index"] == "topics"]
    assert topics["entries"] == 1
    assert [e["id"] for lv in topics["levels"] for e in lv["examples"]] == ["topic:faded"]
    assert topic_rows(pg_dsn)["topics"] == [("acme", "topic:fresh")]
