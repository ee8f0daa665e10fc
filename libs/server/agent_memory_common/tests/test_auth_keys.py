"""Key material and principals: pure functions (the HTTP behaviour is in tests/test_api_keys.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory_common.auth.access import Principal, new_key, principal_from_row, split_key
from agent_memory_common.auth.keys import parse_expiry
from agent_memory_common.web.http import ApiError

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def row_for(secret_hash: bytes, **over: object) -> dict[str, object]:
    row: dict[str, object] = {
        "key_id": "abc",
        "tenant": "acme",
        "role": "writer",
        "secret_hash": secret_hash,
        "projects": ["web"],
        "agent_id": "codex",
        "user_id": None,
        "expires_at": None,
        "revoked_at": None,
    }
    row.update(over)
    return row


def test_the_hash_checks_the_whole_secret_even_with_underscores() -> None:
    for _ in range(50):  # token_urlsafe often holds "_": the hash must cover all of it
        key = new_key()
        parts = split_key(key.secret)
        assert parts is not None and parts[0] == key.key_id
        found = principal_from_row(row_for(key.secret_hash), parts[1], NOW)
        assert found is not None and found.projects == frozenset({"web"})
        assert principal_from_row(row_for(key.secret_hash), parts[1][:-1], NOW) is None


def test_revoked_or_expired_rows_give_no_principal() -> None:
    key = new_key()
    parts = split_key(key.secret)
    assert parts is not None
    assert principal_from_row(row_for(key.secret_hash, revoked_at=NOW), parts[1], NOW) is None
    past = NOW - timedelta(seconds=1)
    assert principal_from_row(row_for(key.secret_hash, expires_at=past), parts[1], NOW) is None


def test_split_key_refuses_other_shapes() -> None:
    for token in ("boot-token", "amk_", "amk_abc", "amk__x"):
        assert split_key(token) is None


def test_roles_are_ordered() -> None:
    reader = Principal(tenant="t", role="reader")
    assert reader.has("reader") and not reader.has("writer")
    with pytest.raises(ApiError) as err:
        reader.require("admin")
    assert err.value.status == 403
    assert Principal(tenant="t", role="admin").has("writer")


def test_expiry_durations_and_times() -> None:
    assert parse_expiry("90d", NOW) == NOW + timedelta(days=90)
    assert parse_expiry("12h", NOW) == NOW + timedelta(hours=12)
    assert parse_expiry(None) is None
    assert parse_expiry("2027-01-01T00:00:00Z", NOW) == datetime(2027, 1, 1, tzinfo=UTC)
    for bad in ("soon", "0d", "2020-01-01T00:00:00Z", "99999999999999d", "40000d"):
        with pytest.raises(ApiError) as err:
            parse_expiry(bad, NOW)
        assert err.value.field == "expires"
