"""Advisory locks on many names at once, held until the transaction ends.

Several consumers serialise work per name (a session, a TOC node) across replicas. Each name
becomes a 64-bit key (``hashtextextended``), and the keys are taken in ascending key order in
one statement: one round trip, and two transactions locking overlapping sets always lock in
the same order, so they never wait on each other in a cycle (sorting the names instead would
not do: two names' keys need not sort as the names do).
"""

from __future__ import annotations

from collections.abc import Iterable

from psycopg import AsyncConnection

_LOCK_MANY = (
    "SELECT {fn}(k) FROM ("
    " SELECT DISTINCT hashtextextended(n, 0) AS k FROM unnest(%s::text[]) AS n ORDER BY k"
    ") AS keys"
)
_EXCLUSIVE = _LOCK_MANY.format(fn="pg_advisory_xact_lock")
_SHARED = _LOCK_MANY.format(fn="pg_advisory_xact_lock_shared")


def lock_name(namespace: str, *parts: str) -> str:
    """One lock's name: a namespace (whose locks these are) and the parts that name it."""
    return "\x1f".join((namespace, *parts))


async def hold_xact_locks(
    conn: AsyncConnection, names: Iterable[str], *, shared: bool = False
) -> None:
    """Take a transaction-level advisory lock on every name (waiting as needed): exclusive,
    or ``shared`` (shared holders do not wait for each other, only for an exclusive one)."""
    unique = sorted(set(names))
    if unique:
        await conn.execute(_SHARED if shared else _EXCLUSIVE, (unique,))
