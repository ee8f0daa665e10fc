"""Hook adapters: ``agent-memory hook <runtime>`` turns a coding agent's hook payload into events.

Everything under this package runs on the agent's critical path (the agent waits for the hook
to exit), so it imports the standard library only (and little of it: see ``lite.py``), never
pydantic, httpx, fastapi or psycopg. The package declares no dependencies, ``make lint``
(import-linter) rejects any import outside the standard library, and ``tests/test_hook_speed.py``
times the command.
"""
