-- The pruner's reads and its record (cleanup.py). Candidates are read from the system of record
-- (events, TOC nodes, grips, episodes): index document ids are deterministic, so what an index
-- holds for a row is known without asking the engine, and one query serves every adapter.
--
-- A pruning record is trusted (its entry is not a candidate again) only while it is newer than
-- the project's retention policy (policy_set_at: retention_policies.updated_at, -infinity for
-- the defaults) and, for a node, newer than the node's last change: under an earlier matrix the
-- entry may have been written back (retention extended, then shortened again), so it is deleted
-- again (a no-op if it is gone) and recorded anew.

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

-- name: policy
-- One project's overrides and when they were set (no row: the defaults, since ever).
SELECT overrides, updated_at FROM retention_policies
WHERE tenant = %(tenant)s AND project_id = %(project_id)s

-- name: event_candidates
-- Events with text (an empty one is never indexed), older than the cutoff, not pruned under the
-- current policy (a trusted record: see the top), and not noted as a durable kind
-- (retention.DURABLE_KINDS: never stale; grips the same below).
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
        AND p.doc_id = 'event:' || e.tenant || ':' || e.event_id
        AND p.pruned_at >= %(policy_set_at)s)
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
        AND p.doc_id = 'event:' || e.tenant || ':' || e.event_id
        AND p.pruned_at >= %(policy_set_at)s)

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
        AND p.doc_id = 'node:' || n.tenant || ':' || n.node_id
        AND p.pruned_at >= n.updated_at
        AND p.pruned_at >= %(policy_set_at)s)
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
        AND p.doc_id = 'node:' || n.tenant || ':' || n.node_id
        AND p.pruned_at >= n.updated_at
        AND p.pruned_at >= %(policy_set_at)s)

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
        AND p.doc_id = 'grip:' || g.tenant || ':' || g.grip_id
        AND p.pruned_at >= %(policy_set_at)s)
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
        AND p.doc_id = 'grip:' || g.tenant || ':' || g.grip_id
        AND p.pruned_at >= %(policy_set_at)s)

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

-- name: record_words
-- The words of the events just recorded as pruned, for the descent to score them by without
-- tokenizing on every search (migration 0025): an event's first 2,000 characters (a tool's
-- output can run to many kilobytes). Each index's prune records an event: the second is a no-op.
INSERT INTO pruned_event_words (tenant, event_id, words)
SELECT e.tenant, e.event_id, to_tsvector('english', left(e.text, 2000))
FROM events AS e
WHERE e.tenant = %(tenant)s AND e.event_id = ANY(%(event_ids)s::text[])
ON CONFLICT (tenant, event_id) DO NOTHING

-- name: record_vectors
-- The vectors of the events the vector index is about to forget (float16 bytes): the descent's
-- cosine. After record_words, in the same transaction: the rows exist.
UPDATE pruned_event_words AS w SET vector = k.vector
FROM unnest(%(event_ids)s::text[], %(vectors)s::bytea[]) AS k (event_id, vector)
WHERE w.tenant = %(tenant)s AND w.event_id = k.event_id

-- name: enforced
-- Which of these projects' indexes the pruner has pruned under the project's current policy:
-- from then on every writer keeps to the matrix (cleanup.WriteGate). Served by
-- index_pruned_project; a record older than the policy is no evidence (the matrix changed).
SELECT k.tenant, k.project_id, i.index_name
FROM unnest(%(tenants)s::text[], %(project_ids)s::text[]) AS k (tenant, project_id)
CROSS JOIN unnest(ARRAY['vector', 'bm25']) AS i (index_name)
LEFT JOIN retention_policies AS r ON r.tenant = k.tenant AND r.project_id = k.project_id
WHERE EXISTS (
    SELECT 1 FROM index_pruned AS p
    WHERE p.tenant = k.tenant AND p.project_id = k.project_id AND p.index_name = i.index_name
      AND p.pruned_at >= COALESCE(r.updated_at, '-infinity'::timestamptz))

-- name: clock
-- The instant ages are measured at, from Postgres' clock for every process (the pruner and the
-- writers), so that a host's clock running ahead cannot make one prune what another keeps.
SELECT clock_timestamp()
