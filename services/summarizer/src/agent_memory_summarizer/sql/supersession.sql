-- Statements and supersession links (supersession.py, supersession_store.py).

-- name: events_full
SELECT event_id, ts, project_id, session_id, role, type, text, metadata
FROM events
WHERE tenant = %(tenant)s AND event_id = ANY(%(event_ids)s)

-- name: project_statements
-- Only the project's statements sharing a subject word with the new ones: a link needs
-- MIN_SHARED (3) shared words, so the rest can never match (GIN index of migration 0017).
SELECT event_id, project_id, session_id, ts, kind, subject, text, cue
FROM memory_statements
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND subject && %(words)s::text[]

-- name: insert_statement
INSERT INTO memory_statements (tenant, event_id, project_id, session_id, ts, kind, subject, text, cue)
VALUES (%(tenant)s, %(event_id)s, %(project_id)s, %(session_id)s, %(ts)s, %(kind)s, %(subject)s,
        %(text)s, %(cue)s)
ON CONFLICT (tenant, event_id) DO NOTHING

-- name: insert_link
INSERT INTO memory_supersessions (tenant, older_event_id, newer_event_id, project_id, source, score, note)
VALUES (%(tenant)s, %(older)s, %(newer)s, %(project_id)s, %(source)s, %(score)s, %(note)s)
ON CONFLICT (tenant, older_event_id, newer_event_id) DO NOTHING
