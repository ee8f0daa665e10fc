"""The permissions of the state in ``AGENT_MEMORY_HOME``: owner only.

The home holds every tenant's memory (the Tantivy index, the JetStream store, Postgres), the
services' logs and the stack's credentials (``credentials.json``). ``agent-memory up`` runs
under umask 077, so what it and its children create is 0600 in 0700 folders; state from
before (0644 files in 0755 folders) is closed at start. A world-writable folder or file is
not closed silently: anyone on the machine may have changed what is in it, so ``up`` refuses
to start and names it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077


def world_writable(home: Path) -> Path | None:
    """The first folder or file under ``home`` (itself included) that anyone may write."""
    if home.stat().st_mode & stat.S_IWOTH:
        return home
    for root, folders, files in os.walk(home):
        for name in [*folders, *files]:
            path = Path(root) / name
            try:
                mode = path.lstat().st_mode
            except FileNotFoundError:  # gone meanwhile (a log rotated)
                continue
            if not stat.S_ISLNK(mode) and mode & stat.S_IWOTH:
                return path
    return None


def restrict(home: Path, *, keep: tuple[Path, ...] = ()) -> None:
    """Take every permission of group and others off ``home`` and everything in it, except
    under ``keep`` (the Postgres data folder: Postgres sets its own modes, and runs as another
    user when we are root)."""
    kept = {path.resolve() for path in keep}
    for root, folders, files in os.walk(home):
        here = Path(root)
        folders[:] = [name for name in folders if (here / name).resolve() not in kept]
        for path in [here, *(here / name for name in files)]:
            try:
                mode = path.lstat().st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISLNK(mode) and stat.S_IMODE(mode) & 0o077:
                path.chmod(stat.S_IMODE(mode) & ~0o077)
