-- The pruner's reads and its record (cleanup.py). Candidates are read from the system of record
-- (events, TOC nodes, grips, episodes): index document ids are deterministic, so what an index
-- holds for a row is known without asking the engine, and one query serves every adapter.

-- name: projects
SELECT DISTINCT tenant, project_id FROM events
WHERE (%(tenant)s::text IS NULL OR tenant = %(tenant)s::text)
  AND (%(project_id)s::text IS NULL OR project_id = %(project_id)s::text)
UNION
SELECT tenant, project_id FROM episodes
WHERE (%(tenant)s::text IS NULL OR tenant = %(tenant)s::text)
  AND (%(project_id)s::text IS NULL OR project_id = %(project_id)s::text)
ORDER BY 1, 2

-- name: policies
SELECT tenant, project_id, overrides FROM retention_policies
WHERE (%(tenant)s::text IS NULL OR tenant = %(tenant)s::text)

-- name: event_candidates
-- Events with text (an empty one is never indexed), older than the cutoff, not pruned yet, and
-- not noted as a durable kind (retention.DURABLE_KINDS: never stale; grips the same below).
-- Paged by (ts, key) after the last page's end, so a page never rescans the rows before it.
SELECT 'event:' || e.tenant || ':' || e.event_id AS doc_id, e.ts, e.event_id AS key,
       left(e.text, 120) AS excerpt
FROM events AS e
WHERE e.tenant = %(tenant)s AND e.project_id = %(project_id)s AND e.ts < %(cutoff)s
  AND (e.ts, e.event_id) > (%(after_ts)s::timestamptz, %(after_key)s::text)
  AND btrim(e.text) <> ''
  AND COALESCE(e.metadata->>'memory_kind', '') <> ALL(%(durable_kinds)s::text[])
  AND NOT EXISTS (
      SELECT 1 FROM index_pruned AS p
      WHERE p.tenant = e.tenant AND p.index_name = %(index_name)s
        AND p.doc_id = 'event:' || e.tenant || ':' || e.event_id)
ORDER BY e.ts, e.event_id
LIMIT %(limit)s

-- name: event_count
SELECT count(*)
FROM events AS e
WHERE e.tenant = %(tenant)s AND e.project_id = %(project_id)s AND e.ts < %(cutoff)s
  AND btrim(e.text) <> ''
  AND COALESCE(e.metadata->>'memory_kind', '') <> ALL(%(durable_kinds)s::text[])
  AND NOT EXISTS (
      SELECT 1 FROM index_pruned AS p
      WHERE p.tenant = e.tenant AND p.index_name = %(index_name)s
        AND p.doc_id = 'event:' || e.tenant || ':' || e.event_id)

-- name: node_candidates
-- TOC nodes with content at one level. A node changed since it was pruned (a new version or a
-- pin, which the indexers index again) is a candidate again.
SELECT 'node:' || n.tenant || ':' || n.node_id AS doc_id, n.start_ts AS ts, n.node_id AS key,
       left(v.title, 120) AS excerpt
FROM toc_nodes AS n
JOIN toc_node_versions AS v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE n.tenant = %(tenant)s AND n.project_id = %(project_id)s AND n.level = %(level)s
  AND n.start_ts < %(cutoff)s AND n.latest_version > 0 AND NOT n.is_empty
  AND (n.start_ts, n.node_id) > (%(after_ts)s::timestamptz, %(after_key)s::text)
  AND NOT EXISTS (
      SELECT 1 FROM index_pruned AS p
      WHERE p.tenant = n.tenant AND p.index_name = %(index_name)s
        AND p.doc_id = 'node:' || n.tenant || ':' || n.node_id AND p.pruned_at >= n.updated_at)
ORDER BY n.start_ts, n.node_id
LIMIT %(limit)s

-- name: node_count
SELECT count(*)
FROM toc_nodes AS n
WHERE n.tenant = %(tenant)s AND n.project_id = %(project_id)s AND n.level = %(level)s
  AND n.start_ts < %(cutoff)s AND n.latest_version > 0 AND NOT n.is_empty
  AND NOT EXISTS (
      SELECT 1 FROM index_pruned AS p
      WHERE p.tenant = n.tenant AND p.index_name = %(index_name)s
        AND p.doc_id = 'node:' || n.tenant || ':' || n.node_id AND p.pruned_at >= n.updated_at)

