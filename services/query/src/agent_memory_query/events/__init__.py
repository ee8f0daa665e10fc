"""The raw, append-only event log: ``GET /v1/events`` and ``GET /v1/events/{event_id}``."""
