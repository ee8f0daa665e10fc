-- Statements and supersession links (supersession.py, supersession_store.py).

-- name: events_full
SELECT event_id, ts, project_id, session_id, role, type, text, metadata
FROM events
WHERE tenant = %(tenant)s AND event_id = ANY(%(event_ids)s)

-- name: project_statements
-- Only the project's statements sharing a subject word with the new ones: a link needs
-- MIN_SHARED (3) shared words, so the rest can never match (GIN index of migration 0017).
-- The subject as one string of words (none holds a space): thousands of rows at scale, and
-- psycopg reads a string in C where it builds an array element by element.
SELECT event_id, project_id, session_id, ts, kind, array_to_string(subject, ' '), text, cue
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

-- name: prune_predecessors
-- Each newer statement keeps its best %(keep)s detected predecessors over every segment, not
-- per segment: a statement summarized early gains candidates each time a segment of older
-- statements arrives later. Same order as ``detect``: score, then the most recent older one,
-- then its id. Explicit links are never pruned.
DELETE FROM memory_supersessions AS l
USING (
    SELECT s.older_event_id, s.newer_event_id,
           row_number() OVER (PARTITION BY s.newer_event_id
                              ORDER BY s.score DESC, o.ts DESC, s.older_event_id) AS place
    FROM memory_supersessions s
    JOIN memory_statements o ON o.tenant = s.tenant AND o.event_id = s.older_event_id
    WHERE s.tenant = %(tenant)s AND s.source = 'detected'
      AND s.newer_event_id = ANY(%(newer)s::text[])
) AS ranked
WHERE ranked.place > %(keep)s AND l.tenant = %(tenant)s
  AND l.older_event_id = ranked.older_event_id AND l.newer_event_id = ranked.newer_event_id

-- name: kept_predecessors
-- The detected predecessors the newer statements have now, with what ranks them.
SELECT s.newer_event_id, s.older_event_id, s.score, o.ts AS older_ts
FROM memory_supersessions s
JOIN memory_statements o ON o.tenant = s.tenant AND o.event_id = s.older_event_id
WHERE s.tenant = %(tenant)s AND s.source = 'detected'
  AND s.newer_event_id = ANY(%(newer)s::text[])
