"""Who may run a cleanup: an admin, by the same keys and roles as every other route.

The caller's bearer token becomes a ``Principal`` through ``agent_memory_common.auth`` (local
mode: the admin of ``default``; an ``AGENT_MEMORY_TOKENS`` pair: a bootstrap admin; an API key:
its role and projects). A cleanup needs the admin role (401 without a known key, 403 below
admin), is confined to the caller's tenant, and a key bound to projects may clean only those.
"""

from __future__ import annotations

from agent_memory_common.auth import Authenticator
from agent_memory_common.http import ApiError


class AdminCheck:
    def __init__(self, auth: Authenticator) -> None:
        self.auth = auth

    async def admin_tenant(self, authorization: str | None, project_id: str | None) -> str:
        """The tenant the caller administers, or an ``ApiError`` (401, 403)."""
        principal = (await self.auth.principal(authorization)).require("admin")
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
