"""Generate the Python stubs of ``proto/`` into ``src/agent_memory_proto``: ``make proto``.

``python generate.py [OUT]``: OUT defaults to this package's ``src/agent_memory_proto``;
``tests/test_proto_stubs.py`` generates into a temporary folder and compares, so the committed
stubs cannot drift from the proto files.

protoc (grpcio-tools) writes ``agent_memory/v1/event_pb2.py`` for ``proto/agent_memory/v1``, and
the gRPC module imports it as ``agent_memory.v1``; here they live in ``agent_memory_proto.v1``, so
those imports are rewritten. The descriptors keep the proto's own file names and package
(``agent_memory.v1``), so the wire, the service path and reflection match every other language.
Typed ``.pyi`` for both modules come from mypy-protobuf's protoc plugins.
"""

from __future__ import annotations

import re
import sys
import tempfile
from importlib.resources import files
from pathlib import Path

from grpc_tools import protoc

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE.parents[2] / "proto"
PACKAGE = HERE / "src" / "agent_memory_proto"
_IMPORT = re.compile(r"^(from|import) agent_memory\.", re.M)


def generate(out: Path) -> list[Path]:
    """Write every stub of ``proto/agent_memory`` under ``out``; return the files written."""
    protos = sorted(PROTO_ROOT.glob("agent_memory/**/*.proto"))
    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{files('grpc_tools') / '_proto'}",
            f"--plugin=protoc-gen-mypy={bin_dir / 'protoc-gen-mypy'}",
            f"--plugin=protoc-gen-mypy_grpc={bin_dir / 'protoc-gen-mypy_grpc'}",
            f"--python_out={tmp}",
            f"--grpc_python_out={tmp}",
            f"--mypy_out={tmp}",
            f"--mypy_grpc_out={tmp}",
            *(str(p.relative_to(PROTO_ROOT)) for p in protos),
        ]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed")
        written = []
        for path in sorted(Path(tmp, "agent_memory").rglob("*_pb2*")):
            target = out / path.relative_to(Path(tmp, "agent_memory"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_IMPORT.sub(r"\1 agent_memory_proto.", path.read_text()))
            written.append(target)
    return written


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE
    for stale in out.rglob("*_pb2*"):
        stale.unlink()
    for path in generate(out):
        sys.stdout.write(f"{path}\n")


if __name__ == "__main__":
    main()
