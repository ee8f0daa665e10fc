-- Dedup at ingest: an event whose text repeats one of the same session (identical after
-- normalisation, or a near-duplicate by cosine) is still appended to `events`, and the recorder
-- notes here, in the same transaction, which event it repeats. `events` stays append-only
-- (its trigger forbids UPDATE), so the mark lives beside it rather than in a column. Readers
-- join on (tenant, event_id); the segmenter, rebuild-index and the event search tier skip
-- the rows listed here, and the recorder never announces them on mem.recorded, so a duplicate
-- is neither indexed nor summarised twice. See docs/lifecycle.md (dedup).
CREATE TABLE event_duplicates (
    tenant        text        NOT NULL,
    event_id      text        NOT NULL,
    duplicate_of  text        NOT NULL,
    project_id    text        NOT NULL,
    session_id    text        NOT NULL,
    method        text        NOT NULL CHECK (method IN ('exact', 'near')),
    similarity    real        NOT NULL,
    detected_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, event_id),
    CHECK (duplicate_of <> event_id)
);

CREATE INDEX event_duplicates_tenant_project ON event_duplicates (tenant, project_id);
