-- What recall costs, and a project's switch to stop it (issue 54, point 5). Briefs and
-- per-prompt recalls put text in front of agents unasked; the Prometheus counters say how much
-- in all (no project label, ever), these tables say how much for which project and session,
-- and let one call turn injection off for a project on every runtime and every machine.

-- A project's injection switch (``GET/PUT /v1/projects/{id}/recall``): no row is 'on'. When
-- 'off', ``POST /v1/recall`` answers ``silence: "off"`` and the brief an empty context; capture
-- and every asked read (search, expand, the TOC) go on as before. A setting, not data: an
-- erasure of the project leaves it.
CREATE TABLE IF NOT EXISTS recall_settings (
    tenant     text        NOT NULL,
    project_id text        NOT NULL,
    injection  text        NOT NULL CHECK (injection IN ('on', 'off')),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, project_id)
);

-- The answers of the brief and of recall per project, session, UTC day and kind: one counter
-- row each, added to by the query service off the request's path (batched, a few times a
-- second; a failed write is retried, never the answer's failure). ``answers`` counts every
-- answer (silent ones too), ``given`` those with a context, ``tokens`` the tokens of those
-- contexts (4 characters each, as each answer's ``tokens``). ``session_id`` is '' when the
-- caller named none. No text is held here; an erasure of the project or the session deletes
-- its rows.
CREATE TABLE IF NOT EXISTS recall_usage (
    tenant     text        NOT NULL,
    project_id text        NOT NULL,
    day        date        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('brief', 'recall')),
    session_id text        NOT NULL,
    answers    bigint      NOT NULL CHECK (answers >= 0),
    given      bigint      NOT NULL CHECK (given >= 0),
    tokens     bigint      NOT NULL CHECK (tokens >= 0),
    last_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, project_id, day, kind, session_id)
);

-- Every project of a tenant over the last days (``GET /v1/recall/projects``, `agent-memory
-- status`) without reading the tenant's whole history.
CREATE INDEX IF NOT EXISTS recall_usage_by_day ON recall_usage (tenant, day);
