-- The TOC nodes written last, newest first: when BM25 answered a search, the TOC fallback tier
-- matches only the newest nodes (those BM25 may not have indexed yet) instead of every node of
-- the tenant (query service, toc/sql/toc.sql "search"; docs/search.md step 5).
CREATE INDEX IF NOT EXISTS toc_nodes_updated ON toc_nodes (tenant, updated_at);
