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
SELECT tenant, event_id, ts, project_id, agent_id, session_id, user_id,
       role, type, text, metadata, received_at
FROM incoming
ON CONFLICT (tenant, event_id) DO NOTHING
