"""The SQL files that leave session markers out name exactly ``memory.MARKER_TYPES``.

A marker type added in Python but not in a query would be indexed by one path and left out
by another (the rebuild, the scan tier, the dedup index), so each list is checked here."""

from __future__ import annotations

import re
from pathlib import Path

from agent_memory_common.contracts.memory import MARKER_TYPES

ROOT = Path(__file__).resolve().parent.parent
# A ``type NOT IN (...)`` / ``type IN (...)`` list naming any marker type.
_TYPE_LIST = re.compile(r"\btype\s+(?:NOT\s+)?IN\s*\(([^)]*)\)", re.IGNORECASE)


def _marker_lists() -> list[tuple[Path, frozenset[str]]]:
    found = []
    for path in sorted([*ROOT.glob("libs/**/*.sql"), *ROOT.glob("services/**/*.sql")]):
        for match in _TYPE_LIST.finditer(path.read_text(encoding="utf-8")):
            names = frozenset(re.findall(r"'([^']*)'", match.group(1)))
            if names & MARKER_TYPES:
                found.append((path, names))
    return found


def test_every_sql_marker_list_names_every_marker_type() -> None:
    lists = _marker_lists()
    assert len(lists) >= 2  # sources.sql previous_turns and the recorder's dedup index
    for path, names in lists:
        assert names == MARKER_TYPES, f"{path.relative_to(ROOT)} lists {sorted(names)}"
