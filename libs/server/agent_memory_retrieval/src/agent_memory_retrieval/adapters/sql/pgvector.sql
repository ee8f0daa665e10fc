-- name: upsert
INSERT INTO vector_docs (
    id, tenant, type, project_id, agent_id, session_id, ts, level, kind, salience,
    title, text, event_ids, embedding
) VALUES (
    %(id)s, %(tenant)s, %(type)s, %(project_id)s, %(agent_id)s, %(session_id)s, %(ts)s,
    %(level)s, %(kind)s, %(salience)s, %(title)s, %(text)s, %(event_ids)s,
    %(embedding)s::vector
)
-- the primary key holds the partition key too (migration 0020); remove_moved runs first
ON CONFLICT (id, tenant, project_id) DO UPDATE SET
    type = EXCLUDED.type,
    agent_id = EXCLUDED.agent_id, session_id = EXCLUDED.session_id, ts = EXCLUDED.ts,
    level = EXCLUDED.level, kind = EXCLUDED.kind, salience = EXCLUDED.salience,
    title = EXCLUDED.title, text = EXCLUDED.text, event_ids = EXCLUDED.event_ids,
    embedding = EXCLUDED.embedding, indexed_at = now()

-- name: remove_moved
-- A doc now under another tenant or project than its stored row: the old row is in another
-- partition, where the upsert's ON CONFLICT cannot see it, so it goes first. Ids carry their
-- tenant and a doc keeps its project, so this deletes nothing in practice; it makes sure a
-- doc is never found twice. "id = ANY" makes it one probe of each partition's primary key per
-- id (the join alone read every row of every partition: 116 ms a batch at 240,000 rows).
DELETE FROM vector_docs AS d
USING unnest(%(ids)s::text[], %(tenants)s::text[], %(projects)s::text[])
    AS n (id, tenant, project_id)
WHERE d.id = ANY(%(ids)s::text[])
  AND d.id = n.id AND (d.tenant <> n.tenant OR d.project_id <> n.project_id)

-- name: delete
DELETE FROM vector_docs WHERE id = ANY(%(ids)s)

-- name: vectors
SELECT id, embedding::text AS embedding FROM vector_docs WHERE id = ANY(%(ids)s::text[])

-- name: clear
DELETE FROM vector_docs

-- name: count
SELECT count(*) FROM vector_docs WHERE tenant = %(tenant)s

-- name: healthy
SELECT 1 FROM vector_docs LIMIT 1

-- name: graph_rows
-- The size of the graphs a search walks, from the planner's row counts (kept by autovacuum):
-- the partition that holds the project when the search names one, else every partition.
SELECT COALESCE(sum(GREATEST(c.reltuples, 0)), 0)::bigint
FROM pg_inherits AS i
JOIN pg_class AS c ON c.oid = i.inhrelid
WHERE i.inhparent = 'vector_docs'::regclass
  AND (
      %(project_id)s::text IS NULL
      OR c.oid = (
          SELECT tableoid FROM vector_docs
          WHERE tenant = %(tenant)s AND project_id = %(project_id)s::text
          LIMIT 1
      )
  )

-- name: scope_rows
-- Rows an exact search would rank, counted up to the cap: only the columns of the btree
-- indexes, so this is an index-only scan that stops at the cap.
SELECT count(*) FROM (
    SELECT 1 FROM vector_docs
    WHERE tenant = %(tenant)s
      AND (%(project_id)s::text IS NULL OR project_id = %(project_id)s::text)
      AND (%(session_id)s::text IS NULL OR session_id = %(session_id)s::text)
      AND (%(since)s::timestamptz IS NULL OR ts >= %(since)s::timestamptz)
      AND (%(until)s::timestamptz IS NULL OR ts < %(until)s::timestamptz)
    LIMIT %(cap)s
) AS scope

-- name: search_settings
SELECT set_config('hnsw.ef_search', %(ef_search)s, true),
       set_config('hnsw.iterative_scan', 'relaxed_order', true)

-- name: exact_settings
-- No index scans in this transaction: the HNSW index can only be read by one, while the
-- btree indexes still find the scope through a bitmap scan; every row found is ranked.
SELECT set_config('enable_indexscan', 'off', true)

-- name: search
-- Through the graph (search_settings) or exact (exact_settings); see pgvector_index.py.
-- relaxed_order lets the HNSW scan continue past ef_search until the filters have matched
-- enough rows; the outer ORDER BY restores the exact order of what it found.
-- The graphs hold the vectors at half precision (migration 0023): the inner ORDER BY must be
-- the graph's own expression for the planner to walk it. An exact search orders by the stored
-- float32 vectors instead (``EXACT_ORDER`` in pgvector_index.py swaps the line).
SELECT id, type, tenant, project_id, agent_id, session_id, ts, level, kind, salience,
       title, text, event_ids, distance
FROM (
    SELECT id, type, tenant, project_id, agent_id, session_id, ts, level, kind, salience,
           title, text, event_ids, embedding <=> %(vec)s::vector AS distance
    FROM vector_docs
    WHERE tenant = %(tenant)s
      AND (%(project_id)s::text IS NULL OR project_id = %(project_id)s::text)
      AND (%(agent_id)s::text IS NULL OR agent_id = %(agent_id)s::text)
      AND (%(session_id)s::text IS NULL OR session_id = %(session_id)s::text)
      AND (%(since)s::timestamptz IS NULL OR ts >= %(since)s::timestamptz)
      AND (%(until)s::timestamptz IS NULL OR ts < %(until)s::timestamptz)
      AND (%(types)s::text[] IS NULL OR type = ANY(%(types)s::text[]))
      AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
      AND (%(levels)s::text[] IS NULL OR level = ANY(%(levels)s::text[]))
    ORDER BY embedding::halfvec(384) <=> %(vec)s::halfvec(384)
    LIMIT %(limit)s
) AS hits
ORDER BY distance
