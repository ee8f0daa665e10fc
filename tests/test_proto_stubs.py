"""The committed Python stubs of ``proto/`` are exactly what ``make proto`` generates today.

A proto change without ``make proto`` (or a hand edit of a ``*_pb2*`` file) fails here, naming
the file that differs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "libs" / "agents" / "agent_memory_proto"
PACKAGE = LIB / "src" / "agent_memory_proto"


def _stubs(folder: Path) -> dict[str, bytes]:
    """The stub sources (not the bytecode an import of them leaves beside them)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*_pb2*"))
        if p.suffix in (".py", ".pyi")
    }


def test_regenerating_the_stubs_changes_nothing(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(LIB / "generate.py"), str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fresh, committed = _stubs(tmp_path), _stubs(PACKAGE)
    assert sorted(fresh) == sorted(committed), "run `make proto` and commit the stubs"
    for name, data in fresh.items():
        assert committed[name] == data, f"{name} differs from protoc's output: run `make proto`"


def test_the_stubs_import_and_name_the_service() -> None:
    from agent_memory_proto.v1 import event_pb2, event_pb2_grpc

    service = event_pb2.DESCRIPTOR.services_by_name["IngestService"]
    assert service.full_name == "agent_memory.v1.IngestService"
    assert [m.name for m in service.methods] == ["IngestEvents", "IngestEventStream"]
    assert event_pb2.DESCRIPTOR.name == "agent_memory/v1/event.proto"  # as in every language
    assert hasattr(event_pb2_grpc, "IngestServiceStub")
