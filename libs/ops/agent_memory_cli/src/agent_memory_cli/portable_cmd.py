"""``agent-memory export`` and ``agent-memory import FILE``: their parsers and the test that tells
an export file from a runtime's name.

Every command builds every parser, so this module stays light; the work (psycopg, orjson, rich,
the client) is in ``portable``, imported when an export or an import of a file runs.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_memory_cli.settings import Settings

FORMAT = "agent-memory-export"
"""The ``format`` of an export's header line (docs/export-format.md)."""


def is_dump(path_text: str) -> bool:
    """Whether ``agent-memory import X`` names an export file rather than a runtime."""
    path = Path(path_text).expanduser()
    if not path.is_file():
        return False
    try:
        with gzip.open(path, "rb") as f:
            first = json.loads(f.readline(65536))  # the header line, however it is spaced
        return isinstance(first, dict) and first.get("format") == FORMAT
    except (OSError, EOFError, ValueError):
        return False


def run_import_dump(settings: Settings, path: str, argv: Sequence[str]) -> int:
    """``agent-memory import FILE [options]``."""
    from agent_memory_cli import portable

    return portable.run_import_dump(settings, path, argv)


def _run_export(settings: Settings, args: argparse.Namespace) -> int:
    from agent_memory_cli import portable

    return portable.run_export(settings, args)


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "export",
        help="write a project's memory as a portable dump (gzip JSON Lines)",
        description=(
            "Events, pins, episodes and playbook entries of a tenant (one project, or all), "
            "as gzip JSON Lines (docs/export-format.md). Derived data is rebuilt on import."
        ),
    )
    parser.add_argument("--project", help="one project (default: every project)")
    parser.add_argument("--since", help="only events from this ISO date or time on")
    parser.add_argument("--tenant", default="default", help="tenant (default: 'default')")
    parser.add_argument("-o", "--output", help="file to write (default: standard output)")
    parser.add_argument(
        "--vectors",
        action="store_true",
        help="also each event's stored vector: an import with the same model skips embedding",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=_run_export)
