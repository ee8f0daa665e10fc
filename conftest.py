"""Fixtures for every test folder: real servers from PyPI packages (see tests/stack.py), and
how the suite is spread over xdist workers (tests/scheduling.py)."""

pytest_plugins = ["tests.stack", "tests.scheduling"]
