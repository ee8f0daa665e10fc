"""A key bound to projects, an agent or a user: every event must match, a missing user is filled.

Pure intake tests; the same over HTTP, on the real stack, is in ``tests/test_api_keys.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from agent_memory_common.auth.access import Principal
from agent_memory_common.redaction.engine import Redactor
from agent_memory_common.web.http import ApiError
from agent_memory_gateway.intake import bind, prepare
from agent_memory_gateway.settings import GatewayOptions

KEY = Principal(
    tenant="acme",
    role="writer",
    key_id="k1",
    projects=frozenset({"web"}),
    agent_id="codex",
    user_id="dana",
)


def event(**over: Any) -> dict[str, Any]:
    return {
        "project_id": "web",
        "agent_id": "codex",
        "session_id": "s1",
        "role": "user",
        "text": "hello",
        **over,
    }


def run(body: Any, principal: Principal = KEY) -> list[dict[str, Any]]:
    prepared = prepare(
        orjson.dumps(body),
        GatewayOptions(),
        tenant="acme",
        received_at=datetime(2026, 1, 1, tzinfo=UTC),
        redactor=Redactor(),
        principal=principal,
    )
    return [orjson.loads(p.wire) for p in prepared]


def test_missing_user_is_filled_and_matching_events_pass() -> None:
    wire = run({"events": [event(), event(user_id="dana")]})
    assert [w["user_id"] for w in wire] == ["dana", "dana"]


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"agent_id": "claude-code"}, "events[1].agent_id"),
        ({"user_id": "eve"}, "events[1].user_id"),
        ({"project_id": "api"}, "events[1].project_id"),
    ],
)
def test_a_mismatch_is_refused_naming_the_field(over: dict[str, Any], field: str) -> None:
    with pytest.raises(ApiError) as err:
        run({"events": [event(), event(**over)]})
    assert err.value.status == 403 and err.value.field == field


def test_an_unbound_key_changes_nothing() -> None:
    wire = run(event(agent_id="any", project_id="any"), Principal(tenant="acme", role="writer"))
    assert wire[0]["user_id"] is None and wire[0]["agent_id"] == "any"


def test_bind_names_plain_fields_outside_a_batch() -> None:
    with pytest.raises(ApiError) as err:
        bind([("web", "gemini", None)], KEY, batch=False)
    assert err.value.field == "agent_id"
    assert bind([("web", "codex", None)], KEY, batch=False) == ["dana"]
