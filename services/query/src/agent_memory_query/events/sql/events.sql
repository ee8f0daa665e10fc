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

-- name: count_segments
-- Open segments (partial index segments_open_updated) and, of them, those that close without
-- waiting for a new event: historical tails (issue 53, point 3), and closed versions still in
-- the segmenter's outbox (closed, not yet confirmed published).
SELECT (SELECT count(*) FROM segments
        WHERE status = 'open' AND tenant = %(tenant)s) AS open,
       (SELECT count(*) FROM segments
        WHERE status = 'open' AND historical AND tenant = %(tenant)s)
     + (SELECT count(*) FROM segment_outbox WHERE tenant = %(tenant)s) AS closing
