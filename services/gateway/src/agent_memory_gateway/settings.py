"""Gateway settings: ``AGENT_MEMORY_GATEWAY__*`` plus the common ones."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_common.core.settings import CommonSettings


class GatewayOptions(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8700, ge=1, le=65535)
    grpc_port: int = Field(
        default=8720, ge=0, le=65535, description="gRPC IngestService (docs/grpc.md); 0: off"
    )
    max_body_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    max_batch_events: int = Field(default=1000, gt=0)
    max_event_bytes: int = Field(
        default=256 * 1024, gt=0, description="text plus metadata of one event, UTF-8 bytes"
    )
    publish_timeout_s: float = Field(default=5.0, gt=0)
    retry_after_s: int = Field(default=2, ge=1)
    tombstone_timeout_s: float = Field(
        default=0.5,
        gt=0,
        description="how long a batch waits for Postgres to say which of its event ids were "
        "erased; beyond it the batch is published unchecked (the recorder still drops them)",
    )
    tombstone_retry_s: float = Field(
        default=5.0, ge=0, description="after a failed erased-ids check, how long to skip it"
    )
    redact_extra: dict[str, str] = Field(
        default_factory=dict, description="extra secret patterns: kind -> regex (JSON object)"
    )
    redact_disable: list[str] = Field(
        default_factory=list, description="built-in secret kinds to switch off (JSON list)"
    )


class Settings(CommonSettings):
    gateway: GatewayOptions = GatewayOptions()
