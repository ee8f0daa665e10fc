-- The table of contents (migration 0003, written by the summarizer). Reads only, except pins.
-- A node reads as its latest version; the pin lives on toc_nodes and adds 0.20 to salience.

-- name: years
SELECT n.node_id, n.project_id, n.level, n.bucket, n.parent_id, n.pinned, n.latest_version,
       v.version, v.title, v.keywords, v.memory_kind, v.base_salience, v.start_ts, v.end_ts,
       cardinality(v.child_ids) AS child_count
FROM toc_nodes n
JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE n.tenant = %(tenant)s AND n.level = 'year' AND NOT n.is_empty
  AND (%(project_id)s::text IS NULL OR n.project_id = %(project_id)s)
  -- the user filter (store.py, "By user"): a segment below holds an event of the user
  -- (migration 0018)
  AND (%(user_id)s::text IS NULL OR toc_node_has_user(n.tenant, n.node_id, %(user_id)s))
ORDER BY n.project_id, n.start_ts DESC
LIMIT %(limit)s

-- name: node_version
-- One version (the latest when version is NULL).
SELECT n.node_id, n.project_id, n.level, n.bucket, n.pinned, n.latest_version, n.is_empty,
       v.version, v.parent_id, v.title, v.bullets, v.keywords, v.memory_kind, v.base_salience,
       v.child_ids, v.start_ts, v.end_ts, v.session_id, v.agent_id, v.event_ids,
       v.overlap_count, v.source_version, v.summarizer, v.created_at,
       cardinality(v.child_ids) AS child_count,
       -- who wrote a segment (docs/team.md): the users of its events, sorted
       CASE WHEN n.level = 'segment' THEN (
           SELECT coalesce(array_agg(DISTINCT e.user_id ORDER BY e.user_id), '{}')
           FROM events e
           WHERE e.tenant = n.tenant AND e.event_id = ANY(v.event_ids) AND e.user_id IS NOT NULL
       ) END AS user_ids
FROM toc_nodes n
JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id
 AND v.version = coalesce(%(version)s, n.latest_version)
WHERE n.tenant = %(tenant)s AND n.node_id = %(node_id)s

-- name: subtree_attribution
-- Who a calendar node came from: the agents and users of the events of the segments below it
-- (the current tree, latest versions); see store.py, "By user", for the cost.
WITH RECURSIVE below AS (
    SELECT %(node_id)s::text AS node_id
    UNION ALL
    SELECT c.node_id FROM toc_nodes c JOIN below b ON c.parent_id = b.node_id
    WHERE c.tenant = %(tenant)s
),
segments AS (
    SELECT sv.agent_id, sv.event_ids
    FROM below b
    JOIN toc_nodes s ON s.tenant = %(tenant)s AND s.node_id = b.node_id AND s.level = 'segment'
                    AND NOT s.is_empty
    JOIN toc_node_versions sv
      ON sv.tenant = s.tenant AND sv.node_id = s.node_id AND sv.version = s.latest_version
)
SELECT (SELECT coalesce(array_agg(DISTINCT agent_id ORDER BY agent_id), '{}')
        FROM segments WHERE agent_id IS NOT NULL) AS agent_ids,
       (SELECT coalesce(array_agg(DISTINCT e.user_id ORDER BY e.user_id), '{}')
        FROM segments g
        JOIN events e ON e.tenant = %(tenant)s AND e.event_id = ANY(g.event_ids)
        WHERE e.user_id IS NOT NULL) AS user_ids

-- name: node_exists
SELECT latest_version FROM toc_nodes WHERE tenant = %(tenant)s AND node_id = %(node_id)s

-- name: latest_summaries
-- Latest versions of the given nodes, in time order (children of a node).
SELECT n.node_id, n.project_id, n.level, n.bucket, n.parent_id, n.pinned, n.latest_version,
       n.is_empty, v.version, v.title, v.keywords, v.memory_kind, v.base_salience, v.start_ts,
       v.end_ts, cardinality(v.child_ids) AS child_count,
       cardinality(v.event_ids) AS event_count
FROM toc_nodes n
JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE n.tenant = %(tenant)s AND n.node_id = ANY(%(node_ids)s)
  -- the user filter, as in years
  AND (%(user_id)s::text IS NULL OR toc_node_has_user(n.tenant, n.node_id, %(user_id)s))
ORDER BY n.start_ts, n.node_id

-- name: grips_by_id
SELECT grip_id, project_id, node_id, node_version, bullet_index, event_ids, excerpt,
       memory_kind, base_salience, pinned, salience, created_at
FROM toc_grips
WHERE tenant = %(tenant)s AND grip_id = ANY(%(grip_ids)s)

-- name: events_by_id
SELECT seq, event_id, ts, project_id, agent_id, session_id, user_id, role, type, text, metadata
FROM events
WHERE tenant = %(tenant)s AND event_id = ANY(%(event_ids)s)
ORDER BY ts, seq

-- name: events_before
-- Context before a grip: the same session's previous events, nearest first.
SELECT seq, event_id, ts, project_id, agent_id, session_id, user_id, role, type, text, metadata
FROM events
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND session_id = %(session_id)s
  AND (ts, seq) < (%(ts)s, %(seq)s)
ORDER BY ts DESC, seq DESC
LIMIT %(limit)s

-- name: events_after
SELECT seq, event_id, ts, project_id, agent_id, session_id, user_id, role, type, text, metadata
FROM events
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND session_id = %(session_id)s
  AND (ts, seq) > (%(ts)s, %(seq)s)
