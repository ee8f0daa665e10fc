-- The memory kind 'decision' ("we go with X for Y", "Decision: ...", "we're switching to Z"):
-- the summarizer recognises it, and search treats it like a constraint (boosted, never stale).
-- Only the CHECK of the two columns that store a kind changes; no row is rewritten.
ALTER TABLE toc_node_versions DROP CONSTRAINT toc_node_versions_memory_kind_check;
ALTER TABLE toc_node_versions ADD CONSTRAINT toc_node_versions_memory_kind_check
    CHECK (memory_kind IN ('decision', 'constraint', 'definition', 'procedure', 'preference',
                           'observation', 'episode'));
ALTER TABLE toc_grips DROP CONSTRAINT toc_grips_memory_kind_check;
ALTER TABLE toc_grips ADD CONSTRAINT toc_grips_memory_kind_check
    CHECK (memory_kind IN ('decision', 'constraint', 'definition', 'procedure', 'preference',
                           'observation', 'episode'));
