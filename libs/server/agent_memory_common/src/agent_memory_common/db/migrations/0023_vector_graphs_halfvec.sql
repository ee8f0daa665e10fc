-- Each partition's HNSW graph holds its vectors at half precision (pgvector's halfvec), while
-- the table keeps the float32 vectors: a graph search walks the half-precision graph, and the
-- adapter orders what it found by the exact distance (pgvector.sql "search"); an exact search
-- ranks the float32 vectors as before. Half the bytes per node: on the 100,000-event bench
-- store's 130,063 vectors the graph is 43 % smaller, an insert 18 % cheaper and a search a
-- little faster, with recall@10 against exact search no lower (400 questions; docs/search.md,
-- "Half-precision graphs").
--
-- The graphs are built again from the stored vectors (nothing is embedded again): about as
-- long as migration 0020's build, minutes at a million rows, under the schema lock.
SET LOCAL maintenance_work_mem = '512MB';

DROP INDEX IF EXISTS vector_docs_embedding_hnsw;
-- on the parent: Postgres builds one per partition
CREATE INDEX vector_docs_embedding_hnsw ON vector_docs
    USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 64);
