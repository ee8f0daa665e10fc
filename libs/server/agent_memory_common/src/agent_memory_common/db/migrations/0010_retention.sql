-- Retention of the search indexes (issue 15): per-project overrides of the retention matrix, and
-- the record of every index entry the pruner removed, so that `admin rebuild-index` and a
-- redelivered message do not bring a pruned entry back. Events and TOC nodes are never pruned:
-- only their entries in the vector and BM25 indexes (and an episode's "similar" entry).

CREATE TABLE retention_policies (
    tenant     text        NOT NULL,
    project_id text        NOT NULL,
    -- {"vector": {"segment": "30d", ...}, "bm25": {...}}: only the cells that differ from the
    -- defaults of agent_memory_retrieval.retention; a duration ('30d', '26w', '5y') or 'forever'.
    overrides  jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, project_id)
);

CREATE TABLE index_pruned (
    tenant     text        NOT NULL,
    -- 'vector', 'bm25', or 'episodes' (an episode no longer matched by "similar")
    index_name text        NOT NULL CHECK (index_name IN ('vector', 'bm25', 'episodes')),
    -- the index document id (event:<tenant>:<event_id>, node:..., grip:...) or the episode id
    doc_id     text        NOT NULL,
    project_id text        NOT NULL,
    level      text        NOT NULL,
    ts         timestamptz NOT NULL,
    -- 'retention' (older than the matrix keeps) or 'value' (an episode below the value score)
    reason     text        NOT NULL,
    pruned_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, index_name, doc_id)
);

CREATE INDEX index_pruned_project ON index_pruned (tenant, project_id, index_name, level);
