-- name: get_sharing
SELECT strategy, updated_at FROM project_sharing
WHERE tenant = %(tenant)s AND project_id = %(project_id)s

-- name: strategies
SELECT project_id, strategy FROM project_sharing
WHERE tenant = %(tenant)s AND project_id = ANY(%(project_ids)s)

-- name: put_sharing
INSERT INTO project_sharing (tenant, project_id, strategy)
VALUES (%(tenant)s, %(project_id)s, %(strategy)s)
ON CONFLICT (tenant, project_id)
DO UPDATE SET strategy = EXCLUDED.strategy, updated_at = now()
RETURNING strategy, updated_at

-- name: separate_projects
SELECT project_id FROM project_sharing
WHERE tenant = %(tenant)s AND strategy = 'separate'
