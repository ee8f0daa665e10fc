"""Who may run a cleanup: the "is this caller allowed admin" check, kept tiny and in one place.

Today authentication is the ``AGENT_MEMORY_TOKENS`` list of ``token:tenant`` pairs, without
roles. In local mode (no tokens) every caller is the admin of the ``default`` tenant; with
tokens, a caller is admin when its token is also listed in ``AGENT_MEMORY_PRUNER__ADMIN_TOKENS``
(401 for no or an unknown token, 403 for a known one that is not admin). A cleanup is always
confined to the caller's tenant. When API keys with roles arrive, this is the one function to
switch to them.
"""

from __future__ import annotations

import hmac

from agent_memory_common.http import ApiError, TenantResolver


class AdminCheck:
    def __init__(self, tokens: str, admin_tokens: str) -> None:
        self._resolver = TenantResolver(tokens)
        self._admins = [t.strip() for t in admin_tokens.split(",") if t.strip()]

    def admin_tenant(self, authorization: str | None) -> str:
        """The tenant the caller administers, or an ``ApiError`` (401, 403)."""
        tenant = self._resolver.tenant_for(authorization)
        if self._resolver.local_mode:
            return tenant
        presented = (authorization or "").partition(" ")[2].strip().encode()
        if any(hmac.compare_digest(t.encode(), presented) for t in self._admins):
            return tenant
        raise ApiError(403, "forbidden", "cleanup is for admins: this token is not an admin token")
