"""docs/asyncapi.json is what faststream generates from the code's declarations."""

from __future__ import annotations

import json
from pathlib import Path

from agent_memory_common.bus.asyncapi import document
from agent_memory_common.bus.erasure import DOCUMENTED_PARTICIPANTS
from agent_memory_common.bus.streams import PIPELINE_CONSUMERS

COMMITTED = Path(__file__).resolve().parents[4] / "docs" / "asyncapi.json"


def test_committed_document_is_what_the_code_generates() -> None:
    assert COMMITTED.read_text() == document(), (
        "regenerate: .venv/bin/python -m agent_memory_common.bus.asyncapi > docs/asyncapi.json"
    )


def test_every_durable_consumer_and_subject_family_is_described() -> None:
    doc = json.loads(document())
    received = {
        op["channel"]["$ref"] for op in doc["operations"].values() if op["action"] == "receive"
    }
    assert len(received) == len(PIPELINE_CONSUMERS) + len(DOCUMENTED_PARTICIPANTS)
    addresses = {channel["address"] for channel in doc["channels"].values()}
    for family in ("events", "recorded", "segments", "toc"):
        assert f"mem.{family}.{{tenant}}.{{project}}" in addresses
        assert f"mem.{family}.>" in addresses
    assert "mem.dlq.{consumer}" in addresses
    assert "mem.erasure.{tenant}.{project}" in addresses
