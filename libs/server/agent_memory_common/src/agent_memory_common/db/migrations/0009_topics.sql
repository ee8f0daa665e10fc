-- The topic graph (services/topics, docs/topics.md): segment-level memories clustered per
-- tenant and project into themes, with labels, lineage and related-topic edges.
--
-- Everything here derives from the table of contents: `agent-memory admin rebuild-topics`
-- refills it from toc_nodes / toc_node_versions. Importance is never stored: it is computed at
-- read time from the members' salience and end time (30-day half-life by default).

-- The material: one row per segment node, the text and vector it was clustered by.
CREATE TABLE topic_segments (
    tenant        text             NOT NULL,
    node_id       text             NOT NULL,   -- 'segment:<segment_id>'
    project_id    text             NOT NULL,
    node_version  integer          NOT NULL,   -- the TOC version the text and vector come from
    session_id    text             NOT NULL,
    title         text             NOT NULL,
    text          text             NOT NULL,   -- title + bullets: what was embedded and labelled
    event_ids     text[]           NOT NULL,
    salience      double precision NOT NULL,   -- pin included, as last announced
    start_ts      timestamptz      NOT NULL,
    end_ts        timestamptz      NOT NULL,
    embedding     real[]           NOT NULL,   -- unit length (all-MiniLM-L6-v2, 384)
    -- True until the next full re-cluster of the project has seen it.
    pending       boolean          NOT NULL DEFAULT true,
    updated_at    timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, node_id)
);

CREATE INDEX topic_segments_project ON topic_segments (tenant, project_id, end_ts);

-- A theme of one project. The id survives re-clustering (matched by member overlap).
CREATE TABLE topics (
    tenant        text        NOT NULL,
    topic_id      text        NOT NULL,        -- 'topic:<16 hex>'
    project_id    text        NOT NULL,
    label         text        NOT NULL,
    keywords      text[]      NOT NULL,
    centroid      real[]      NOT NULL,        -- unit-length mean of the members' vectors
    -- Lineage: the topics this one was split from or merged out of at its creation.
    parent_ids    text[]      NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, topic_id)
);

CREATE INDEX topics_project ON topics (tenant, project_id);

-- Membership, keyed by the segment node: an erasure removes the row (and the labels are
-- recomputed by the next re-cluster); pruning a topic removes its rows, never the segments.
CREATE TABLE topic_members (
    tenant        text             NOT NULL,
    node_id       text             NOT NULL,
    topic_id      text             NOT NULL,
    project_id    text             NOT NULL,
    -- 'cluster' (placed by HDBSCAN) or 'nearest' (assigned on arrival or as noise)
    assigned_by   text             NOT NULL CHECK (assigned_by IN ('cluster', 'nearest')),
    similarity    double precision NOT NULL,   -- cosine to the centroid when assigned
    PRIMARY KEY (tenant, node_id),
    FOREIGN KEY (tenant, topic_id) REFERENCES topics (tenant, topic_id) ON DELETE CASCADE
);

CREATE INDEX topic_members_topic ON topic_members (tenant, topic_id);

-- Related topics: symmetric, both directions stored with the same weight.
CREATE TABLE topic_edges (
    tenant        text             NOT NULL,
    topic_id      text             NOT NULL,
    other_id      text             NOT NULL,
    weight        double precision NOT NULL,
    PRIMARY KEY (tenant, topic_id, other_id),
    FOREIGN KEY (tenant, topic_id) REFERENCES topics (tenant, topic_id) ON DELETE CASCADE,
    FOREIGN KEY (tenant, other_id) REFERENCES topics (tenant, topic_id) ON DELETE CASCADE
);

-- Per project: when it was last fully clustered and how large it was then.
CREATE TABLE topic_projects (
    tenant          text        NOT NULL,
    project_id      text        NOT NULL,
    clustered_at    timestamptz,
    clustered_size  integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, project_id)
);
