"""The web dashboard: server-rendered pages over the query service's public API."""
