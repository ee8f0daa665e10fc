"""The erasure scope: exactly one kind, ids that Postgres can take, and its wire form."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent_memory_query.erasures.schemas import ErasureCreate, ErasureScope


def test_a_scope_is_exactly_one_kind() -> None:
    assert ErasureScope(session_id="s1").wire() == {"session_id": "s1"}
    assert ErasureScope(project=True).wire() == {"project": True}
    since = ErasureScope.model_validate({"redactable_since": "2026-03-01T00:00:00Z"}).wire()
    assert since == {"redactable_since": "2026-03-01T00:00:00Z"}
    for bad in ({}, {"session_id": "s", "agent_id": "a"}, {"project": False}):
        with pytest.raises(ValidationError):
            ErasureScope.model_validate(bad)


def test_bad_ids_are_refused_by_field() -> None:
    with pytest.raises(ValidationError) as err:
        ErasureCreate.model_validate({"project_id": "p", "scope": {"event_ids": ["a\x00b"]}})
    assert "event_ids" in str(err.value)
    with pytest.raises(ValidationError):
        ErasureCreate.model_validate({"project_id": "p", "scope": {"event_ids": []}})
    with pytest.raises(ValidationError):
        ErasureCreate.model_validate({"project_id": "p", "scope": {"user_id": "u"}, "x": 1})
