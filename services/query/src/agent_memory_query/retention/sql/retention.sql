-- name: get
SELECT overrides, updated_at FROM retention_policies
WHERE tenant = %(tenant)s AND project_id = %(project_id)s

-- name: put
INSERT INTO retention_policies (tenant, project_id, overrides)
VALUES (%(tenant)s, %(project_id)s, %(overrides)s)
ON CONFLICT (tenant, project_id)
DO UPDATE SET overrides = EXCLUDED.overrides, updated_at = now()
RETURNING overrides, updated_at

-- name: of_projects
SELECT project_id, overrides FROM retention_policies
WHERE tenant = %(tenant)s AND project_id = ANY(%(project_ids)s::text[])
