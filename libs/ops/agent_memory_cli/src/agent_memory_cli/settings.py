"""CLI settings: the embedded stack's ports plus where the services listen.

The service addresses are read from the same variables the services read
(``AGENT_MEMORY_GATEWAY__PORT``...), so the URLs printed are the URLs served.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_common.core.settings import CommonSettings


class Address(BaseModel):
    """Where an HTTP service listens, read from that service's own variables.

    Every field has the service's default: ``AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S`` alone
    reaches this model as ``{"first_run_after_s": ...}`` (pydantic-settings builds the nested
    model from whatever ``AGENT_MEMORY_PRUNER__*`` is set), and a required port made every
    other setting of the service refuse to start ``agent-memory up`` (issue #58). What is not
    an address is ignored here; the service reads it.
    """

    host: str = "127.0.0.1"
    port: int = Field(ge=1, le=65535)


class GatewayAddress(Address):
    port: int = Field(default=8700, ge=1, le=65535)
    grpc_port: int = Field(default=8720, ge=0, le=65535)  # as the gateway reads it; 0: off


class QueryAddress(Address):
    port: int = Field(default=8701, ge=1, le=65535)


class DashboardAddress(Address):
    port: int = Field(default=8702, ge=1, le=65535)


class PrunerAddress(Address):
    port: int = Field(default=8704, ge=1, le=65535)


class Settings(CommonSettings):
    # the defaults are the services' own (tests/test_documented_settings.py compares them)
    gateway: GatewayAddress = GatewayAddress()
    query: QueryAddress = QueryAddress()
    pruner: PrunerAddress = PrunerAddress()
    dashboard: DashboardAddress = DashboardAddress()

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
