"""Who may run a cleanup: an admin, by the same keys and roles as every other route.

The route declares ``ADMIN`` (``agent_memory_common.auth.access``), so the caller's bearer token has
become a ``Principal`` with the admin role before the handler runs (local mode: the admin of
``default``; an ``AGENT_MEMORY_TOKENS`` pair: a bootstrap admin; an API key: its role and
projects; 401 without a known key, 403 below admin). A cleanup is confined to the caller's
tenant, and a key bound to projects may clean only those.
"""

from __future__ import annotations

from agent_memory_common.auth.access import Principal
from agent_memory_common.web.http import ApiError


def cleanup_tenant(principal: Principal, project_id: str | None) -> str:
    """The tenant the admin ``principal`` may clean ``project_id`` of, or an ``ApiError`` 403."""
    if project_id is not None:
        principal.require_project(project_id)
    elif principal.projects is not None:
        raise ApiError(
            403,
            "forbidden",
            "this key is bound to projects: name one (project_id)",
            field="project_id",
        )
    return principal.tenant
