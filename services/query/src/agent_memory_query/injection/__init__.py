"""A project's recall injection: its switch and its cost, ``GET/PUT /v1/projects/{id}/recall``."""
