-- name: create_incoming
-- A per-connection staging table: COPY into it, then one INSERT ... SELECT. COPY costs half
-- of executemany per row on the client, and ON CONFLICT still makes redelivery harmless.
CREATE TEMP TABLE IF NOT EXISTS incoming (
    tenant text, event_id text, ts timestamptz, project_id text, agent_id text,
    session_id text, user_id text, role text, type text, text text, metadata jsonb,
    received_at timestamptz
) ON COMMIT DELETE ROWS

-- name: copy_incoming
COPY incoming (
    tenant, event_id, ts, project_id, agent_id, session_id, user_id,
    role, type, text, metadata, received_at
) FROM STDIN

-- name: insert_from_incoming
INSERT INTO events (
    tenant, event_id, ts, project_id, agent_id, session_id, user_id,
    role, type, text, metadata, received_at
)
SELECT i.tenant, i.event_id, i.ts, i.project_id, i.agent_id, i.session_id, i.user_id,
       i.role, i.type, i.text, i.metadata, i.received_at
FROM incoming i
WHERE NOT EXISTS (
    SELECT 1 FROM erased_events x WHERE x.tenant = i.tenant AND x.event_id = i.event_id
)
ON CONFLICT (tenant, event_id) DO NOTHING

-- name: refused_in_incoming
-- Erased event ids in this batch: refused, and not announced (docs/lifecycle.md (erasure)).
SELECT i.tenant, i.event_id FROM incoming i
JOIN erased_events x ON x.tenant = i.tenant AND x.event_id = i.event_id

-- name: erase_duplicate_marks
DELETE FROM event_duplicates d
USING erased_events x
WHERE x.erasure_id = %(erasure_id)s AND d.tenant = x.tenant AND d.event_id = x.event_id

-- name: erase_events
DELETE FROM events e
USING erased_events x
WHERE x.erasure_id = %(erasure_id)s AND e.tenant = x.tenant AND e.event_id = x.event_id

-- name: insert_from_incoming_returning
-- The same append, answering which rows are new: only those get a dedup decision (a
-- redelivered event keeps the one stored with it).
INSERT INTO events (
    tenant, event_id, ts, project_id, agent_id, session_id, user_id,
    role, type, text, metadata, received_at
)
SELECT tenant, event_id, ts, project_id, agent_id, session_id, user_id,
       role, type, text, metadata, received_at
FROM incoming i
WHERE NOT EXISTS (
    SELECT 1 FROM erased_events x WHERE x.tenant = i.tenant AND x.event_id = i.event_id
)
ON CONFLICT (tenant, event_id) DO NOTHING
RETURNING tenant, event_id

-- name: recent_originals
-- The latest originals (events not marked duplicate) of each given session, for the dedup index.
SELECT k.i, r.event_id, r.ts, r.role, r.type, r.text
FROM unnest(%(tenants)s::text[], %(projects)s::text[], %(sessions)s::text[])
     WITH ORDINALITY AS k (tenant, project_id, session_id, i)
CROSS JOIN LATERAL (
    SELECT e.event_id, e.ts, e.role, e.type, e.text, e.seq
    FROM events AS e
    WHERE e.tenant = k.tenant AND e.session_id = k.session_id AND e.project_id = k.project_id
      AND e.type NOT IN ('session_start', 'session_end')
      AND NOT EXISTS (
          SELECT 1 FROM event_duplicates AS d
          WHERE d.tenant = e.tenant AND d.event_id = e.event_id
      )
    ORDER BY e.ts DESC, e.seq DESC
    LIMIT %(limit)s
) AS r
ORDER BY k.i, r.ts, r.seq

-- name: insert_duplicates
-- A mark is stored only if its original is in `events` (committed, or earlier in this
-- transaction): the ids returned are the duplicates the recorder then leaves unannounced.
INSERT INTO event_duplicates (
    tenant, event_id, duplicate_of, project_id, session_id, method, similarity
)
SELECT k.tenant, k.event_id, k.duplicate_of, k.project_id, k.session_id, k.method, k.similarity
FROM unnest(
    %(tenants)s::text[], %(event_ids)s::text[], %(originals)s::text[], %(projects)s::text[],
    %(sessions)s::text[], %(methods)s::text[], %(similarities)s::real[]
) AS k (tenant, event_id, duplicate_of, project_id, session_id, method, similarity)
WHERE EXISTS (
    SELECT 1 FROM events AS e WHERE e.tenant = k.tenant AND e.event_id = k.duplicate_of
)
ON CONFLICT (tenant, event_id) DO NOTHING
RETURNING tenant, event_id

-- name: stored_duplicates
SELECT d.tenant, d.event_id
FROM event_duplicates AS d
JOIN unnest(%(tenants)s::text[], %(event_ids)s::text[]) AS k (tenant, event_id)
  ON d.tenant = k.tenant AND d.event_id = k.event_id
