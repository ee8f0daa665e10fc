"""An ``opencode export`` document written back as OpenCode's storage, which the import reads.

Entire publishes an OpenCode session as the JSON ``opencode export <session>`` prints:
``{"info": <session>, "messages": [{"info": <message>, "parts": [<part>...]}...]}``.
``agent-memory import opencode`` reads OpenCode's storage folder instead (see
``agent_memory_cli.readers.opencode``): ``session/<projectID>/<sessionID>.json``,
``message/<sessionID>/<messageID>.json`` and ``part/<messageID>/<partID>.json``, one object a
file. This splits the one into the other, every object as it is (indented as OpenCode writes
them), nothing added or dropped.

    python -m tests.bench.real.opencode_export EXPORT.json FOLDER

prints the session file to import (``FOLDER/session/<projectID>/<sessionID>.json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _write(path: Path, item: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(item, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_storage(export: Path, folder: Path) -> Path:
    """Write ``export``'s session, messages and parts below ``folder``; return the session
    file."""
    document = json.loads(export.read_text(encoding="utf-8"))
    info = document["info"]
    session = folder / "session" / str(info["projectID"]) / f"{info['id']}.json"
    _write(session, info)
    for message in document["messages"]:
        head = message["info"]
        _write(folder / "message" / str(info["id"]) / f"{head['id']}.json", head)
        for part in message.get("parts", []):
            _write(folder / "part" / str(head["id"]) / f"{part['id']}.json", part)
    return session


if __name__ == "__main__":
    print(write_storage(Path(sys.argv[1]), Path(sys.argv[2])))
