"""The failures a search outlives, and only those.

A tier or a refinement's lookup that fails for one of these reasons (what it reads is away,
restarting, slow or not built yet) becomes a note in explain, and the search answers from what
is left. Anything else (a ``TypeError``, a ``KeyError``, SQL that no longer fits the schema) is
a bug: it propagates, and the request fails loudly instead of answering worse in silence.
"""

from __future__ import annotations

import psycopg

from agent_memory_common.core.errors import TransientError

# An index adapter's engine away or not built (``IndexUnavailableError``, a ``TransientError``);
# Postgres away or over its time (``OperationalError``: a lost connection, the pool's
# ``PoolTimeout``, the scan's ``QueryCanceled``) or a connection closed under a query
# (``InterfaceError``); a socket's error on the way (``OSError``, ``TimeoutError`` among them).
SURVIVABLE: tuple[type[Exception], ...] = (
    TransientError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    OSError,
)
