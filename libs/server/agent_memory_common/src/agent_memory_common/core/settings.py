"""Settings shared by every process.

One prefix (``AGENT_MEMORY_``) and one nested delimiter (``__``) everywhere, so that
``AGENT_MEMORY_GATEWAY__PORT`` reads as "the gateway's port". Every default points at the
embedded stack started by ``agent-memory up``, so a service started by hand on a developer
machine finds its servers without any configuration.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agent_memory_common.core.credentials import PG_SUPERUSER, load_credentials

DEFAULT_NATS_PORT = 4222
DEFAULT_PG_PORT = 55432
DEFAULT_DATABASE = "agent_memory"


class EmbeddedOptions(BaseModel):
    """Ports and memory of the embedded servers that ``agent-memory up`` starts."""

    nats_port: int = Field(default=DEFAULT_NATS_PORT, ge=1, le=65535)
    pg_port: int = Field(default=DEFAULT_PG_PORT, ge=1, le=65535)
    pg_shared_buffers: str = Field(
        default="auto",
        pattern=r"^(auto|[1-9][0-9]*(kB|MB|GB|TB))$",
        description=(
            "Shared buffers of the embedded Postgres: 'auto' (a quarter of the machine's or the "
            "container's memory, 128MB to 8GB) or a size such as 4GB. The vector index of a "
            "million events is about 2 GB; searches are twice as fast when it fits."
        ),
    )


# Where each consumer service serves /metrics, /healthz and /readyz unless
# AGENT_MEMORY_METRICS__PORT says otherwise (the HTTP services serve /metrics on their own port).
DEFAULT_METRICS_PORTS = {
    "recorder": 8710,
    "segmenter": 8711,
    "summarizer": 8712,
    "bm25-indexer": 8713,
    "embedder": 8714,
    "topics": 8715,
    "pruner": 8716,
    "eraser": 8717,
}


class MetricsOptions(BaseModel):
    """Prometheus metrics and probes of a consumer service."""

    enabled: bool = Field(default=True, description="Serve /metrics, /healthz and /readyz.")
    port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description=(
            "Port of a consumer service's /metrics, /healthz and /readyz; default: the "
            "service's own (recorder 8710, segmenter 8711, summarizer 8712, bm25-indexer 8713, "
            "embedder 8714...). 0 picks a free port (logged as metrics.listening)."
        ),
    )
    host: str = Field(
        default="127.0.0.1",
        description="Address the probe port binds; 0.0.0.0 in a container (compose, Kubernetes).",
    )

    def port_for(self, service: str) -> int:
        if self.port is not None:
            return self.port
        return DEFAULT_METRICS_PORTS.get(service, 0)


class CommonSettings(BaseSettings):
    """What every process needs: where state lives, the servers, and who may call."""

    model_config = SettingsConfigDict(
        env_prefix="AGENT_MEMORY_",
        env_nested_delimiter="__",
        extra="ignore",
    )

    home: Path = Field(
        default=Path(".agent-memory"), description="Data folder of the embedded stack."
    )
    nats_url: str = Field(
        default=f"nats://127.0.0.1:{DEFAULT_NATS_PORT}",
        description=(
            "NATS server(s), comma separated, each with its user:password "
            "(nats://user:password@host:4222). Default: the embedded nats-server, with the "
            "credentials that agent-memory up generated in <home>/credentials.json."
        ),
    )
    pg_dsn: str = Field(
        default=f"postgresql://postgres@127.0.0.1:{DEFAULT_PG_PORT}/{DEFAULT_DATABASE}",
        description=(
            "Postgres connection string (system of record), with its password. Default: the "
            "embedded Postgres as the role agent_memory, with the password that agent-memory up "
            "generated in <home>/credentials.json."
        ),
    )
    tokens: str = Field(
        default="",
        description=(
            "Bootstrap admin tokens, 'token:tenant' pairs separated by commas (API keys with "
            "roles are issued with them: docs/team.md). Empty means local mode: a request "
            "without a key is the admin of the tenant 'default'."
        ),
    )
    key_cache_s: float = Field(
        default=5.0,
        ge=0,
        description=(
            "Seconds an API key check is cached by each service (a revoked key stops working "
            "within this time; 0 checks Postgres on every request)."
        ),
    )
    key_lookup_timeout_s: float = Field(
        default=2.0,
        gt=0,
        description=(
            "Longest wait for Postgres to check an API key; past it, a key confirmed within "
            "AGENT_MEMORY_KEY_STALE_S is served from the cache, any other is 503 with Retry-After."
        ),
    )
    key_stale_s: float = Field(
        default=3600.0,
        ge=0,
        description=(
            "While Postgres cannot answer, how long after its last check a key keeps working "
            "(ingest goes on through a database outage; 0: never past AGENT_MEMORY_KEY_CACHE_S)."
        ),
    )
    allowed_origins: str = Field(
        default="",
        description=(
            "Web origins (comma separated, e.g. 'https://memory.example.com') whose pages may "
            "call the HTTP APIs from a browser. Empty: none but each service's own."
        ),
    )
    allowed_hosts: str = Field(
        default="",
        description=(
            "Host names the HTTP services answer to (comma separated; 'name' any port, "
            "'name:port' one port, '*.example.com' its subdomains, '*' any host). localhost, "
            "127.0.0.1 and [::1] are always allowed. Empty: only those in local mode (a DNS "
            "rebinding page is answered 421); any host in team mode (AGENT_MEMORY_TOKENS set)."
        ),
    )
    max_body_bytes: int = Field(
        default=1024 * 1024,
        gt=0,
        description=(
            "Largest request body of the query service, the pruner and the dashboard (the "
            "gateway has its own, AGENT_MEMORY_GATEWAY__MAX_BODY_BYTES): a larger one is 413."
        ),
    )
    auth_fail_burst: int = Field(
        default=20,
        ge=1,
        description=(
            "Failed authentications (401) a client address may have in a row before its "
            "requests are answered 429 with Retry-After (a token bucket per address)."
        ),
    )
    auth_fail_per_s: float = Field(
        default=1.0,
        gt=0,
        description="Failed authentications per second a client address earns back.",
    )
    nats_replicas: int = Field(default=1, ge=1, le=5, description="JetStream stream replicas.")
    duplicate_window_s: float = Field(
        default=600.0, gt=0, description="JetStream de-duplication window for retried publishes."
    )
    background_nice: int = Field(
        default=5,
        ge=0,
        le=19,
        description=(
            "CPU niceness of the background consumer services (recorder, segmenter, summarizer, "
            "indexers): on a busy machine capture and queries run first. 0 leaves it unchanged."
        ),
    )
    otlp_endpoint: str = Field(
        default="",
        description=(
            "OpenTelemetry collector's OTLP/HTTP base URL (e.g. http://jaeger:4318): the gateway "
            "and the consumers export trace spans to <url>/v1/traces, the trace context riding "
            "in the NATS headers. Empty: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or "
            "OTEL_EXPORTER_OTLP_ENDPOINT when set, else no tracing (and no cost)."
        ),
    )
    log_level: str = Field(default="INFO")
    log_json: bool | None = Field(default=None, description="JSON logs; default: when not a TTY.")
    metrics: MetricsOptions = Field(
        default_factory=MetricsOptions,
        description="Metrics and probes of the consumer services (AGENT_MEMORY_METRICS__PORT...).",
    )
    embedded: EmbeddedOptions = Field(
        default_factory=EmbeddedOptions,
        description="Ports of the embedded servers (AGENT_MEMORY_EMBEDDED__PG_PORT...).",
    )

    @model_validator(mode="after")
    def _servers_follow_embedded_ports(self) -> CommonSettings:
        """Without an explicit URL, connect where the embedded stack listens.

        ``agent-memory migrate`` or ``admin rebuild-index`` run beside a stack started with
        ``AGENT_MEMORY_EMBEDDED__PG_PORT`` must reach *that* database, not whatever listens on
        the default port (another stack's, as happened once in testing).

        And with the credentials ``agent-memory up`` generated in the home
        (``core.credentials``): the embedded servers take no connection without them. A home
        without them (never started) keeps the old defaults.
        """
        explicit = self.model_fields_set
        if "pg_dsn" in explicit and "nats_url" in explicit:
            return self
        creds = load_credentials(self.home)
        if "pg_dsn" not in explicit:
            login = f"{creds.pg_user}:{creds.pg_password}" if creds else PG_SUPERUSER
            self.pg_dsn = (
                f"postgresql://{login}@127.0.0.1:{self.embedded.pg_port}/{DEFAULT_DATABASE}"
            )
        if "nats_url" not in explicit:
            login = f"{creds.nats_user}:{creds.nats_password}@" if creds else ""
            self.nats_url = f"nats://{login}127.0.0.1:{self.embedded.nats_port}"
        return self

    @field_validator("home")
    @classmethod
    def _absolute_home(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @property
    def host_allowlist(self) -> str | None:
        """The Host names the HTTP services accept: the setting, else loopback names only in
        local mode, else (team mode, None) any host: authentication guards it there."""
        if self.allowed_hosts.strip():
            return self.allowed_hosts
        return "" if not self.tokens.strip() else None

    @property
    def nats_servers(self) -> list[str]:
        return [s.strip() for s in self.nats_url.split(",") if s.strip()]
