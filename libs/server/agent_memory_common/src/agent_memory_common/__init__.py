"""Code shared by the services (see docs/architecture.md for its layers).

Importing the package installs the import hook of ``core.lean_nats``: every service imports
this package before nats-py, and so starts without aiohttp (it talks to NATS over TCP).
"""

from agent_memory_common.core import lean_nats

lean_nats.install()