ORDER BY ts, seq
LIMIT %(limit)s

-- name: segment_at
-- The segment holding an instant: the latest-starting one whose span contains it.
SELECT n.node_id
FROM toc_nodes n
WHERE n.tenant = %(tenant)s AND n.project_id = %(project_id)s AND n.level = 'segment'
  AND NOT n.is_empty AND n.start_ts <= %(ts)s AND n.end_ts >= %(ts)s
ORDER BY n.start_ts DESC, n.node_id
LIMIT 1

-- name: calendar_at
-- The calendar nodes whose range holds an instant, when no segment does.
SELECT n.node_id
FROM toc_nodes n
WHERE n.tenant = %(tenant)s AND n.project_id = %(project_id)s AND n.level <> 'segment'
  AND NOT n.is_empty AND n.latest_version > 0 AND n.start_ts <= %(ts)s AND n.end_ts > %(ts)s
ORDER BY array_position(ARRAY['year', 'month', 'week', 'day'], n.level)

-- name: parent_of
SELECT parent_id FROM toc_nodes WHERE tenant = %(tenant)s AND node_id = %(node_id)s

-- name: search
-- Index-free: the latest version of every node in scope, scored in the database (a term
-- counts where it starts a word): 3 per term in the key phrases, 2 in the title, 1 per bullet
-- holding it, plus half the salience, plus half the share of the terms found. The LIKE
-- pre-filter on the lower-cased text drops most nodes before any regular expression runs.
-- The nodes (toc/store.py): toc_nodes, or only the tenant's newest nodes (the brainstem's
-- fallback when BM25 answered), each version then fetched by its key instead of every
-- version's text scanned.
WITH RECURSIVE subtree AS (
    SELECT node_id FROM toc_nodes WHERE tenant = %(tenant)s AND node_id = %(root)s
    UNION ALL
    SELECT c.node_id FROM toc_nodes c JOIN subtree s ON c.parent_id = s.node_id
    WHERE c.tenant = %(tenant)s
),
candidates AS (
    SELECT n.node_id, n.project_id, n.level, n.bucket, n.parent_id, n.pinned,
           n.latest_version, v.version, v.title, v.bullets, v.keywords, v.memory_kind,
           v.base_salience, v.start_ts, v.end_ts, cardinality(v.child_ids) AS child_count
    FROM {nodes} n
    JOIN toc_node_versions v
      ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
    WHERE n.tenant = %(tenant)s AND NOT n.is_empty
      AND (%(project_id)s::text IS NULL OR n.project_id = %(project_id)s)
      AND (%(root)s::text IS NULL OR n.node_id IN (SELECT node_id FROM subtree))
      AND (%(since)s::timestamptz IS NULL OR n.end_ts > %(since)s)
      AND (%(until)s::timestamptz IS NULL OR n.start_ts < %(until)s)
      AND (%(levels)s::text[] IS NULL OR n.level = ANY(%(levels)s))
      AND v.search_text LIKE ANY(%(patterns)s)
),
scored AS (
    SELECT c.*, s.in_keywords, s.in_title, s.in_bullets, s.matched
    FROM candidates c
    CROSS JOIN LATERAL (
        SELECT sum(kw) AS in_keywords, sum(ti) AS in_title, sum(bu) AS in_bullets,
               sum(CASE WHEN kw + ti + bu > 0 THEN 1 ELSE 0 END) AS matched
        FROM (
            SELECT (array_to_string(c.keywords, ' ') ~* ('\m' || t))::int AS kw,
                   (c.title ~* ('\m' || t))::int AS ti,
                   (SELECT count(*) FROM jsonb_array_elements(c.bullets) b
                    WHERE b ->> 'text' ~* ('\m' || t))::int AS bu
            FROM unnest(%(terms)s::text[]) AS t
        ) per_term
    ) s
)
SELECT node_id, project_id, level, bucket, parent_id, pinned, latest_version, version, title,
       bullets, keywords, memory_kind, base_salience, start_ts, end_ts, child_count,
       round((3 * in_keywords + 2 * in_title + in_bullets
              + 0.5 * (base_salience + CASE WHEN pinned THEN 0.2 ELSE 0 END)
              + 0.5 * matched / cardinality(%(terms)s::text[]))::numeric, 4)::float8 AS score
FROM scored n
WHERE matched > 0
  -- the user filter, as in years (on the matching nodes only)
  AND (%(user_id)s::text IS NULL OR toc_node_has_user(%(tenant)s, n.node_id, %(user_id)s))
ORDER BY score DESC, start_ts DESC, node_id
LIMIT %(limit)s

-- name: pin_grip
UPDATE toc_grips SET pinned = %(pinned)s
WHERE tenant = %(tenant)s AND grip_id = %(memory_id)s
RETURNING pinned, salience, node_id, node_version AS version, project_id

-- name: pin_node
WITH updated AS (
    UPDATE toc_nodes SET pinned = %(pinned)s, updated_at = now()
    WHERE tenant = %(tenant)s AND node_id = %(memory_id)s
    RETURNING tenant, node_id, pinned, latest_version, project_id
)
SELECT u.pinned, v.base_salience, u.node_id, u.latest_version AS version, u.project_id
FROM updated u
LEFT JOIN toc_node_versions v
  ON v.tenant = u.tenant AND v.node_id = u.node_id AND v.version = u.latest_version
