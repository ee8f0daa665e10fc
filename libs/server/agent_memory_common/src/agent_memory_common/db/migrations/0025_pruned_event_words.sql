-- The words of each event whose index entries the retention pruner removed (issue 53, point 1):
-- the descent (agent_memory_search.descent_store) scores the events under an old summary by
-- the question's words. It tokenized their text on every search (to_tsvector of up to 2,000
-- characters each: 29 of a lookup's 41 ms at p50 on bench-real's aged store, over the 60 ms
-- budget of the whole step on a busy machine, so the step was mostly skipped). Tokenized once,
-- when the pruner records the event as pruned, in the same transaction; only pruned events are
-- held, so a store the pruner never touched holds nothing here. Deleted with its event (an
-- erasure) through the foreign key.
-- ``vector``: the event's embedding as the vector index held it when the pruner deleted it
-- (float16, little-endian), so that the descent ranks pruned events by meaning too without
-- embedding them at search time (six texts took ~130 ms here, over the step's whole budget).
-- NULL for events pruned before it was kept, or never embedded.
CREATE TABLE IF NOT EXISTS pruned_event_words (
    tenant   text     NOT NULL,
    event_id text     NOT NULL,
    words    tsvector NOT NULL,
    vector   bytea,
    PRIMARY KEY (tenant, event_id),
    FOREIGN KEY (tenant, event_id) REFERENCES events (tenant, event_id) ON DELETE CASCADE
);

-- The events pruned before this table existed (one pass over the pruning records).
INSERT INTO pruned_event_words (tenant, event_id, words)
SELECT e.tenant, e.event_id, to_tsvector('english', left(e.text, 2000))
FROM events AS e
WHERE EXISTS (
    SELECT 1 FROM index_pruned AS p
    WHERE p.tenant = e.tenant AND p.index_name IN ('bm25', 'vector') AND p.level = 'event'
      AND p.doc_id = 'event:' || e.tenant || ':' || e.event_id)
ON CONFLICT (tenant, event_id) DO NOTHING;
