-- name: insert_key
INSERT INTO api_keys (key_id, tenant, role, secret_hash, projects, agent_id, user_id, label,
                      expires_at)
VALUES (%(key_id)s, %(tenant)s, %(role)s, %(secret_hash)s, %(projects)s, %(agent_id)s,
        %(user_id)s, %(label)s, %(expires_at)s)
RETURNING key_id, tenant, role, projects, agent_id, user_id, label, created_at, expires_at,
          revoked_at

-- name: key_by_id
-- The check of a presented key: the caller compares secret_hash in constant time.
SELECT key_id, tenant, role, secret_hash, projects, agent_id, user_id, expires_at, revoked_at
FROM api_keys WHERE key_id = %(key_id)s

-- name: list_keys
-- tenant NULL: every tenant (the operator's CLI); never the hash.
SELECT key_id, tenant, role, projects, agent_id, user_id, label, created_at, expires_at,
       revoked_at
FROM api_keys
WHERE (%(tenant)s::text IS NULL OR tenant = %(tenant)s)
  AND (%(include_revoked)s OR revoked_at IS NULL)
ORDER BY created_at, key_id

-- name: revoke_key
-- Idempotent: revoking twice keeps the first revocation time.
UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
WHERE key_id = %(key_id)s AND (%(tenant)s::text IS NULL OR tenant = %(tenant)s)
RETURNING key_id, tenant, role, projects, agent_id, user_id, label, created_at, expires_at,
          revoked_at
