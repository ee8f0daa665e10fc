"""Fixtures for every test folder: real servers from PyPI packages (see tests/stack.py)."""

pytest_plugins = ["tests.stack"]
