"""The coding-session corpus of ``make bench-coding``: generated, deterministic, our own."""
