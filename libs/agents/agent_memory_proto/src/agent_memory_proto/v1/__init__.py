"""Generated from proto/agent_memory/v1 by `make proto`."""
