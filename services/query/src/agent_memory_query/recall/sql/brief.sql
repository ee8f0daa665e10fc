-- The brief of a project (routes.get_brief): its standing rules and its last session.
-- {bounds}: what the caller's key may read (sharing/policy.py, BOUNDS_SQL), put in on loading.

-- name: rules
-- The decisions, constraints, preferences and procedures the summarizer found (grips, migration
-- 0003), each excerpt once with the time of its newest event, newest first; none with an event
-- that a newer statement replaced (memory_supersessions, migration 0016): a brief states what
-- is in force, and the search shows history to whoever asks for it.
SELECT * FROM (
    SELECT DISTINCT ON (g.excerpt) g.grip_id, g.memory_kind, g.excerpt, g.event_ids, w.ts
    FROM toc_grips g
    CROSS JOIN LATERAL (
        SELECT max(e.ts) AS ts FROM events e
        WHERE e.tenant = g.tenant AND e.event_id = ANY(g.event_ids) AND {bounds}
    ) AS w
    WHERE g.tenant = %(tenant)s AND g.project_id = %(project)s
      AND g.memory_kind IN ('decision', 'constraint', 'preference', 'procedure')
      AND w.ts IS NOT NULL
      AND NOT EXISTS (
          SELECT 1 FROM memory_supersessions s
          WHERE s.tenant = g.tenant AND s.older_event_id = ANY(g.event_ids)
      )
    ORDER BY g.excerpt, w.ts DESC
) AS rules
ORDER BY ts DESC, grip_id
LIMIT %(limit)s

-- name: last_session
-- The project's most recent session other than the asking one.
SELECT session_id, ts FROM events
WHERE tenant = %(tenant)s AND project_id = %(project)s AND {bounds}
  AND session_id <> %(current)s
ORDER BY ts DESC
LIMIT 1

-- name: session_ends
-- A session's first prompt (its goal, as the user put it) and last reply (where it ended).
(SELECT 'goal' AS part, event_id, ts, text FROM events
 WHERE tenant = %(tenant)s AND project_id = %(project)s AND session_id = %(session)s
   AND {bounds} AND role = 'user' AND type = 'message' AND text <> ''
 ORDER BY ts, event_id LIMIT 1)
UNION ALL
(SELECT 'outcome' AS part, event_id, ts, text FROM events
 WHERE tenant = %(tenant)s AND project_id = %(project)s AND session_id = %(session)s
   AND {bounds} AND role = 'assistant' AND type = 'message' AND text <> ''
 ORDER BY ts DESC, event_id DESC LIMIT 1)
