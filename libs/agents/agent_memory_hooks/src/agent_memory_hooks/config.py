"""What a hook process needs to know, read from the environment without pydantic.

The variable names are the ones the services read (``AGENT_MEMORY_GATEWAY__PORT``...), so a
shell that runs the stack and the agent with the same environment needs no extra setting.
Hook state (spool, transcript offsets, log) lives under ``$AGENT_MEMORY_HOME``; when it is not
set the hook uses ``~/.agent-memory`` rather than the services' ``./.agent-memory``, because a
hook runs in whatever project folder the agent was started in and its spool must not be
scattered across them.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_TIMEOUT_MS = 50
DEFAULT_BUDGET_MS = 70
DEFAULT_MAX_TEXT = 32_000


class HookConfig:
    """Plain class, not a dataclass: ``dataclasses`` imports ``inspect`` (~8 ms)."""

    def __init__(
        self,
        *,
        home: str,
        gateway_url: str,
        token: str | None,
        user_id: str | None,
        timeout_s: float,
        budget_s: float,
        max_text: int,
    ) -> None:
        self.home = home
        self.gateway_url = gateway_url
        self.token = token
        self.user_id = user_id
        self.timeout_s = timeout_s  # one HTTP exchange with the gateway
        self.budget_s = budget_s  # everything the hook does, spool flush included
        self.max_text = max_text  # characters of one event's text; the rest is clipped

    @property
    def spool_dir(self) -> str:
        return os.path.join(self.home, "spool")

    @property
    def state_dir(self) -> str:
        return os.path.join(self.home, "hooks")

    @property
    def log_path(self) -> str:
        return os.path.join(self.home, "logs", "hooks.log")


def home_dir(env: Mapping[str, str]) -> str:
    explicit = env.get("AGENT_MEMORY_HOME", "").strip()
    if explicit:
        return os.path.realpath(os.path.expanduser(explicit))
    return os.path.join(os.path.expanduser("~"), ".agent-memory")


def gateway_url(env: Mapping[str, str]) -> str:
    explicit = env.get("AGENT_MEMORY_GATEWAY_URL", "").strip()
    if explicit:
        return explicit.rstrip("/")
    host = env.get("AGENT_MEMORY_GATEWAY__HOST", "127.0.0.1").strip()
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    port = env.get("AGENT_MEMORY_GATEWAY__PORT", "8700").strip() or "8700"
    return f"http://{host}:{port}"


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    try:
        value = int(env.get(name, "").strip() or default)
    except ValueError:
        return default
    return value if value > 0 else default


def load_config(env: Mapping[str, str] | None = None) -> HookConfig:
    environ = os.environ if env is None else env
    token = environ.get("AGENT_MEMORY_TOKEN", "").strip() or None
    user = environ.get("AGENT_MEMORY_USER_ID", "").strip() or None
    return HookConfig(
        home=home_dir(environ),
        gateway_url=gateway_url(environ),
        token=token,
        user_id=user,
        timeout_s=_positive_int(environ, "AGENT_MEMORY_HOOK_TIMEOUT_MS", DEFAULT_TIMEOUT_MS) / 1000,
        budget_s=_positive_int(environ, "AGENT_MEMORY_HOOK_BUDGET_MS", DEFAULT_BUDGET_MS) / 1000,
        max_text=_positive_int(environ, "AGENT_MEMORY_HOOK_MAX_TEXT", DEFAULT_MAX_TEXT),
    )
