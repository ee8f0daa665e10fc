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
-- Erased event ids in this batch: refused, and not announced (docs/erasure.md).
SELECT i.tenant, i.event_id FROM incoming i
JOIN erased_events x ON x.tenant = i.tenant AND x.event_id = i.event_id

-- name: erase_events
DELETE FROM events e
USING erased_events x
WHERE x.erasure_id = %(erasure_id)s AND e.tenant = x.tenant AND e.event_id = x.event_id
