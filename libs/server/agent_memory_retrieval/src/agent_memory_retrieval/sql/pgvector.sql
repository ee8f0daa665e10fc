-- name: upsert
INSERT INTO vector_docs (
    id, tenant, type, project_id, agent_id, session_id, ts, level, kind, salience,
    title, text, event_ids, embedding
) VALUES (
    %(id)s, %(tenant)s, %(type)s, %(project_id)s, %(agent_id)s, %(session_id)s, %(ts)s,
    %(level)s, %(kind)s, %(salience)s, %(title)s, %(text)s, %(event_ids)s,
    %(embedding)s::vector
)
ON CONFLICT (id) DO UPDATE SET
    tenant = EXCLUDED.tenant, type = EXCLUDED.type, project_id = EXCLUDED.project_id,
    agent_id = EXCLUDED.agent_id, session_id = EXCLUDED.session_id, ts = EXCLUDED.ts,
    level = EXCLUDED.level, kind = EXCLUDED.kind, salience = EXCLUDED.salience,
    title = EXCLUDED.title, text = EXCLUDED.text, event_ids = EXCLUDED.event_ids,
    embedding = EXCLUDED.embedding, indexed_at = now()

-- name: delete
DELETE FROM vector_docs WHERE id = ANY(%(ids)s)

-- name: clear
DELETE FROM vector_docs

-- name: count
SELECT count(*) FROM vector_docs WHERE tenant = %(tenant)s

-- name: healthy
SELECT 1 FROM vector_docs LIMIT 1

-- name: table_rows
-- The planner's row count (kept by autovacuum): the size of the graph a search walks.
SELECT GREATEST(reltuples, 0)::bigint FROM pg_class WHERE oid = 'vector_docs'::regclass

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
    ORDER BY embedding <=> %(vec)s::vector
    LIMIT %(limit)s
) AS hits
ORDER BY distance
