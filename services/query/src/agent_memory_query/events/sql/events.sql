-- name: event_by_id
SELECT seq, tenant, event_id, ts, project_id, agent_id, session_id, user_id, role, type, text,
       metadata, received_at, recorded_at
FROM events
WHERE tenant = %(tenant)s AND event_id = %(event_id)s

-- name: count_events
SELECT count(*) FROM events WHERE tenant = %(tenant)s
