-- API keys with roles (docs/team.md): only a hash of each secret is stored; the secret is shown
-- once, when the key is created. Checked by the gateway and the query service
-- (agent_memory_common.auth.access), revoked by setting revoked_at (rows are kept for the audit trail).
CREATE TABLE api_keys (
    -- Public half of the key ('amk_<key_id>_<secret>'): names the key in listings and routes.
    key_id      text        PRIMARY KEY,
    tenant      text        NOT NULL,
    role        text        NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
    -- sha256 of the secret half; the secret is 256 random bits, so no slow hash is needed.
    secret_hash bytea       NOT NULL,
    -- NULL: every project of the tenant; else only these.
    projects    text[],
    -- A key bound to an agent or a user writes only as that agent / user.
    agent_id    text,
    user_id     text,
    label       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz,
    revoked_at  timestamptz
);

CREATE INDEX api_keys_tenant_created ON api_keys (tenant, created_at);

-- How the agents and users of a project share its memories (docs/team.md): 'separate' (a key
-- bound to an agent reads only that agent's memories), 'unified' (the default, for a project
-- without a row: every agent of the tenant shares), 'team' (many users; memories attributed to
-- their user_id, reads can filter by user).
CREATE TABLE project_sharing (
    tenant     text        NOT NULL,
    project_id text        NOT NULL,
    strategy   text        NOT NULL CHECK (strategy IN ('separate', 'unified', 'team')),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, project_id)
);
