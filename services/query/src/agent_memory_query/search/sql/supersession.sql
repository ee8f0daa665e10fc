-- Supersession links (written by the summarizer, migration 0016) as search reads them.

-- name: links_of
-- The links touching the events, with both sides' time and words, for showing: per event at
-- most %(shown)s of each side (supersession.SHOWN_LINKS), so that an answer stays small
-- however often a statement was repeated or replaced: the newest successors of an older one,
-- and the best predecessors of a newer one (explicit first, then score, then the most recent).
WITH ids AS (SELECT DISTINCT unnest(%(ids)s::text[]) AS event_id),
picked AS (
    SELECT later.older_event_id, later.newer_event_id
    FROM ids CROSS JOIN LATERAL (
        SELECT s.older_event_id, s.newer_event_id
        FROM memory_supersessions s
        JOIN events n ON n.tenant = s.tenant AND n.event_id = s.newer_event_id
        WHERE s.tenant = %(tenant)s AND s.older_event_id = ids.event_id
        ORDER BY n.ts DESC, s.newer_event_id
        LIMIT %(shown)s
    ) AS later
    UNION
    SELECT earlier.older_event_id, earlier.newer_event_id
    FROM ids CROSS JOIN LATERAL (
        SELECT s.older_event_id, s.newer_event_id
        FROM memory_supersessions s
        JOIN events o ON o.tenant = s.tenant AND o.event_id = s.older_event_id
        WHERE s.tenant = %(tenant)s AND s.newer_event_id = ids.event_id
        ORDER BY s.source = 'explicit' DESC, s.score DESC, o.ts DESC, s.older_event_id
        LIMIT %(shown)s
    ) AS earlier
)
SELECT l.older_event_id, l.newer_event_id, l.source, l.score, l.note,
       o.ts AS older_ts, o.text AS older_text, n.ts AS newer_ts, n.text AS newer_text
FROM picked p
JOIN memory_supersessions l ON l.tenant = %(tenant)s
    AND l.older_event_id = p.older_event_id AND l.newer_event_id = p.newer_event_id
JOIN events o ON o.tenant = l.tenant AND o.event_id = l.older_event_id
JOIN events n ON n.tenant = l.tenant AND n.event_id = l.newer_event_id
ORDER BY l.older_event_id, l.newer_event_id

-- name: events_by_id
SELECT tenant, event_id, ts, project_id, agent_id, session_id, role, type, text, metadata
FROM events
WHERE tenant = %(tenant)s AND event_id = ANY(%(ids)s::text[])
