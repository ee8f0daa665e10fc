"""CLI settings: the embedded stack's ports plus where the services listen.

The service addresses are read from the same variables the services read
(``AGENT_MEMORY_GATEWAY__PORT``...), so the URLs printed are the URLs served.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_common.settings import DEFAULT_NATS_PORT, DEFAULT_PG_PORT, CommonSettings


class EmbeddedOptions(BaseModel):
    nats_port: int = Field(default=DEFAULT_NATS_PORT, ge=1, le=65535)
    pg_port: int = Field(default=DEFAULT_PG_PORT, ge=1, le=65535)


class Address(BaseModel):
    host: str = "127.0.0.1"
    port: int


class Settings(CommonSettings):
    embedded: EmbeddedOptions = EmbeddedOptions()
    gateway: Address = Address(port=8700)
    query: Address = Address(port=8701)

    @property
    def gateway_url(self) -> str:
        return f"http://{_client_host(self.gateway.host)}:{self.gateway.port}"

    @property
    def query_url(self) -> str:
        return f"http://{_client_host(self.query.host)}:{self.query.port}"


def _client_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
