"""The ``agent-memory`` console script: a fast path for ``hook``, everything else as usual.

``agent-memory hook <runtime>`` runs inside the coding agent's loop and must return in well
under 100 ms; the full command line (``__main__``) imports httpx, pydantic settings and the
commands of every service, which alone costs more than that. So ``hook`` is recognised here,
before any of it is imported, and everything else is handed to ``__main__.main``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        from agent_memory_hooks.runner import main as hook_main

        return hook_main(args[1:])
    from agent_memory_cli.__main__ import main as full_main

    return full_main(args)


if __name__ == "__main__":
    sys.exit(main())
