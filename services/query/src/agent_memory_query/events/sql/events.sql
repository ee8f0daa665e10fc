-- name: event_by_id
SELECT seq, tenant, event_id, ts, project_id, agent_id, session_id, user_id, role, type, text,
       metadata, received_at, recorded_at,
       (SELECT d.duplicate_of FROM event_duplicates AS d
        WHERE d.tenant = events.tenant AND d.event_id = events.event_id) AS duplicate_of
FROM events
WHERE tenant = %(tenant)s AND event_id = %(event_id)s

-- name: count_events
SELECT count(*) FROM events WHERE tenant = %(tenant)s

-- name: count_duplicates
SELECT count(*) FROM event_duplicates WHERE tenant = %(tenant)s
