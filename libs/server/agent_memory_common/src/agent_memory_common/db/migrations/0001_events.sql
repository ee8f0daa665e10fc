-- The event log: append-only, one row per (tenant, event_id).
CREATE TABLE events (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant       text        NOT NULL,
    event_id     text        NOT NULL,
    ts           timestamptz NOT NULL,
    project_id   text        NOT NULL,
    agent_id     text        NOT NULL,
    session_id   text        NOT NULL,
    user_id      text,
    role         text        NOT NULL,
    type         text        NOT NULL,
    text         text        NOT NULL,
    metadata     jsonb       NOT NULL DEFAULT '{}'::jsonb,
    received_at  timestamptz NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT events_tenant_event_id_key UNIQUE (tenant, event_id)
);

CREATE INDEX events_tenant_ts ON events (tenant, ts, seq);
CREATE INDEX events_tenant_project_ts ON events (tenant, project_id, ts, seq);
CREATE INDEX events_tenant_session_ts ON events (tenant, session_id, ts, seq);
CREATE INDEX events_tenant_agent_ts ON events (tenant, agent_id, ts, seq);

-- Append-only is a promise to users ("keeps it forever"), so the database enforces it.
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();

-- The idempotent-consumer inbox: a consumer claims a message id in the same transaction as its
-- outputs, so a redelivery after a crash is recognised and only acknowledged.
CREATE TABLE consumer_inbox (
    consumer     text        NOT NULL,
    msg_id       text        NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, msg_id)
);
