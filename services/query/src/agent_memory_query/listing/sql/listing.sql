-- Listings straight from the event log (migration 0001), so a project appears with its first
-- stored event; segments (0002) say what is still open, the TOC (0003) gives session titles.
-- {bounds}: what the caller's key may read (sharing/policy.py, BOUNDS_SQL), put in on loading.

-- name: projects
SELECT project_id, count(*) AS events, count(DISTINCT session_id) AS sessions,
       count(DISTINCT agent_id) AS agents,
       array_agg(DISTINCT agent_id ORDER BY agent_id) AS agent_ids,
       min(ts) AS first_ts, max(ts) AS last_ts, max(recorded_at) AS last_recorded_at
FROM events
WHERE tenant = %(tenant)s AND {bounds}
GROUP BY project_id
ORDER BY max(recorded_at) DESC, project_id
LIMIT %(limit)s

-- name: segment_counts
SELECT project_id,
       count(*) FILTER (WHERE status = 'open') AS open_segments,
       count(*) FILTER (WHERE status = 'closed') AS closed_segments
FROM segments
WHERE tenant = %(tenant)s AND project_id = ANY(%(project_ids)s)
GROUP BY project_id

-- name: sessions
WITH s AS (
    SELECT session_id, min(ts) AS first_ts, max(ts) AS last_ts, count(*) AS events,
           array_agg(DISTINCT agent_id ORDER BY agent_id) AS agent_ids,
           coalesce(array_agg(DISTINCT user_id ORDER BY user_id)
                    FILTER (WHERE user_id IS NOT NULL), '{}') AS user_ids
    FROM events
    WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND {bounds}
    GROUP BY session_id
    ORDER BY max(ts) DESC, session_id
    LIMIT %(limit)s
)
SELECT s.session_id, s.first_ts, s.last_ts, s.events, s.agent_ids, s.user_ids,
       EXISTS (
           SELECT 1 FROM segments g
           WHERE g.tenant = %(tenant)s AND g.project_id = %(project_id)s
             AND g.session_id = s.session_id AND g.status = 'open'
       ) AS open,
       t.title AS latest_title, t.node_id AS latest_node_id
FROM s
LEFT JOIN LATERAL (
    SELECT v.title, n.node_id
    FROM toc_nodes n
    JOIN toc_node_versions v
      ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
    WHERE n.tenant = %(tenant)s AND n.project_id = %(project_id)s AND n.level = 'segment'
      AND NOT n.is_empty AND v.session_id = s.session_id
    ORDER BY n.end_ts DESC, n.node_id DESC
    LIMIT 1
) t ON true
ORDER BY s.last_ts DESC, s.session_id

-- name: agents
SELECT agent_id, count(*) AS events, count(DISTINCT (project_id, session_id)) AS sessions,
       array_agg(DISTINCT project_id ORDER BY project_id) AS project_ids,
       min(ts) AS first_ts, max(ts) AS last_ts
FROM events
WHERE tenant = %(tenant)s AND (%(project_id)s::text IS NULL OR project_id = %(project_id)s)
  AND {bounds}
GROUP BY agent_id
ORDER BY max(ts) DESC, agent_id
LIMIT %(limit)s
