-- "What did we do on <date> / last week": the period's TOC nodes (period.py).

-- name: period_nodes
-- Latest versions of the nodes of the wanted levels inside the period (a segment: starting
-- in it), with their provenance: a segment's events, a rollup's cited grips' events.
SELECT n.node_id, n.project_id, n.level, n.start_ts, n.end_ts, v.title, v.bullets,
       v.memory_kind, v.base_salience, n.pinned,
       coalesce(v.session_id, '') AS session_id, coalesce(v.agent_id, '') AS agent_id,
       coalesce(
           v.event_ids[coalesce(v.overlap_count, 0) + 1:],
           ARRAY(
               SELECT DISTINCT e
               FROM jsonb_array_elements(v.bullets) AS b,
                    jsonb_array_elements_text(b -> 'grip_ids') AS gid,
                    toc_grips g,
                    unnest(g.event_ids) AS e
               WHERE g.tenant = n.tenant AND g.grip_id = gid
           )
       ) AS event_ids
FROM toc_nodes n
JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE n.tenant = %(tenant)s
  AND NOT n.is_empty
  AND (%(project_id)s::text IS NULL OR n.project_id = %(project_id)s)
  AND n.level = ANY(%(levels)s::text[])
  AND n.start_ts >= %(since)s AND n.start_ts < %(until)s
  AND (n.level = 'segment' OR n.end_ts <= %(until)s)
-- each level in time order; newest first for "where did we leave off?" (the limit then keeps
-- the segments the day ended with)
ORDER BY array_position(%(levels)s::text[], n.level),
         CASE WHEN %(newest_first)s THEN n.start_ts END DESC,
         n.start_ts, n.node_id
LIMIT %(limit)s

-- name: last_worked_day
-- "Where did we leave off?": the day of the newest segment of work in scope begun before the
-- caller's now (a session that just began has no segment yet, so it is not the answer), with
-- that day's TOC bounds when its day node exists; the caller takes the calendar day otherwise.
WITH last AS (
    SELECT n.start_ts
    FROM toc_nodes n
    WHERE n.tenant = %(tenant)s
      AND (%(project_id)s::text IS NULL OR n.project_id = %(project_id)s)
      AND n.level = 'segment'
      AND NOT n.is_empty
      AND n.start_ts < %(now)s
    ORDER BY n.start_ts DESC
    LIMIT 1
)
SELECT last.start_ts AS last_ts, d.start_ts AS day_start, d.end_ts AS day_end
FROM last
LEFT JOIN LATERAL (
    SELECT start_ts, end_ts
    FROM toc_nodes d
    WHERE d.tenant = %(tenant)s
      AND (%(project_id)s::text IS NULL OR d.project_id = %(project_id)s)
      AND d.level = 'day'
      AND d.start_ts <= last.start_ts AND d.end_ts > last.start_ts
    ORDER BY d.start_ts DESC
    LIMIT 1
) d ON true
