-- Event ids are compared with COLLATE "C" (byte order = code point order for UTF-8), the
-- order Python's sorted() uses in logic.py, whatever the database's default collation.

-- name: lock_session
SELECT pg_advisory_xact_lock(%(namespace)s, %(key)s)

-- name: try_lock_session
SELECT pg_try_advisory_xact_lock(%(namespace)s, %(key)s)

-- name: find_restart
-- The last live segment whose first own event sorts before the earliest new event: the scan
-- resumes there, its carried overlap as the state.
SELECT s.ordinal, s.event_ids, s.overlap_count, e.ts, e.event_id
FROM segments s
JOIN events e ON e.tenant = s.tenant AND e.event_id = s.event_ids[s.overlap_count + 1]
WHERE s.tenant = %(tenant)s AND s.project_id = %(project_id)s AND s.session_id = %(session_id)s
  AND s.status <> 'retracted'
  AND (e.ts, e.event_id COLLATE "C") < (%(ts)s, %(event_id)s COLLATE "C")
ORDER BY s.ordinal DESC
LIMIT 1

-- name: session_events
-- Erased events (tombstoned) are left out even before the recorder deleted them.
-- Duplicates (dedup at ingest, event_duplicates) are not part of any segment.
SELECT event_id, ts, type, char_length(text) AS chars, agent_id
FROM events
WHERE tenant = %(tenant)s AND session_id = %(session_id)s AND project_id = %(project_id)s
  AND NOT EXISTS (
      SELECT 1 FROM erased_events x WHERE x.tenant = events.tenant AND x.event_id = events.event_id
    ) AND NOT EXISTS (
      SELECT 1 FROM event_duplicates d WHERE d.tenant = events.tenant AND d.event_id = events.event_id
  )

-- name: session_events_from
SELECT event_id, ts, type, char_length(text) AS chars, agent_id
FROM events
WHERE tenant = %(tenant)s AND session_id = %(session_id)s AND project_id = %(project_id)s
  AND (ts, event_id COLLATE "C") >= (%(ts)s, %(event_id)s COLLATE "C")
  AND NOT EXISTS (
      SELECT 1 FROM erased_events x WHERE x.tenant = events.tenant AND x.event_id = events.event_id
    ) AND NOT EXISTS (
      SELECT 1 FROM event_duplicates d WHERE d.tenant = events.tenant AND d.event_id = events.event_id
  )

-- name: events_by_id
SELECT event_id, ts, type, char_length(text) AS chars, agent_id
FROM events
WHERE tenant = %(tenant)s AND event_id = ANY(%(event_ids)s::text[])
  AND NOT EXISTS (
      SELECT 1 FROM erased_events x WHERE x.tenant = events.tenant AND x.event_id = events.event_id
  )

-- name: session_segments_from
SELECT ordinal, version, status, close_reason, event_ids, overlap_count, agent_id,
       start_ts, end_ts
FROM segments
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND session_id = %(session_id)s
  AND ordinal >= %(ordinal)s
ORDER BY ordinal

-- name: upsert_segment
INSERT INTO segments (
    tenant, segment_id, version, project_id, agent_id, session_id, ordinal, start_ts, end_ts,
    event_ids, overlap_count, token_count, status, close_reason, closed_at, updated_at
) VALUES (
    %(tenant)s, %(segment_id)s, %(version)s, %(project_id)s, %(agent_id)s, %(session_id)s,
    %(ordinal)s, %(start_ts)s, %(end_ts)s, %(event_ids)s::text[], %(overlap_count)s,
    %(token_count)s, %(status)s, %(close_reason)s,
    CASE WHEN %(status)s = 'open' THEN NULL ELSE now() END, now()
)
ON CONFLICT (tenant, segment_id) DO UPDATE SET
    version = EXCLUDED.version,
    agent_id = EXCLUDED.agent_id,
    start_ts = EXCLUDED.start_ts,
    end_ts = EXCLUDED.end_ts,
    event_ids = EXCLUDED.event_ids,
    overlap_count = EXCLUDED.overlap_count,
    token_count = EXCLUDED.token_count,
    status = EXCLUDED.status,
    close_reason = EXCLUDED.close_reason,
    closed_at = EXCLUDED.closed_at,
    updated_at = EXCLUDED.updated_at

-- name: delete_segment
DELETE FROM segments WHERE tenant = %(tenant)s AND segment_id = %(segment_id)s

-- name: insert_version
INSERT INTO segment_versions (tenant, segment_id, version, payload, cause, cause_event_ids)
VALUES (
    %(tenant)s, %(segment_id)s, %(version)s, %(payload)s::jsonb, %(cause)s,
    %(cause_event_ids)s::text[]
)

