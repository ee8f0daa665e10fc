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
    "SELECT pg_advisory_xact_lock(k) FROM ("
    " SELECT DISTINCT hashtextextended(n, 0) AS k FROM unnest(%s::text[]) AS n ORDER BY k"
    ") AS keys"
)


def lock_name(namespace: str, *parts: str) -> str:
    """One lock's name: a namespace (whose locks these are) and the parts that name it."""
    return "\x1f".join((namespace, *parts))


async def hold_xact_locks(conn: AsyncConnection, names: Iterable[str]) -> None:
    """Take an exclusive transaction-level advisory lock on every name (waiting as needed)."""
    unique = sorted(set(names))
    if unique:
        await conn.execute(_LOCK_MANY, (unique,))
