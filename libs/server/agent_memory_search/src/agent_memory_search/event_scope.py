"""The events table's WHERE conditions for a scope (tenant, project, agent, session, time), shared
by search's reads of events (the raw scan, the fix arcs) and the query service's event listing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from psycopg import sql


class EventScope(Protocol):
    """The filters an event query can take: search's ``SearchFilter``, the event listing's
    ``EventFilter`` (query service)."""

    @property
    def tenant(self) -> str: ...
    @property
    def project_id(self) -> str | None: ...
    @property
    def agent_id(self) -> str | None: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def since(self) -> datetime | None: ...
    @property
    def until(self) -> datetime | None: ...


def event_conditions(flt: EventScope, params: dict[str, Any]) -> list[sql.Composable]:
    """WHERE conditions on the events table for a tenant, ids and a [since, until) window;
    fills ``params`` with their values."""
    where: list[sql.Composable] = [sql.SQL("tenant = %(tenant)s")]
    params["tenant"] = flt.tenant
    for name in ("project_id", "agent_id", "session_id"):
        value = getattr(flt, name)
        if value is not None:
            where.append(sql.SQL("{} = %({})s").format(sql.Identifier(name), sql.SQL(name)))
            params[name] = value
    if flt.since is not None:
        where.append(sql.SQL("ts >= %(since)s"))
        params["since"] = flt.since
    if flt.until is not None:
        where.append(sql.SQL("ts < %(until)s"))
        params["until"] = flt.until
    return where
