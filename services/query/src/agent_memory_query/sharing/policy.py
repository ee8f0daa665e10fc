"""What a caller may read under the sharing strategies, and who each result came from.

- a key limited to projects must name one of them (``project_id``): a search over every
  project would otherwise reach the others;
- ``separate``: a key bound to an agent reads only that agent's memories, so its search is
  narrowed to its ``agent_id`` (asking for another agent's is a 403 naming ``agent_id``); without
  a project filter, results from ``separate`` projects of other agents are dropped;
- ``team`` (and any strategy): ``user_id`` filters results by the user who wrote them. Users are
  recorded on events only, so the filter runs after ranking, on a deeper result list (x3).

Every result says its ``agent_id`` and ``user_id`` (the one user of its events, null when they
have none or several).

The same two bounds hold for every other read:

- by id (an event, a TOC node, a grip, an episode, a topic, an erasure receipt): ``visible``
  decides, and the route answers 404 for an item outside the key's bounds, exactly as for an id
  that does not exist (a 403 would tell a bound key that the id exists elsewhere);
- listings of the event log (``/v1/events``, ``/v1/projects``, sessions, agents): ``ReadBounds``
  adds the key's projects and, for an agent-bound key, "only its own agent in ``separate``
  projects" to the query (``BOUNDS_SQL``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psycopg import AsyncConnection

from agent_memory_common.auth.access import Principal
from agent_memory_common.web.http import ApiError
from agent_memory_query.sharing.store import separate_projects, strategies

_USERS_SQL = (
    "SELECT event_id, user_id FROM events "
    "WHERE tenant = %(tenant)s AND event_id = ANY(%(event_ids)s) AND user_id IS NOT NULL"
)


# The bounds of ``ReadBounds.params`` as a condition on a table with project_id and agent_id.
BOUNDS_SQL = (
    "(%(bound_projects)s::text[] IS NULL OR project_id = ANY(%(bound_projects)s::text[]))"
    " AND (%(bound_agent)s::text IS NULL OR agent_id = %(bound_agent)s::text"
    " OR NOT project_id = ANY(%(separate_projects)s::text[]))"
)


async def visible(
    conn: AsyncConnection[Any],
    principal: Principal,
    project_id: str,
    agent_id: str | None = None,
) -> bool:
    """May this key read an item of ``project_id`` (written by ``agent_id``, when it has one)?

    False outside the key's projects, and for another agent's item of a ``separate`` project
    when the key is bound to an agent. Routes answer 404 then, as for an unknown id.
    """
    if principal.projects is not None and project_id not in principal.projects:
        return False
    if principal.agent_id is None or agent_id is None or agent_id == principal.agent_id:
        return True
    strategy = (await strategies(conn, principal.tenant, [project_id]))[project_id]
    return strategy != "separate"


@dataclass(frozen=True, slots=True)
class ReadBounds:
    """What a listing may show a key, as the parameters of ``BOUNDS_SQL``."""

    projects: list[str] | None = None  # None: every project
    agent_id: str | None = None  # set: other agents' rows of ``separate`` are hidden
    separate: list[str] = field(default_factory=list)

    @property
    def params(self) -> dict[str, Any]:
        return {
            "bound_projects": self.projects,
            "bound_agent": self.agent_id,
            "separate_projects": self.separate,
        }


async def read_bounds(conn: AsyncConnection[Any], principal: Principal) -> ReadBounds:
    """The key's ``ReadBounds`` (one small query for an agent-bound key, none otherwise)."""
    projects = sorted(principal.projects) if principal.projects is not None else None
    if principal.agent_id is None:
        return ReadBounds(projects)
    separate = await separate_projects(conn, principal.tenant)
    return ReadBounds(projects, principal.agent_id if separate else None, separate)


def scoped_project(principal: Principal, project_id: str | None) -> str | None:
    """The project a bounded key reads (its only one when none is named)."""
    if principal.projects is None:
        return project_id
    if project_id is None:
        if len(principal.projects) == 1:
            return next(iter(principal.projects))
        raise ApiError(
            403,
            "forbidden",
            "this key is limited to some projects: name one in project_id",
            field="project_id",
        )
    principal.require_project(project_id)
    return project_id


async def scoped_agent(
    conn: AsyncConnection[Any], principal: Principal, project_id: str | None, agent_id: str | None
) -> str | None:
    """The agent filter ``separate`` imposes on an agent-bound key (else the caller's own)."""
    if principal.agent_id is None or project_id is None:
        return agent_id
    strategy = (await strategies(conn, principal.tenant, [project_id]))[project_id]
    if strategy != "separate":
        return agent_id
    if agent_id is not None and agent_id != principal.agent_id:
        raise ApiError(
            403,
            "forbidden",
            f"project {project_id!r} is separate: this key reads only agent {principal.agent_id!r}",
            field="agent_id",
        )
    return principal.agent_id


async def attribute(
    conn: AsyncConnection[Any],
    principal: Principal,
    results: list[dict[str, Any]],
    *,
    user_id: str | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Add ``user_id`` to each result, drop what the caller may not see, keep ``limit``."""
    event_ids = sorted({e for r in results for e in r["event_ids"]})
    users: dict[str, str] = {}
    if event_ids:
        async with conn.cursor() as cur:
            await cur.execute(_USERS_SQL, {"tenant": principal.tenant, "event_ids": event_ids})
            users = {event_id: user for event_id, user in await cur.fetchall()}
    separate: set[str] = set()
    if principal.agent_id is not None:
        found = await strategies(conn, principal.tenant, {r["project_id"] for r in results})
        separate = {p for p, s in found.items() if s == "separate"}
    kept = []
    for result in results:
        owners = {users[e] for e in result["event_ids"] if e in users}
        result["user_id"] = owners.pop() if len(owners) == 1 else None
        if result["project_id"] in separate and result["agent_id"] != principal.agent_id:
            continue
        if principal.projects is not None and result["project_id"] not in principal.projects:
            continue
        if user_id is not None and result["user_id"] != user_id:
            continue
        kept.append(result)
    return kept[:limit]
