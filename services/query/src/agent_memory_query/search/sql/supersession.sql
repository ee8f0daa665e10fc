-- Supersession links (written by the summarizer, migration 0016) as search reads them.

-- name: links_of
-- Every link touching one of the events, with both sides' time and words, for showing.
SELECT l.older_event_id, l.newer_event_id, l.source, l.score, l.note,
       o.ts AS older_ts, o.text AS older_text, n.ts AS newer_ts, n.text AS newer_text
FROM memory_supersessions l
JOIN events o ON o.tenant = l.tenant AND o.event_id = l.older_event_id
JOIN events n ON n.tenant = l.tenant AND n.event_id = l.newer_event_id
WHERE l.tenant = %(tenant)s
  AND (l.older_event_id = ANY(%(ids)s::text[]) OR l.newer_event_id = ANY(%(ids)s::text[]))

-- name: events_by_id
SELECT tenant, event_id, ts, project_id, agent_id, session_id, role, type, text, metadata
FROM events
WHERE tenant = %(tenant)s AND event_id = ANY(%(ids)s::text[])
