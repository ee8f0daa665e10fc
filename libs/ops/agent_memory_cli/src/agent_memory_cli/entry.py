"""The ``agent-memory`` console script: a fast path for ``hook``, everything else as usual.

``agent-memory hook <runtime>`` runs inside the coding agent's loop and must return in well
under 100 ms; the full command line (``__main__``) imports httpx, pydantic settings and the
commands of every service, which alone costs more than that. So ``hook`` is recognised here,
before any of it is imported, and everything else is handed to ``__main__.main``.

Two more savings are made here, for every other command, by refusing imports this program
never uses (a ``None`` in ``sys.modules`` makes an import raise ImportError, which both callers
expect and handle):

- ``httpx._main``: ``import httpx`` also imports httpx's own command line (click, pygments, rich's
  syntax highlighting; 0.45 s) whenever click is installed, as it is here for other tools;
  ``httpx.main`` then only says to install ``httpx[cli]``;
- ``trio``: httpcore imports it, when installed (selenium brings it), on the first request of any
  client, to support clients running under trio (0.3 s of CPU); this program runs on asyncio.

Only the ``agent-memory`` process is affected, not a library, a service or a test that calls
``__main__.main`` directly. ``make bench-cli`` measures the result.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

NEVER_IMPORTED = ("httpx._main", "trio")
"""Imports every command but ``hook`` refuses (the docstring says why)."""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        from agent_memory_hooks.runner import main as hook_main

        return hook_main(args[1:])
    for unused in NEVER_IMPORTED:
        sys.modules.setdefault(unused, None)  # type: ignore[arg-type]  # see the docstring
    from agent_memory_cli.__main__ import main as full_main

    return full_main(args)


if __name__ == "__main__":
    sys.exit(main())
