"""Fixtures for every test folder: real servers from PyPI packages (see testing.py)."""

pytest_plugins = ["agent_memory_embedded.testing"]
