-- name: events_by_id
SELECT event_id, ts, role, type, text
FROM events
WHERE tenant = %(tenant)s AND event_id = ANY(%(event_ids)s)

-- name: lock_project
-- Transaction-scoped: released by the commit (or the rollback of a crashed transaction).
SELECT pg_advisory_xact_lock(%(lock_class)s, %(lock_key)s)

-- name: pointer
-- A node's pointer row, with the children its latest version was made from.
SELECT n.node_id, n.project_id, n.level, n.bucket, n.parent_id, n.start_ts, n.end_ts,
       n.latest_version, n.source_version, n.is_empty, v.child_ids, v.child_versions
FROM toc_nodes n
LEFT JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE n.tenant = %(tenant)s AND n.node_id = %(node_id)s

-- name: source_version
SELECT source_version FROM toc_nodes WHERE tenant = %(tenant)s AND node_id = %(node_id)s

-- name: insert_pointer
INSERT INTO toc_nodes (
    tenant, node_id, project_id, level, bucket, parent_id, start_ts, end_ts, latest_version
) VALUES (
    %(tenant)s, %(node_id)s, %(project_id)s, %(level)s, %(bucket)s, %(parent_id)s,
    %(start_ts)s, %(end_ts)s, 0
)
ON CONFLICT (tenant, node_id) DO NOTHING

-- name: update_pointer
UPDATE toc_nodes
SET latest_version = %(version)s,
    source_version = %(source_version)s,
    parent_id = %(parent_id)s,
    start_ts = %(start_ts)s,
    end_ts = %(end_ts)s,
    is_empty = %(is_empty)s,
    updated_at = now()
WHERE tenant = %(tenant)s AND node_id = %(node_id)s

-- name: insert_version
INSERT INTO toc_node_versions (
    tenant, node_id, version, project_id, level, bucket, parent_id, title, bullets, keywords,
    memory_kind, base_salience, child_ids, child_versions, start_ts, end_ts, session_id,
    agent_id, event_ids, overlap_count, source_version, cause, summarizer, search_text
) VALUES (
    %(tenant)s, %(node_id)s, %(version)s, %(project_id)s, %(level)s, %(bucket)s, %(parent_id)s,
    %(title)s, %(bullets)s::jsonb, %(keywords)s, %(memory_kind)s, %(base_salience)s,
    %(child_ids)s, %(child_versions)s, %(start_ts)s, %(end_ts)s, %(session_id)s, %(agent_id)s,
    %(event_ids)s, %(overlap_count)s, %(source_version)s, %(cause)s, %(summarizer)s,
    %(search_text)s
)

-- name: insert_grip
INSERT INTO toc_grips (
    tenant, grip_id, project_id, node_id, node_version, bullet_index, event_ids, excerpt,
    memory_kind, base_salience
) VALUES (
    %(tenant)s, %(grip_id)s, %(project_id)s, %(node_id)s, %(node_version)s, %(bullet_index)s,
    %(event_ids)s, %(excerpt)s, %(memory_kind)s, %(base_salience)s
)
ON CONFLICT (tenant, grip_id) DO NOTHING

-- name: children_latest
-- A rollup's input: the latest version of every non-empty child, in time order.
SELECT v.node_id, v.version, v.title, v.keywords, v.bullets
FROM toc_nodes n
JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE n.tenant = %(tenant)s AND n.parent_id = %(node_id)s AND NOT n.is_empty
ORDER BY n.start_ts, n.node_id

-- name: versions_by_cause
SELECT tenant, node_id, version, project_id, level, bucket, parent_id, title, bullets,
       keywords, memory_kind, base_salience, child_ids, start_ts, end_ts, session_id, agent_id,
       event_ids, overlap_count, source_version, cause, summarizer, created_at
FROM toc_node_versions
WHERE tenant = %(tenant)s AND cause = %(cause)s
ORDER BY array_position(ARRAY['segment', 'day', 'week', 'month', 'year'], level), node_id

