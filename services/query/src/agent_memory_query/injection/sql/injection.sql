-- The switch and the cost of recall injection (injection/store.py; tables of migration 0027).

-- name: switch
SELECT injection, updated_at FROM recall_settings
WHERE tenant = %(tenant)s AND project_id = %(project_id)s

-- name: set_switch
INSERT INTO recall_settings (tenant, project_id, injection)
VALUES (%(tenant)s, %(project_id)s, %(injection)s)
ON CONFLICT (tenant, project_id)
DO UPDATE SET injection = EXCLUDED.injection, updated_at = now()
RETURNING injection, updated_at

-- name: add_usage
-- Keys arrive sorted, so concurrent flushes from several replicas lock rows in one order.
INSERT INTO recall_usage AS u
    (tenant, project_id, day, kind, session_id, answers, given, tokens, last_at)
SELECT t, p, d, k, s, a, g, n, l
FROM unnest(%(tenants)s::text[], %(projects)s::text[], %(days)s::date[], %(kinds)s::text[],
            %(sessions)s::text[], %(answers)s::bigint[], %(given)s::bigint[],
            %(tokens)s::bigint[], %(last_at)s::timestamptz[]) AS x(t, p, d, k, s, a, g, n, l)
ON CONFLICT (tenant, project_id, day, kind, session_id) DO UPDATE
SET answers = u.answers + EXCLUDED.answers,
    given = u.given + EXCLUDED.given,
    tokens = u.tokens + EXCLUDED.tokens,
    last_at = greatest(u.last_at, EXCLUDED.last_at)

-- name: project_days
-- A project's totals per UTC day and kind since %(since)s (at most 2 rows a day).
SELECT day, kind, sum(answers) AS answers, sum(given) AS given, sum(tokens) AS tokens
FROM recall_usage
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND day >= %(since)s
GROUP BY day, kind

-- name: top_sessions
-- The sessions given the most tokens since %(since)s; for a key bound to an agent (bound_agent
-- set only when some project is ``separate``), only sessions the key may list ({bounds}, as
-- the session listing reads them), and the answers of no named session.
SELECT session_id, sum(answers) AS answers, sum(given) AS given, sum(tokens) AS tokens,
       max(last_at) AS last_at
FROM recall_usage AS u
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND day >= %(since)s
  AND (%(bound_agent)s::text IS NULL OR u.session_id = ''
       OR EXISTS (SELECT 1 FROM events AS e
                  WHERE e.tenant = u.tenant AND e.project_id = u.project_id
                    AND e.session_id = u.session_id AND {bounds}))
GROUP BY session_id
ORDER BY sum(tokens) DESC, sum(answers) DESC, session_id
LIMIT %(limit)s

-- name: tenant_days
-- Every project's totals per UTC day and kind since %(since)s (%(projects)s null: all).
SELECT project_id, day, kind, sum(answers) AS answers, sum(given) AS given,
       sum(tokens) AS tokens
FROM recall_usage
WHERE tenant = %(tenant)s AND day >= %(since)s
  AND (%(projects)s::text[] IS NULL OR project_id = ANY(%(projects)s::text[]))
GROUP BY project_id, day, kind

-- name: tenant_switches
SELECT project_id, injection, updated_at FROM recall_settings
WHERE tenant = %(tenant)s
  AND (%(projects)s::text[] IS NULL OR project_id = ANY(%(projects)s::text[]))
