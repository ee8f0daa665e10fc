-- Supersession (issue 13 item 4): a newer decision, constraint or preference on the same
-- subject replaces the older one. The summarizer writes both tables (its supersession module);
-- search and the TOC routes read the links. Keyed by event ids, the natural key of what was
-- said, so a redelivered segment writes nothing new and every derived item (grip, bullet,
-- search result) finds its links through the events it cites.

-- One row per natural-language event holding a rule sentence: what detection compares.
CREATE TABLE memory_statements (
    tenant      text        NOT NULL,
    event_id    text        NOT NULL,
    project_id  text        NOT NULL,
    session_id  text        NOT NULL,
    ts          timestamptz NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('decision', 'constraint', 'preference')),
    subject     text[]      NOT NULL,  -- stemmed content words, sorted
    text        text        NOT NULL,  -- the rule sentences
    cue         boolean     NOT NULL,  -- says it changes something ("replace", "instead of")
    PRIMARY KEY (tenant, event_id)
);
CREATE INDEX memory_statements_project ON memory_statements (tenant, project_id, ts);

-- older_event_id is superseded by newer_event_id: 'detected' offline, or 'explicit' (an event
-- whose metadata.supersedes names it; note = why).
CREATE TABLE memory_supersessions (
    tenant          text        NOT NULL,
    older_event_id  text        NOT NULL,
    newer_event_id  text        NOT NULL,
    project_id      text        NOT NULL,
    source          text        NOT NULL CHECK (source IN ('detected', 'explicit')),
    score           real        NOT NULL,
    note            text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, older_event_id, newer_event_id)
);
CREATE INDEX memory_supersessions_newer ON memory_supersessions (tenant, newer_event_id);
