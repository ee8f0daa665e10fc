"""Per-project retention of the search indexes: ``GET/PUT /v1/projects/{project_id}/retention``."""
