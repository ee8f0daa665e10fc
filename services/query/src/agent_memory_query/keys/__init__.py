"""The admin routes of API keys (``/v1/keys``); the rows are written by
agent_memory_common.auth.keys."""
