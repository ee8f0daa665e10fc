-- The table of contents: a versioned year > month > week > day > segment tree per project,
-- written by the summarizer (services/summarizer), read by the query service. The rules (the
-- calendar, ids, versions, grips, salience) are in docs/toc.md, section "Table of contents".
--
-- Everything here derives from `events` and the SEGMENTS stream: it can be dropped and rebuilt
-- by replaying the stream into an empty database, which gives the same tree.

-- One row per node: identity, place in the tree and the latest-version pointer. The only
-- mutable TOC table (pointer, parent of a segment that moved to another day, pin).
CREATE TABLE toc_nodes (
    tenant         text        NOT NULL,
    -- 'segment:<segment_id>', or '<level>:<bucket>@<project key>' for the calendar levels
    -- ('year:2026@p', 'month:2026-03@p', 'week:2026-W11@p', 'day:2026-03-15@p'); unique per
    -- tenant so that it can be a JetStream message id '<tenant>/<node_id>/v<version>'.
    node_id        text        NOT NULL,
    project_id     text        NOT NULL,
    level          text        NOT NULL
        CHECK (level IN ('year', 'month', 'week', 'day', 'segment')),
    -- '2026', '2026-03', '2026-W11', '2026-03-15', or the segment id.
    bucket         text        NOT NULL,
    -- NULL for a year.
    parent_id      text,
    -- Calendar nodes: the bucket's range, end exclusive (a month or year covers whole ISO
    -- weeks). Segments: first own event .. last event.
    start_ts       timestamptz NOT NULL,
    end_ts         timestamptz NOT NULL,
    -- Version the node reads as now; 0 only inside the transaction that creates it.
    latest_version integer     NOT NULL CHECK (latest_version >= 0),
    -- Segments: the segment version summarized by latest_version (idempotency: a message whose
    -- version is not above this one is a redelivery or stale).
    source_version integer,
    -- True when the latest version has no content: a retracted segment, or a calendar node
    -- whose children all moved away or were retracted. Empty nodes are left out of listings
    -- and rollups but keep their history.
    is_empty       boolean     NOT NULL DEFAULT false,
    pinned         boolean     NOT NULL DEFAULT false,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, node_id),
    CONSTRAINT toc_nodes_bucket_key UNIQUE (tenant, project_id, level, bucket)
);

CREATE INDEX toc_nodes_parent ON toc_nodes (tenant, parent_id, start_ts, node_id);
CREATE INDEX toc_nodes_level_time ON toc_nodes (tenant, project_id, level, start_ts, end_ts);

-- Every version of every node, append-only.
CREATE TABLE toc_node_versions (
    tenant          text             NOT NULL,
    node_id         text             NOT NULL,
    version         integer          NOT NULL CHECK (version >= 1),
    project_id      text             NOT NULL,
    level           text             NOT NULL,
    bucket          text             NOT NULL,
    parent_id       text,
    title           text             NOT NULL,
    -- [{"text", "kind", "salience", "grip_ids": [...], "source_node_id"}]: 3 to 7 bullets
    -- (fewer only when the content has fewer sentences); source_node_id names the child a
    -- rollup bullet was taken from.
    bullets         jsonb            NOT NULL,
    keywords        text[]           NOT NULL,
    memory_kind     text             NOT NULL CHECK (memory_kind IN (
        'constraint', 'definition', 'procedure', 'preference', 'observation', 'episode')),
    -- Salience without the pin bonus (pins live on toc_nodes and never make a version).
    base_salience   double precision NOT NULL,
    -- Rollups: the children summarized and the version of each, in time order. A version is
    -- only made when this list changes, so every changed child makes one new version of each
    -- ancestor.
    child_ids       text[]           NOT NULL DEFAULT '{}',
    child_versions  integer[]        NOT NULL DEFAULT '{}',
    start_ts        timestamptz      NOT NULL,
    end_ts          timestamptz      NOT NULL,
    -- Segments only: the session, its events (overlap first) and the segment version.
    session_id      text,
    agent_id        text,
    event_ids       text[],
    overlap_count   integer,
    source_version  integer,
    -- '<segment_id>/v<version>' of the segment message whose handling made this version. At
    -- most one version per node and cause: a redelivered segment version makes nothing new.
    cause           text             NOT NULL,
    -- 'extractive', or 'llm:<model>' when an OpenAI-compatible endpoint wrote the summary.
    summarizer      text             NOT NULL,
    -- Lower-cased title, bullets and keywords, for index-free term search.
    search_text     text             NOT NULL,
    created_at      timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, node_id, version),
    CONSTRAINT toc_node_versions_cause_key UNIQUE (tenant, node_id, cause)
);

CREATE INDEX toc_node_versions_cause ON toc_node_versions (tenant, cause);

CREATE FUNCTION toc_node_versions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'toc_node_versions is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER toc_node_versions_no_update_delete BEFORE UPDATE OR DELETE ON toc_node_versions
    FOR EACH ROW EXECUTE FUNCTION toc_node_versions_append_only();

-- Grips: the evidence under a bullet. Made with the segment node version that first said it;
-- rollup bullets cite the same grips, so a bullet at any level leads to the exact words.
CREATE TABLE toc_grips (
    tenant         text             NOT NULL,
    -- 'grip:' || 20 hex of blake2b(segment node id, event ids, excerpt): a later version of
    -- the segment that says the same thing cites the same grip (and keeps its pin).
    grip_id        text             NOT NULL,
    project_id     text             NOT NULL,
    -- Where it was first made: segment node, version and bullet position (0-based).
    node_id        text             NOT NULL,
    node_version   integer          NOT NULL,
    bullet_index   integer          NOT NULL,
    event_ids      text[]           NOT NULL,
    excerpt        text             NOT NULL,
    memory_kind    text             NOT NULL CHECK (memory_kind IN (
        'constraint', 'definition', 'procedure', 'preference', 'observation', 'episode')),
    base_salience  double precision NOT NULL,
    pinned         boolean          NOT NULL DEFAULT false,
    -- min(len/500, 1) * 0.45 + 0.20 if not an observation (both in base_salience) + 0.20 if
    -- pinned: recomputed by the database when the pin changes.
    salience       double precision GENERATED ALWAYS AS (
        base_salience + CASE WHEN pinned THEN 0.20 ELSE 0.0 END
    ) STORED,
    created_at     timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, grip_id)
);

CREATE INDEX toc_grips_node ON toc_grips (tenant, node_id, node_version);

-- A grip is evidence: only its pin may change, and it is never deleted.
CREATE FUNCTION toc_grips_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR (to_jsonb(NEW) - 'pinned' - 'salience')
            IS DISTINCT FROM (to_jsonb(OLD) - 'pinned' - 'salience') THEN
        RAISE EXCEPTION 'toc_grips: only the pin of a grip may change (% refused)', TG_OP
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER toc_grips_guard BEFORE UPDATE OR DELETE ON toc_grips
    FOR EACH ROW EXECUTE FUNCTION toc_grips_guard();

-- Tokens spent on the optional LLM summarizer, per project and UTC day, against the budget.
CREATE TABLE summarizer_llm_usage (
    tenant     text   NOT NULL,
    project_id text   NOT NULL,
    day        date   NOT NULL,
    tokens     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, project_id, day)
);
