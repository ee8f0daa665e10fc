-- name: insert_event
INSERT INTO events (
    tenant, event_id, ts, project_id, agent_id, session_id, user_id,
    role, type, text, metadata, received_at
) VALUES (
    %(tenant)s, %(event_id)s, %(ts)s, %(project_id)s, %(agent_id)s, %(session_id)s, %(user_id)s,
    %(role)s, %(type)s, %(text)s, %(metadata)s::jsonb, %(received_at)s
)
ON CONFLICT (tenant, event_id) DO NOTHING
