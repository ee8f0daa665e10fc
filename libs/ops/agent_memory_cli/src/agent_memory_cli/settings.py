"""CLI settings: the embedded stack's ports plus where the services listen.

The service addresses are read from the same variables the services read
(``AGENT_MEMORY_GATEWAY__PORT``...), so the URLs printed are the URLs served.
"""

from __future__ import annotations

from pydantic import BaseModel

from agent_memory_common.settings import CommonSettings


class Address(BaseModel):
    host: str = "127.0.0.1"
    port: int


class Settings(CommonSettings):
    gateway: Address = Address(port=8700)
    query: Address = Address(port=8701)
    pruner: Address = Address(port=8704)
    dashboard: Address = Address(port=8702)

    @property
    def gateway_url(self) -> str:
        return f"http://{_client_host(self.gateway.host)}:{self.gateway.port}"

    @property
    def query_url(self) -> str:
        return f"http://{_client_host(self.query.host)}:{self.query.port}"

    @property
    def pruner_url(self) -> str:
        return f"http://{_client_host(self.pruner.host)}:{self.pruner.port}"

    @property
    def dashboard_url(self) -> str:
        return f"http://{_client_host(self.dashboard.host)}:{self.dashboard.port}"


def _client_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
