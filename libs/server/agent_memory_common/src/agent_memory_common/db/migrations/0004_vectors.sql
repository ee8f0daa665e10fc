-- The embedded vector index (pgvector HNSW, cosine), used when no Qdrant server is configured.
-- Derived data: `agent-memory admin rebuild-index --vector` refills it from events and the
-- table of contents. One row per index document; the id is deterministic
-- (event:<tenant>:<event_id>, grip:..., node:...), so a redelivery overwrites its row.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE vector_docs (
    id          text        PRIMARY KEY,
    tenant      text        NOT NULL,
    type        text        NOT NULL,
    project_id  text        NOT NULL,
    agent_id    text        NOT NULL,
    session_id  text        NOT NULL,
    ts          timestamptz NOT NULL,
    level       text        NOT NULL,
    kind        text        NOT NULL,
    salience    real        NOT NULL,
    title       text        NOT NULL,
    text        text        NOT NULL,
    event_ids   text[]      NOT NULL,
    embedding   vector(384) NOT NULL,
    indexed_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX vector_docs_embedding_hnsw ON vector_docs
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
-- Selective filters (one project, one session, a short time range) are answered exactly from
-- these instead of the graph; the planner picks whichever is cheaper.
CREATE INDEX vector_docs_tenant_ts ON vector_docs (tenant, ts);
CREATE INDEX vector_docs_tenant_project_ts ON vector_docs (tenant, project_id, ts);
CREATE INDEX vector_docs_tenant_session ON vector_docs (tenant, session_id);
