-- name: segment_version
SELECT node_version, salience FROM topic_segments
WHERE tenant = %(tenant)s AND node_id = %(node_id)s

-- name: set_salience
UPDATE topic_segments SET salience = %(salience)s, updated_at = now()
WHERE tenant = %(tenant)s AND node_id = %(node_id)s

-- name: upsert_segment
INSERT INTO topic_segments (
    tenant, node_id, project_id, node_version, session_id, title, text, event_ids, salience,
    start_ts, end_ts, embedding, pending
) VALUES (
    %(tenant)s, %(node_id)s, %(project_id)s, %(node_version)s, %(session_id)s, %(title)s,
    %(text)s, %(event_ids)s, %(salience)s, %(start_ts)s, %(end_ts)s, %(embedding)s, true
)
ON CONFLICT (tenant, node_id) DO UPDATE SET
    project_id = EXCLUDED.project_id, node_version = EXCLUDED.node_version,
    session_id = EXCLUDED.session_id, title = EXCLUDED.title, text = EXCLUDED.text,
    event_ids = EXCLUDED.event_ids, salience = EXCLUDED.salience,
    start_ts = EXCLUDED.start_ts, end_ts = EXCLUDED.end_ts, embedding = EXCLUDED.embedding,
    pending = true, updated_at = now()

-- name: delete_segment
-- A retracted segment leaves the material and its topic (membership first: no dangling row).
WITH gone AS (
    DELETE FROM topic_members WHERE tenant = %(tenant)s AND node_id = %(node_id)s
)
DELETE FROM topic_segments WHERE tenant = %(tenant)s AND node_id = %(node_id)s

-- name: project_centroids
SELECT topic_id, centroid FROM topics
WHERE tenant = %(tenant)s AND project_id = %(project_id)s
ORDER BY topic_id

-- name: assign_member
INSERT INTO topic_members (tenant, node_id, topic_id, project_id, assigned_by, similarity)
VALUES (%(tenant)s, %(node_id)s, %(topic_id)s, %(project_id)s, %(assigned_by)s, %(similarity)s)
ON CONFLICT (tenant, node_id) DO UPDATE SET
    topic_id = EXCLUDED.topic_id, project_id = EXCLUDED.project_id,
    assigned_by = EXCLUDED.assigned_by, similarity = EXCLUDED.similarity

-- name: unassign_member
DELETE FROM topic_members WHERE tenant = %(tenant)s AND node_id = %(node_id)s

-- name: touch_project
INSERT INTO topic_projects (tenant, project_id) VALUES (%(tenant)s, %(project_id)s)
ON CONFLICT (tenant, project_id) DO NOTHING

-- name: due_projects
-- Projects whose new material since the last full re-cluster is enough (an absolute count and
-- a share of the size then), or which have anything new and were last clustered too long ago.
SELECT p.tenant, p.project_id, count(s.node_id) FILTER (WHERE s.pending) AS pending,
       count(s.node_id) AS size
FROM topic_projects p
JOIN topic_segments s ON s.tenant = p.tenant AND s.project_id = p.project_id
GROUP BY p.tenant, p.project_id, p.clustered_at, p.clustered_size
HAVING count(s.node_id) FILTER (WHERE s.pending) > 0 AND (
    count(s.node_id) FILTER (WHERE s.pending)
        >= greatest(%(min_new)s, %(share)s * p.clustered_size)
    OR p.clustered_at IS NULL AND count(s.node_id) >= %(min_new)s
    OR p.clustered_at < now() - make_interval(secs => %(every_s)s)
)
ORDER BY p.tenant, p.project_id

-- name: all_projects
SELECT DISTINCT tenant, project_id FROM topic_segments
WHERE (%(tenant)s::text IS NULL OR tenant = %(tenant)s)
  AND (%(project_id)s::text IS NULL OR project_id = %(project_id)s)
ORDER BY tenant, project_id

-- name: lock_project
-- Transaction-scoped: one re-cluster of a project at a time, across replicas.
SELECT pg_advisory_xact_lock(hashtextextended(%(tenant)s || '/' || %(project_id)s, 7))

