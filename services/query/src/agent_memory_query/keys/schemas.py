"""What ``/v1/keys`` takes and answers. A key is named by its public ``key_id``; the secret is
only in ``KeyCreated``, once."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from agent_memory_api.common import Timestamp
from agent_memory_common.auth.access import Role

_ID = r"^[^\x00-\x1f\x7f,]+$"
ProjectId = Annotated[str, Field(min_length=1, max_length=200, pattern=_ID)]


class KeyCreate(BaseModel):
    """The body of ``POST /v1/keys``; the tenant is the caller's."""

    model_config = ConfigDict(extra="forbid")

    role: Role = Field(description="reader (read, search), writer (+ write), admin (+ keys...)")
    projects: list[ProjectId] | None = Field(
        default=None,
        min_length=1,
        description="Only these projects (default: every project of the tenant)",
    )
    agent_id: str | None = Field(
        default=None, min_length=1, max_length=200, pattern=_ID, description="Writes only as"
    )
    user_id: str | None = Field(
        default=None, min_length=1, max_length=200, pattern=_ID, description="Writes only as"
    )
    label: str | None = Field(default=None, max_length=200, description="A note for people")
    expires: str | None = Field(
        default=None, description="Lifetime such as 90d, 12h, 30m, or an RFC 3339 time"
    )


class Key(BaseModel):
    """A key as listed: never its secret or its hash."""

    key_id: str
    tenant: str
    role: Role
    projects: list[str] | None
    agent_id: str | None
    user_id: str | None
    label: str | None
    created_at: Timestamp
    expires_at: Timestamp | None
    revoked_at: Timestamp | None


class KeyCreated(Key):
    secret: str = Field(description="The bearer token: shown this once, store it now")


class KeyList(BaseModel):
    keys: list[Key]
