-- name: list_topics
-- Topics of the tenant (one project or all), with importance as of %(asof)s: the members'
-- salience, halved every half-life since each member ended. Only members begun before %(asof)s
-- count; with %(since)s, only topics with a member ending at or after it. Without %(asof)s
-- (nobody named a time), each topic is valued as of its project's latest activity (its newest
-- segment's end, one backward probe of topic_segments_project), not the wall clock: sessions
-- imported months after they happened were all worth 0.00-0.02 at 30 days' half-life, and a
-- project left for a while keeps the ranking it had (issue 53, point 5).
-- Each topic's members are aggregated on their own (LATERAL, through topic_members_topic): on
-- the 1,000,000-event bench-scale store (3,507 topics, 33,588 members, 30 projects) one
-- project's listing took 9.5 ms p50 as one join grouped by topic, 6.7 ms this way, with the same
-- answers; every project's 265 -> 189 ms.
SELECT t.topic_id, t.project_id, t.label, t.keywords, a.importance, a.size, a.first_ts,
       a.last_ts, a.session_ids
FROM topics t
CROSS JOIN LATERAL (
    SELECT coalesce(%(asof)s::timestamptz, (
        SELECT max(ls.end_ts) FROM topic_segments ls
        WHERE ls.tenant = t.tenant AND ls.project_id = t.project_id)) AS asof
) w
CROSS JOIN LATERAL (
    SELECT sum(s.salience * power(0.5, greatest(extract(epoch FROM w.asof - s.end_ts), 0)
                                       / (%(half_life_days)s * 86400.0))) AS importance,
           count(*) AS size, min(s.start_ts) AS first_ts, max(s.end_ts) AS last_ts,
           array_agg(DISTINCT s.session_id ORDER BY s.session_id) AS session_ids
    FROM topic_members m
    JOIN topic_segments s ON s.tenant = m.tenant AND s.node_id = m.node_id
    WHERE m.tenant = t.tenant AND m.topic_id = t.topic_id
      AND (%(asof)s::timestamptz IS NULL OR s.start_ts < %(asof)s::timestamptz)
) a
WHERE t.tenant = %(tenant)s
  AND (%(project_id)s::text IS NULL OR t.project_id = %(project_id)s)
  AND (%(topic_ids)s::text[] IS NULL OR t.topic_id = ANY(%(topic_ids)s))
  AND a.size > 0  -- a topic with no member begun before %(asof)s is not listed
  AND (%(since)s::timestamptz IS NULL OR a.last_ts >= %(since)s)
  -- the user filter (store.py), once per topic: a member segment holds an event of the user
  AND (%(user_id)s::text IS NULL OR EXISTS (
      SELECT 1
      FROM topic_members um
      JOIN topic_segments us ON us.tenant = um.tenant AND us.node_id = um.node_id
      JOIN events e ON e.tenant = us.tenant AND e.event_id = ANY(us.event_ids)
      WHERE um.tenant = %(tenant)s AND um.topic_id = t.topic_id AND e.user_id = %(user_id)s))
ORDER BY a.importance DESC, t.topic_id
LIMIT %(limit)s

-- name: topic
SELECT topic_id, project_id, label, keywords, parent_ids FROM topics
WHERE tenant = %(tenant)s AND topic_id = %(topic_id)s

-- name: members
SELECT s.node_id, s.session_id, s.title, s.event_ids, s.start_ts, s.end_ts
FROM topic_members m
JOIN topic_segments s ON s.tenant = m.tenant AND s.node_id = m.node_id
WHERE m.tenant = %(tenant)s AND m.topic_id = %(topic_id)s
ORDER BY s.start_ts, s.node_id
LIMIT %(limit)s

-- name: related
SELECT e.other_id AS topic_id, t.label, e.weight
FROM topic_edges e
JOIN topics t ON t.tenant = e.tenant AND t.topic_id = e.other_id
WHERE e.tenant = %(tenant)s AND e.topic_id = %(topic_id)s
ORDER BY e.weight DESC, e.other_id

-- name: topic_digest
-- All the scope's row versions in one figure (centroids.py): unchanged rows, the same figure
SELECT count(*) AS topics,
       coalesce(sum(hashtextextended(t.topic_id || '@' || t.xmin::text || '@'
                                     || t.updated_at::text, 0)), 0)::text AS digest
FROM topics t
WHERE t.tenant = %(tenant)s AND (%(project_id)s::text IS NULL OR t.project_id = %(project_id)s)

-- name: topic_versions
-- The scope's topics and their row versions (centroids.py): xmin changes with every write
SELECT t.topic_id, t.xmin::text || '@' || t.updated_at::text AS version FROM topics t
WHERE t.tenant = %(tenant)s AND (%(project_id)s::text IS NULL OR t.project_id = %(project_id)s)

-- name: topic_rows
SELECT t.topic_id, t.xmin::text || '@' || t.updated_at::text AS version, t.label, t.keywords,
       t.centroid
FROM topics t
WHERE t.tenant = %(tenant)s AND t.topic_id = ANY(%(ids)s)

-- name: user_topic_ids
-- The user filter (store.py): a member segment holds an event of the user
SELECT t.topic_id FROM topics t
WHERE t.tenant = %(tenant)s AND (%(project_id)s::text IS NULL OR t.project_id = %(project_id)s)
  AND EXISTS (
      SELECT 1
      FROM topic_members um
      JOIN topic_segments us ON us.tenant = um.tenant AND us.node_id = um.node_id
      JOIN events e ON e.tenant = us.tenant AND e.event_id = ANY(us.event_ids)
      WHERE um.tenant = t.tenant AND um.topic_id = t.topic_id AND e.user_id = %(user_id)s)