-- name: material
SELECT node_id, session_id, text, embedding, start_ts, end_ts, updated_at FROM topic_segments
WHERE tenant = %(tenant)s AND project_id = %(project_id)s
ORDER BY node_id

-- name: old_members
SELECT m.topic_id, m.node_id FROM topic_members m
WHERE m.tenant = %(tenant)s AND m.project_id = %(project_id)s

-- name: drop_topics_except
DELETE FROM topics
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND NOT topic_id = ANY(%(keep)s)

-- name: upsert_topic
INSERT INTO topics (tenant, topic_id, project_id, label, keywords, centroid, parent_ids)
VALUES (%(tenant)s, %(topic_id)s, %(project_id)s, %(label)s, %(keywords)s, %(centroid)s,
        %(parent_ids)s)
ON CONFLICT (tenant, topic_id) DO UPDATE SET
    label = EXCLUDED.label, keywords = EXCLUDED.keywords, centroid = EXCLUDED.centroid,
    parent_ids = ARRAY(SELECT DISTINCT unnest(topics.parent_ids || EXCLUDED.parent_ids)),
    updated_at = now()

-- name: clear_members
DELETE FROM topic_members WHERE tenant = %(tenant)s AND project_id = %(project_id)s

-- name: insert_member
INSERT INTO topic_members (tenant, node_id, topic_id, project_id, assigned_by, similarity)
VALUES (%(tenant)s, %(node_id)s, %(topic_id)s, %(project_id)s, %(assigned_by)s, %(similarity)s)

-- name: clear_edges
DELETE FROM topic_edges e USING topics t
WHERE e.tenant = t.tenant AND e.topic_id = t.topic_id
  AND t.tenant = %(tenant)s AND t.project_id = %(project_id)s

-- name: insert_edge
INSERT INTO topic_edges (tenant, topic_id, other_id, weight)
VALUES (%(tenant)s, %(topic_id)s, %(other_id)s, %(weight)s)

-- name: mark_clustered
-- Only the rows this re-cluster read, as it read them: a segment whose row was committed (or
-- rewritten) after the read stays pending for the next one. (Clearing every pending row of the
-- project marked a theme that arrived during a re-cluster as clustered, and it never was.)
WITH seen AS (
    UPDATE topic_segments s SET pending = false
    FROM unnest(%(node_ids)s::text[], %(read_at)s::timestamptz[]) AS r(node_id, updated_at)
    WHERE s.tenant = %(tenant)s AND s.project_id = %(project_id)s AND s.pending
      AND s.node_id = r.node_id AND s.updated_at = r.updated_at
)
INSERT INTO topic_projects (tenant, project_id, clustered_at, clustered_size)
VALUES (%(tenant)s, %(project_id)s, now(), %(size)s)
ON CONFLICT (tenant, project_id) DO UPDATE SET
    clustered_at = EXCLUDED.clustered_at, clustered_size = EXCLUDED.clustered_size

-- name: latest_segments
-- The table of contents' segments as they read now (rebuild-topics).
SELECT v.tenant, v.node_id, v.project_id, v.version, v.session_id, v.title, v.bullets,
       v.event_ids, v.base_salience, n.pinned, v.start_ts, v.end_ts
FROM toc_nodes n
JOIN toc_node_versions v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE n.level = 'segment' AND NOT n.is_empty
  AND (%(tenant)s::text IS NULL OR n.tenant = %(tenant)s)
  AND (%(project_id)s::text IS NULL OR n.project_id = %(project_id)s)
ORDER BY v.tenant, v.node_id

-- name: orphans
-- Material whose segment is gone or empty in the TOC (rebuild-topics removes it).
SELECT s.tenant, s.node_id FROM topic_segments s
LEFT JOIN toc_nodes n ON n.tenant = s.tenant AND n.node_id = s.node_id
WHERE (n.node_id IS NULL OR n.is_empty)
  AND (%(tenant)s::text IS NULL OR s.tenant = %(tenant)s)
  AND (%(project_id)s::text IS NULL OR s.project_id = %(project_id)s)
