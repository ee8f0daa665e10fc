-- Episodes (a task an agent attempted, the actions it took, the outcome and its lessons) and the
-- per-project ACE playbook (lesson entries curated across runs and agents).
--
-- Written directly by the query service, not through JetStream: an episode is structured state
-- that its own agent updates (start, actions, complete), not an observation of a conversation,
-- and the agent needs a read-your-writes answer (the episode id, the similar past episodes) at
-- once. Postgres is the system of record either way; every write is idempotent on a client-chosen
-- id so that a client retrying after a timeout never doubles anything.

CREATE TABLE episodes (
    tenant        text        NOT NULL,
    episode_id    text        NOT NULL,
    project_id    text        NOT NULL,
    agent_id      text,
    session_id    text,
    task          text        NOT NULL,
    status        text        NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'success', 'failure', 'partial')),
    lessons       text[]      NOT NULL DEFAULT '{}',
    summary       text,
    value         real        CHECK (value IS NULL OR (value >= 0 AND value <= 1)),
    metadata      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    actions_count integer     NOT NULL DEFAULT 0,
    started_at    timestamptz NOT NULL DEFAULT now(),
    completed_at  timestamptz,
    -- what "similar" matches on: the task, the lessons learnt and the summary; set by the
    -- statements that write those (a generated column cannot call array_to_string, not immutable)
    tsv           tsvector    NOT NULL,
    PRIMARY KEY (tenant, episode_id)
);

CREATE INDEX episodes_project ON episodes (tenant, project_id, started_at DESC);
CREATE INDEX episodes_tsv ON episodes USING gin (tsv);

CREATE TABLE episode_actions (
    tenant      text        NOT NULL,
    episode_id  text        NOT NULL,
    action_id   text        NOT NULL,
    seq         bigint      GENERATED ALWAYS AS IDENTITY,
    ts          timestamptz NOT NULL DEFAULT now(),
    action      text        NOT NULL,
    result      text,
    ok          boolean,
    metadata    jsonb       NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (tenant, episode_id, action_id),
    FOREIGN KEY (tenant, episode_id) REFERENCES episodes (tenant, episode_id)
);

CREATE INDEX episode_actions_order ON episode_actions (tenant, episode_id, seq);

-- The playbook: one row per distinct lesson of a project. The curator merges a new lesson into
-- the nearest entry by embedding similarity and counts how often runs found it helpful (+),
-- harmful (-) or merely observed it (o). ``embedder`` names the model that produced ``embedding``
-- so that a change of embedder re-embeds instead of comparing incomparable vectors.
CREATE TABLE playbook_entries (
    tenant      text        NOT NULL,
    project_id  text        NOT NULL,
    entry_id    text        NOT NULL,
    section     text        NOT NULL DEFAULT 'general',
    text        text        NOT NULL,
    helpful     integer     NOT NULL DEFAULT 0,
    harmful     integer     NOT NULL DEFAULT 0,
    neutral     integer     NOT NULL DEFAULT 0,
    embedder    text        NOT NULL,
    embedding   real[]      NOT NULL,
    sources     jsonb       NOT NULL DEFAULT '[]'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, project_id, entry_id)
);

CREATE INDEX playbook_entries_rank ON playbook_entries (tenant, project_id, updated_at DESC);

-- Lesson submissions already applied, keyed by the client's submission id, so that a retried
-- POST does not count the same marks twice.
CREATE TABLE playbook_submissions (
    tenant        text        NOT NULL,
    project_id    text        NOT NULL,
    submission_id text        NOT NULL,
    results       jsonb       NOT NULL,
    applied_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, project_id, submission_id)
);
