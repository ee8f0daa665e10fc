-- Reads and writes of the search API (search/routes.py, brainstem/). The raw event scan is
-- composed in search/store.py because its filters are optional.

-- name: access_counts
SELECT item_id, access_count
FROM search_access
WHERE tenant = %(tenant)s AND item_id = ANY(%(ids)s::text[])

-- name: roles_of
-- Who said each event: a question about what the user said weighs the user's prompts.
SELECT event_id, role
FROM events
WHERE tenant = %(tenant)s AND event_id = ANY(%(ids)s::text[])

-- name: add_access
-- Keys arrive sorted, so concurrent flushes from several replicas lock rows in one order.
INSERT INTO search_access AS a (tenant, item_id, access_count, first_access, last_access)
SELECT t, i, c, now(), now()
FROM unnest(%(tenants)s::text[], %(ids)s::text[], %(counts)s::bigint[]) AS u(t, i, c)
ON CONFLICT (tenant, item_id) DO UPDATE
SET access_count = a.access_count + EXCLUDED.access_count,
    last_access = EXCLUDED.last_access
