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
ORDER BY array_position(%(levels)s::text[], n.level), n.start_ts, n.node_id
LIMIT %(limit)s
