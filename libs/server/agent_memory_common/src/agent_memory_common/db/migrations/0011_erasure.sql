-- Cascade erasure (docs/lifecycle.md (erasure)): an audit row per erasure, the tombstones that keep erased
-- events from coming back, the reports of the services that own data, and the one exception to
-- append-only: a DELETE inside a transaction that declared itself an erasure.

-- The audit log: who, when, what scope, the counts per store; never any content.
CREATE TABLE erasures (
    erasure_id    text        PRIMARY KEY,
    tenant        text        NOT NULL,
    project_id    text        NOT NULL,
    -- {"session_id": ...} | {"agent_id": ...} | {"user_id": ...} | {"event_ids": [...]} |
    -- {"project": true}: ids only, which the caller already knows
    scope         jsonb       NOT NULL,
    requested_by  text        NOT NULL,
    requested_at  timestamptz NOT NULL DEFAULT now(),
    -- 'erasing' until every participant reported and the streams are purged, then
    -- 'verifying' until the verifier found nothing, then 'verified'
    status        text        NOT NULL DEFAULT 'erasing'
                  CHECK (status IN ('erasing', 'verifying', 'verified')),
    event_count   integer     NOT NULL DEFAULT 0,
    -- what the verifier still found, per store (counts only), while not verified
    findings      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    -- stream messages purged, per stream
    streams       jsonb,
    published_at  timestamptz,
    verified_at   timestamptz
);

CREATE INDEX erasures_tenant_time ON erasures (tenant, requested_at DESC);
CREATE INDEX erasures_open ON erasures (requested_at) WHERE status <> 'verified';

-- Tombstones: an erased event id is never recorded, segmented, summarized or indexed again
-- (redelivery, replay of a stream, rebuild-index). Ids and place only, no content.
CREATE TABLE erased_events (
    tenant      text        NOT NULL,
    event_id    text        NOT NULL,
    erasure_id  text        NOT NULL,
    project_id  text        NOT NULL,
    session_id  text        NOT NULL,
    ts          timestamptz NOT NULL,
    PRIMARY KEY (tenant, event_id)
);

CREATE INDEX erased_events_erasure ON erased_events (erasure_id);

-- Derived items named at request time (grip ids), so that an index can drop its documents
-- even after the summarizer removed the rows they came from.
CREATE TABLE erasure_items (
    erasure_id  text NOT NULL,
    tenant      text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('grip', 'node')),
    item_id     text NOT NULL,
    PRIMARY KEY (erasure_id, kind, item_id)
);

-- Phrases of the erased text the verifier looks for; deleted the moment the erasure is
-- verified (the only copy of erased content kept, and only until then).
CREATE TABLE erasure_needles (
    erasure_id  text NOT NULL,
    needle      text NOT NULL,
    PRIMARY KEY (erasure_id, needle)
);

-- Every service that owns data and takes part in erasures (registered at its start); an
-- erasure is complete when each of them reported.
CREATE TABLE erasure_participants (
    name           text        PRIMARY KEY,
    registered_at  timestamptz NOT NULL DEFAULT now()
);

-- One report per erasure and participant, written in the same transaction as its deletes.
CREATE TABLE erasure_reports (
    erasure_id   text        NOT NULL,
    participant  text        NOT NULL,
    counts       jsonb       NOT NULL,
    reported_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (erasure_id, participant)
);

-- Append-only, except for an erasure: a transaction that ran
-- set_config('agent_memory.erasure', 'on', true) may DELETE (never UPDATE or TRUNCATE).
CREATE OR REPLACE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('agent_memory.erasure', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'events are append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE OR REPLACE FUNCTION segment_versions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('agent_memory.erasure', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'segment_versions is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE OR REPLACE FUNCTION toc_node_versions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('agent_memory.erasure', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'toc_node_versions is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE OR REPLACE FUNCTION toc_grips_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('agent_memory.erasure', true) = 'on' THEN
        RETURN OLD;
    END IF;
    IF TG_OP = 'DELETE' OR (to_jsonb(NEW) - 'pinned' - 'salience')
            IS DISTINCT FROM (to_jsonb(OLD) - 'pinned' - 'salience') THEN
        RAISE EXCEPTION 'toc_grips: only the pin of a grip may change (% refused)', TG_OP
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END;
$$;
