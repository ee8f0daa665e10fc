"""Issue, list and revoke API keys (the ``api_keys`` table): shared by the admin HTTP routes of
the query service and ``agent-memory admin keys``, so both write exactly the same rows.

The secret is returned once, by ``create_key``; only its sha256 is stored.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.auth.access import ROLES, Q, Role, new_key
from agent_memory_common.web.http import ApiError

_DURATION = re.compile(r"^\s*(\d+)\s*([dhm])\s*$")
_MAX_LIFETIME = timedelta(days=36_525)
_UNIT = {"d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1)}


def parse_expiry(text: str | None, now: datetime | None = None) -> datetime | None:
    """``90d``, ``12h``, ``30m`` or an RFC 3339 instant -> the expiry time (None: never)."""
    if text is None or not text.strip():
        return None
    now = now or datetime.now(UTC)
    match = _DURATION.match(text)
    if match:
        amount = int(match.group(1))
        if amount < 1:
            raise ApiError(
                422, "validation_error", "expires: must be in the future", field="expires"
            )
        if amount > 10**7 or amount * _UNIT[match.group(2)] > _MAX_LIFETIME:
            raise ApiError(
                422, "validation_error", "expires: at most 100 years ahead", field="expires"
            )
        return now + amount * _UNIT[match.group(2)]
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ApiError(
            422,
            "validation_error",
            "expires: expected a duration such as 90d, 12h, 30m or an RFC 3339 time",
            field="expires",
        ) from None
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    if when <= now:
        raise _past()
    return when


def _past() -> ApiError:
    return ApiError(422, "validation_error", "expires: must be in the future", field="expires")


async def create_key(
    conn: AsyncConnection[Any],
    *,
    tenant: str,
    role: Role,
    projects: list[str] | None = None,
    agent_id: str | None = None,
    user_id: str | None = None,
    label: str | None = None,
    expires_at: datetime | None = None,
) -> dict[str, Any]:
    """Insert a key; the row (never the hash) plus ``secret``, the bearer token shown once."""
    if role not in ROLES:
        raise ApiError(422, "validation_error", f"role: one of {', '.join(ROLES)}", field="role")
    key = new_key()
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            Q["insert_key"],
            {
                "key_id": key.key_id,
                "tenant": tenant,
                "role": role,
                "secret_hash": key.secret_hash,
                "projects": sorted(set(projects)) if projects else None,
                "agent_id": agent_id,
                "user_id": user_id,
                "label": label,
                "expires_at": expires_at,
            },
        )
        row = await cur.fetchone()
    assert row is not None
    return {**row, "secret": key.secret}


async def list_keys(
    conn: AsyncConnection[Any], tenant: str | None, *, include_revoked: bool = False
) -> list[dict[str, Any]]:
    """The keys of a tenant (None: every tenant), oldest first, without hashes."""
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q["list_keys"], {"tenant": tenant, "include_revoked": include_revoked})
        return await cur.fetchall()


async def revoke_key(
    conn: AsyncConnection[Any], key_id: str, tenant: str | None
) -> dict[str, Any] | None:
    """Mark a key revoked (idempotent); None when the tenant has no such key."""
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q["revoke_key"], {"key_id": key_id, "tenant": tenant})
        return await cur.fetchone()
