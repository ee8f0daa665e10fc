"""Dashboard settings: ``AGENT_MEMORY_DASHBOARD__*`` plus the common ones."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_common.core.settings import CommonSettings


class DashboardOptions(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8702, ge=1, le=65535)
    query_url: str = Field(
        default="http://127.0.0.1:8701",
        description="The query service's public API, called with the signed-in user's key.",
    )
    pruner_url: str = Field(
        default="http://127.0.0.1:8704",
        description="The retention pruner (POST /v1/admin/cleanup: the retention page's dry run).",
    )
    timeout_s: float = Field(default=30.0, gt=0, description="Time limit of one API call.")
    refresh_ms: int = Field(
        default=2000, ge=250, description="How often the live pages poll the API."
    )
    secure_cookie: bool = Field(
        default=False,
        description=(
            "Always mark the session cookie Secure; without it, Secure whenever the request "
            "came over HTTPS (directly, or per X-Forwarded-Proto from a trusted proxy)."
        ),
    )
    session_max_age_s: int = Field(
        default=8 * 3600,
        ge=60,
        description=(
            "Lifetime of a sign-in: the cookie's Max-Age, and when this process forgets the "
            "session (signing out forgets it at once)."
        ),
    )
    trusted_proxies: str = Field(
        default="127.0.0.1",
        description=(
            "Addresses (or CIDRs, comma separated; '*' any) whose X-Forwarded-Proto and "
            "X-Forwarded-For the dashboard believes: the TLS-terminating proxy in front of it."
        ),
    )


class Settings(CommonSettings):
    dashboard: DashboardOptions = DashboardOptions()
