"""Hook adapters: ``agent-memory hook <runtime>`` turns a coding agent's hook payload into events.

Everything under this package runs on the agent's critical path (the agent waits for the hook
to exit), so it imports the standard library only (and little of it: see ``lite.py``), never
pydantic, httpx, fastapi or psycopg. ``services/cli/tests/test_hook_speed.py`` holds that line.
"""
