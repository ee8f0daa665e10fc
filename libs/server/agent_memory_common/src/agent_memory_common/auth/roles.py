"""The roles a key can have, reader < writer < admin: the names alone.

Kept apart from ``access`` (which loads FastAPI and psycopg to check callers) so that what only
needs the names, such as the choices of ``agent-memory admin keys create --role``, can have them
without paying for the rest.
"""

from __future__ import annotations

from typing import Literal, get_args

Role = Literal["reader", "writer", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)
