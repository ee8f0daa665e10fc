"""CLI settings: the embedded stack's ports plus where the services listen.

The service addresses are read from the same variables the services read
(``AGENT_MEMORY_GATEWAY__PORT``...), so the URLs printed are the URLs served.
"""

from __future__ import annotations

from pydantic import BaseModel

from agent_memory_common.core.settings import CommonSettings


class Address(BaseModel):
    host: str = "127.0.0.1"
    port: int


class GatewayAddress(Address):
    grpc_port: int = 8720  # the gateway's gRPC listener (0: off), as the gateway reads it


class Settings(CommonSettings):
    gateway: GatewayAddress = GatewayAddress(port=8700)
    query: Address = Address(port=8701)
    pruner: Address = Address(port=8704)
    dashboard: Address = Address(port=8702)

    @property
    def gateway_url(self) -> str:
        return f"http://{_client_host(self.gateway.host)}:{self.gateway.port}"

    @property
    def gateway_grpc(self) -> str | None:
        """host:port of the gRPC IngestService, None when it is off."""
        if not self.gateway.grpc_port:
            return None
        return f"{_client_host(self.gateway.host)}:{self.gateway.grpc_port}"

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