-- name: touch_tail
-- historical: the tail's last event was already older than historical_s (idle_flush_s) in
-- event time when it was handled, so the idle flush closes it after historical_quiet_s
-- (NULL historical_s: the rule is off).
UPDATE segments
SET updated_at = now(),
    historical = coalesce(end_ts < now() - make_interval(secs => %(historical_s)s::float8), false)
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND session_id = %(session_id)s
  AND status = 'open'

-- name: caused_publications
-- Current published versions caused by these events: what a redelivery must announce again.
SELECT v.segment_id, v.version, v.payload, s.project_id
FROM segment_versions v
JOIN segments s
  ON s.tenant = v.tenant AND s.segment_id = v.segment_id AND s.version = v.version
WHERE v.tenant = %(tenant)s AND v.cause_event_ids && %(event_ids)s::text[]
  AND s.status <> 'open'

-- name: idle_candidates
-- Open tails quiet for idle_s, or for quiet_s when the session is historical.
SELECT tenant, project_id, session_id
FROM segments
WHERE status = 'open'
  AND updated_at < now() - make_interval(secs => least(%(idle_s)s, %(quiet_s)s))
  AND (updated_at < now() - make_interval(secs => %(idle_s)s)
       OR (historical AND updated_at < now() - make_interval(secs => %(quiet_s)s)))
ORDER BY updated_at
LIMIT %(limit)s

-- name: idle_tail
-- The open tail, if it is idle and up to date: no event of the session was recorded after the
-- segmenter last handled one (a backlog would mean the tail is not final yet).
SELECT s.segment_id, s.version, s.agent_id, s.ordinal, s.start_ts, s.end_ts, s.event_ids,
       s.overlap_count, s.token_count
FROM segments s
WHERE s.tenant = %(tenant)s AND s.project_id = %(project_id)s AND s.session_id = %(session_id)s
  AND s.status = 'open'
  AND (s.updated_at < now() - make_interval(secs => %(idle_s)s)
       OR (s.historical AND s.updated_at < now() - make_interval(secs => %(quiet_s)s)))
  AND NOT EXISTS (
      SELECT 1 FROM events e
      WHERE e.tenant = s.tenant AND e.session_id = s.session_id AND e.project_id = s.project_id
        AND e.recorded_at >= s.updated_at
        AND NOT EXISTS (  -- a duplicate is never announced: it is no backlog
            SELECT 1 FROM event_duplicates d WHERE d.tenant = e.tenant AND d.event_id = e.event_id
        )
  )
FOR UPDATE

-- name: close_idle
UPDATE segments
SET status = 'closed', close_reason = 'idle', closed_at = now(), updated_at = now()
WHERE tenant = %(tenant)s AND segment_id = %(segment_id)s AND status = 'open'

-- name: insert_outbox
INSERT INTO segment_outbox (tenant, segment_id, version)
VALUES (%(tenant)s, %(segment_id)s, %(version)s)

-- name: delete_outbox
DELETE FROM segment_outbox
WHERE tenant = %(tenant)s AND segment_id = %(segment_id)s AND version = %(version)s

-- name: outbox_due
SELECT o.tenant, o.segment_id, o.version, v.payload
FROM segment_outbox o
JOIN segment_versions v USING (tenant, segment_id, version)
WHERE o.created_at < now() - make_interval(secs => %(grace_s)s)
ORDER BY o.created_at
LIMIT %(limit)s
FOR UPDATE OF o SKIP LOCKED

-- name: erase_versions
-- Published versions of the session's segments that named an erased event: the new versions
-- (retractions or the segments without them) stay, these go.
DELETE FROM segment_versions v
USING segments s
WHERE s.tenant = %(tenant)s AND s.project_id = %(project_id)s AND s.session_id = %(session_id)s
  AND v.tenant = s.tenant AND v.segment_id = s.segment_id
  AND EXISTS (
      SELECT 1 FROM jsonb_array_elements_text(v.payload -> 'event_ids') AS u (event_id)
      JOIN erased_events x ON x.tenant = v.tenant AND x.event_id = u.event_id
      WHERE x.erasure_id = %(erasure_id)s
  )

-- name: erase_outbox
DELETE FROM segment_outbox o
WHERE o.tenant = %(tenant)s
  AND NOT EXISTS (
      SELECT 1 FROM segment_versions v
      WHERE v.tenant = o.tenant AND v.segment_id = o.segment_id AND v.version = o.version
  )