-- name: version_row
SELECT tenant, node_id, version, project_id, level, bucket, parent_id, title, bullets,
       keywords, memory_kind, base_salience, child_ids, start_ts, end_ts, session_id, agent_id,
       event_ids, overlap_count, source_version, cause, summarizer, created_at
FROM toc_node_versions
WHERE tenant = %(tenant)s AND node_id = %(node_id)s AND version = %(version)s

-- name: grips_by_id
SELECT grip_id, node_id, node_version, bullet_index, event_ids, excerpt, memory_kind,
       base_salience, pinned, salience
FROM toc_grips
WHERE tenant = %(tenant)s AND grip_id = ANY(%(grip_ids)s)

-- name: pinned_nodes
SELECT node_id FROM toc_nodes
WHERE tenant = %(tenant)s AND node_id = ANY(%(node_ids)s) AND pinned

-- name: llm_tokens_used
SELECT tokens FROM summarizer_llm_usage
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND day = %(day)s

-- name: llm_tokens_add
INSERT INTO summarizer_llm_usage (tenant, project_id, day, tokens)
VALUES (%(tenant)s, %(project_id)s, %(day)s, %(tokens)s)
ON CONFLICT (tenant, project_id, day) DO UPDATE
SET tokens = summarizer_llm_usage.tokens + EXCLUDED.tokens

-- name: erased_segment_versions
-- Segment node versions that summarized an erased event.
SELECT v.node_id, v.version
FROM toc_node_versions v
WHERE v.tenant = %(tenant)s AND v.project_id = %(project_id)s AND v.level = 'segment'
  AND EXISTS (
      SELECT 1 FROM unnest(v.event_ids) AS u (event_id)
      JOIN erased_events x ON x.tenant = v.tenant AND x.event_id = u.event_id
      WHERE x.erasure_id = %(erasure_id)s
  )

-- name: rollups_of_versions
-- Rollup versions made from any of the given child versions (and so maybe from their text).
SELECT v.node_id, v.version
FROM toc_node_versions v
WHERE v.tenant = %(tenant)s AND v.project_id = %(project_id)s AND v.level <> 'segment'
  AND EXISTS (
      SELECT 1 FROM unnest(v.child_ids, v.child_versions) AS c (node_id, version)
      JOIN unnest(%(node_ids)s::text[], %(versions)s::int[]) AS d (node_id, version)
        ON d.node_id = c.node_id AND d.version = c.version
  )

-- name: project_latest
SELECT node_id, latest_version FROM toc_nodes
WHERE tenant = %(tenant)s AND project_id = %(project_id)s

-- name: delete_versions
DELETE FROM toc_node_versions v
USING unnest(%(node_ids)s::text[], %(versions)s::int[]) AS d (node_id, version)
WHERE v.tenant = %(tenant)s AND v.node_id = d.node_id AND v.version = d.version

-- name: delete_erased_grips
DELETE FROM toc_grips g
WHERE g.tenant = %(tenant)s AND g.project_id = %(project_id)s
  AND EXISTS (
      SELECT 1 FROM unnest(g.event_ids) AS u (event_id)
      JOIN erased_events x ON x.tenant = g.tenant AND x.event_id = u.event_id
      WHERE x.erasure_id = %(erasure_id)s
  )

-- name: delete_erased_statements
-- The rule sentences kept for supersession are text of the erased events: they go too.
DELETE FROM memory_statements s
USING erased_events x
WHERE s.tenant = %(tenant)s AND x.tenant = s.tenant AND x.event_id = s.event_id
  AND x.erasure_id = %(erasure_id)s

-- name: delete_erased_supersessions
-- A link with an erased side (its note may quote the erased text) is removed.
DELETE FROM memory_supersessions m
USING erased_events x
WHERE m.tenant = %(tenant)s AND x.tenant = m.tenant AND x.erasure_id = %(erasure_id)s
  AND x.event_id IN (m.older_event_id, m.newer_event_id)