-- name: grip_candidates
-- A grip's time is the start of the segment version that made it, as its index document's.
SELECT 'grip:' || g.tenant || ':' || g.grip_id AS doc_id, v.start_ts AS ts, g.grip_id AS key,
       left(g.excerpt, 120) AS excerpt
FROM toc_grips AS g
JOIN toc_node_versions AS v
  ON v.tenant = g.tenant AND v.node_id = g.node_id AND v.version = g.node_version
WHERE g.tenant = %(tenant)s AND g.project_id = %(project_id)s AND v.start_ts < %(cutoff)s
  AND (v.start_ts, g.grip_id) > (%(after_ts)s::timestamptz, %(after_key)s::text)
  AND g.memory_kind <> ALL(%(durable_kinds)s::text[])
  AND NOT EXISTS (
      SELECT 1 FROM index_pruned AS p
      WHERE p.tenant = g.tenant AND p.index_name = %(index_name)s
        AND p.doc_id = 'grip:' || g.tenant || ':' || g.grip_id)
ORDER BY v.start_ts, g.grip_id
LIMIT %(limit)s

-- name: grip_count
SELECT count(*)
FROM toc_grips AS g
JOIN toc_node_versions AS v
  ON v.tenant = g.tenant AND v.node_id = g.node_id AND v.version = g.node_version
WHERE g.tenant = %(tenant)s AND g.project_id = %(project_id)s AND v.start_ts < %(cutoff)s
  AND g.memory_kind <> ALL(%(durable_kinds)s::text[])
  AND NOT EXISTS (
      SELECT 1 FROM index_pruned AS p
      WHERE p.tenant = g.tenant AND p.index_name = %(index_name)s
        AND p.doc_id = 'grip:' || g.tenant || ':' || g.grip_id)

-- name: episode_candidates
-- Finished episodes still matched by "similar" whose value score (retention.EpisodeValueRule)
-- is below the threshold: value x outcome weight x 0.5 ^ (age / half-life).
SELECT doc_id, ts, key, excerpt, score FROM (
    SELECT e.episode_id AS doc_id, e.completed_at AS ts, e.episode_id AS key,
           left(e.task, 120) AS excerpt,
           coalesce(e.value, 0.5)
           * CASE e.status WHEN 'success' THEN %(w_success)s WHEN 'partial' THEN %(w_partial)s
                           ELSE %(w_failure)s END
           * power(0.5, extract(epoch FROM (%(now)s - e.completed_at)) / 86400.0
                        / %(half_life_days)s) AS score
    FROM episodes AS e
    WHERE e.tenant = %(tenant)s AND e.project_id = %(project_id)s AND e.status <> 'running'
      AND e.completed_at IS NOT NULL AND e.completed_at < %(cutoff)s AND length(e.tsv) > 0
) AS scored
WHERE score < %(min_score)s AND (ts, key) > (%(after_ts)s::timestamptz, %(after_key)s::text)
ORDER BY ts, key
LIMIT %(limit)s

-- name: episode_unmatch
-- The episode stays (GET /v1/episodes/{id}); only its "similar" entry (tsv) goes.
UPDATE episodes SET tsv = ''::tsvector
WHERE tenant = %(tenant)s AND episode_id = ANY(%(ids)s::text[])

-- name: record
INSERT INTO index_pruned (tenant, index_name, doc_id, project_id, level, ts, reason)
SELECT %(tenant)s, %(index_name)s, k.doc_id, %(project_id)s, %(level)s, k.ts, %(reason)s
FROM unnest(%(doc_ids)s::text[], %(ts)s::timestamptz[]) AS k (doc_id, ts)
ON CONFLICT (tenant, index_name, doc_id)
DO UPDATE SET pruned_at = now(), reason = EXCLUDED.reason, ts = EXCLUDED.ts

-- name: pruned_among
-- Which of these documents the pruner removed from which index (rebuild-index skips them).
SELECT p.index_name, p.doc_id
FROM index_pruned AS p
JOIN unnest(%(tenants)s::text[], %(doc_ids)s::text[]) AS k (tenant, doc_id)
  ON p.tenant = k.tenant AND p.doc_id = k.doc_id
WHERE p.index_name IN ('vector', 'bm25')
