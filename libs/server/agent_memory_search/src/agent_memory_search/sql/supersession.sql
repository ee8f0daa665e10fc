-- Supersession links (written by the summarizer, migration 0016) as search reads them.

-- name: links_of
-- The links touching the events, with both sides' time and words, for showing: per event at
-- most %(shown)s of each side (supersession.SHOWN_LINKS), so that an answer stays small
-- however often a statement was repeated or replaced: the newest successors of an older one,
-- and the best predecessors of a newer one (explicit first, then score, then the most recent).
-- Each side's pick carries the link's own columns, and the words are cut to what an answer
-- shows (%(chars)s characters, supersession.SHOWN_CHARS): joined back to the links table
-- instead, the planner hashed the whole table (a scan that grows with the store: 194,513
-- links on the 1,000,000-event bench store, ~300 event ids asked, 7.5 -> 6.2 ms p50, the
-- same answers).
WITH ids AS (SELECT DISTINCT unnest(%(ids)s::text[]) AS event_id),
picked AS (
    SELECT later.older_event_id, later.newer_event_id, later.source, later.score, later.note
    FROM ids CROSS JOIN LATERAL (
        SELECT s.older_event_id, s.newer_event_id, s.source, s.score, s.note
        FROM memory_supersessions s
        JOIN events n ON n.tenant = s.tenant AND n.event_id = s.newer_event_id
        WHERE s.tenant = %(tenant)s AND s.older_event_id = ids.event_id
        ORDER BY n.ts DESC, s.newer_event_id
        LIMIT %(shown)s
    ) AS later
    UNION
    SELECT earlier.older_event_id, earlier.newer_event_id, earlier.source, earlier.score,
           earlier.note
    FROM ids CROSS JOIN LATERAL (
        SELECT s.older_event_id, s.newer_event_id, s.source, s.score, s.note
        FROM memory_supersessions s
        JOIN events o ON o.tenant = s.tenant AND o.event_id = s.older_event_id
        WHERE s.tenant = %(tenant)s AND s.newer_event_id = ids.event_id
        ORDER BY s.source = 'explicit' DESC, s.score DESC, o.ts DESC, s.older_event_id
        LIMIT %(shown)s
    ) AS earlier
)
SELECT p.older_event_id, p.newer_event_id, p.source, p.score, p.note,
       o.ts AS older_ts, left(o.text, %(chars)s) AS older_text,
       n.ts AS newer_ts, left(n.text, %(chars)s) AS newer_text
FROM picked p
JOIN events o ON o.tenant = %(tenant)s AND o.event_id = p.older_event_id
JOIN events n ON n.tenant = %(tenant)s AND n.event_id = p.newer_event_id
ORDER BY p.older_event_id, p.newer_event_id

-- name: events_by_id
SELECT tenant, event_id, ts, project_id, agent_id, session_id, role, type, text, metadata
FROM events
WHERE tenant = %(tenant)s AND event_id = ANY(%(ids)s::text[])
