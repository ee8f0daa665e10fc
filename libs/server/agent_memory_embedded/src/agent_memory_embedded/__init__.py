"""The embedded stack: a real nats-server and a real PostgreSQL from PyPI packages.

Used by ``agent-memory up`` and by the test fixtures, so that tests run on exactly the servers
the product runs on.
"""

from agent_memory_embedded.pgmemory import postgres_memory_settings
from agent_memory_embedded.servers import (
    ManagedProcess,
    NatsServer,
    PostgresServer,
    free_port,
    wait_for,
)

__all__ = [
    "ManagedProcess",
    "NatsServer",
    "PostgresServer",
    "free_port",
    "postgres_memory_settings",
    "wait_for",
]
