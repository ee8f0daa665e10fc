-- Segments: runs of one session's events, cut by the segmenter (services/segmenter) and
-- summarised downstream. The rules are in docs/toc.md, section "Segments".
--
-- The segmentation is a pure function of the session's stored events, so this table can be
-- dropped and rebuilt from `events` at any time; what a rebuild cannot reproduce is only the
-- version history (how many times a segment changed while events were still arriving).
CREATE TABLE segments (
    -- Owner of the session; every query is scoped by it.
    tenant        text        NOT NULL,
    -- 'sg_' || 16 hex of blake2b(project_id NUL session_id) || '_' || ordinal: the same on
    -- every replay and on every replica, unique per tenant even when two projects reuse a
    -- session id.
    segment_id    text        NOT NULL,
    -- 1 for a new segment; +1 each time the content or state of a segment that was already
    -- published (closed or retracted) changes, e.g. a late event lands inside it. Changes of
    -- a still-open, never-published segment keep the version.
    version       integer     NOT NULL DEFAULT 1 CHECK (version >= 1),
    -- The session, as (tenant, project_id, session_id): sessions are scoped by project.
    project_id    text        NOT NULL,
    -- agent_id of the segment's first own (non-overlap) event.
    agent_id      text        NOT NULL,
    session_id    text        NOT NULL,
    -- Position in the session, 0-based, in event-time order.
    ordinal       integer     NOT NULL CHECK (ordinal >= 0),
    -- ts of the first event_ids entry (an overlap event if any) and of the last one.
    start_ts      timestamptz NOT NULL,
    end_ts        timestamptz NOT NULL,
    -- Events in (ts, event_id) order; the first overlap_count are the tail of the previous
    -- segment carried over as context (token-budget cuts only), the rest are this segment's
    -- own events. Every stored event is the own event of exactly one segment. Empty once
    -- retracted.
    event_ids     text[]      NOT NULL,
    overlap_count integer     NOT NULL CHECK (overlap_count >= 0),
    -- Estimated tokens of all event_ids, overlap included: ceil(char_length(text) / 4),
    -- at least 1 per event.
    token_count   integer     NOT NULL CHECK (token_count >= 0),
    -- 'open': the session's last segment, still growing (never published while open).
    -- 'closed': published on mem.segments.<tenant>.<project> at this version.
    -- 'retracted': a late event merged this segment into an earlier one (it filled a gap), so
    --   the session has fewer segments now; published once with empty event_ids so that
    --   consumers drop it. It comes back (as a new version) if the session grows again.
    status        text        NOT NULL CHECK (status IN ('open', 'closed', 'retracted')),
    -- Why the current version was closed: 'gap' (next event more than gap_s later in event
    -- time), 'token_budget', 'session_end' (ends with a session_end event), 'idle' (no new
    -- event for the session for idle_flush_s of wall-clock time), 'retracted'; NULL while open.
    -- Kept while the content stays the same: an idle-flushed segment whose next event then
    -- comes after a gap stays 'idle' rather than being published again.
    close_reason  text        CHECK (
        close_reason IN ('gap', 'token_budget', 'session_end', 'idle', 'retracted')
    ),
    -- Wall-clock time the current version was closed (NULL while open).
    closed_at     timestamptz,
    -- Wall-clock time the segmenter last handled an event of this session while this was its
    -- open tail (or changed the row): the idle flush looks for open rows older than idle_flush_s.
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, segment_id),
    CONSTRAINT segments_session_ordinal_key UNIQUE (tenant, project_id, session_id, ordinal),
    CONSTRAINT segments_overlap_le_events CHECK (overlap_count <= cardinality(event_ids)),
    CONSTRAINT segments_closed_has_reason CHECK ((status = 'open') = (close_reason IS NULL))
);

CREATE INDEX segments_tenant_project_start ON segments (tenant, project_id, start_ts);
CREATE INDEX segments_open_updated ON segments (updated_at) WHERE status = 'open';

-- Every published version of every segment, append-only: the exact payload sent on
-- mem.segments.*, and what caused it. A redelivered RECORDED message republishes the current
-- versions its events caused (the commit may have happened just before a crash, the publish
-- not), so no version is ever lost; JetStream de-duplicates by Nats-Msg-Id
-- '<tenant>/<segment_id>/v<version>'.
CREATE TABLE segment_versions (
    tenant          text        NOT NULL,
    segment_id      text        NOT NULL,
    version         integer     NOT NULL,
    -- The JSON published (see services/segmenter/src/agent_memory_segmenter/handler.py).
    payload         jsonb       NOT NULL,
    -- 'event': computed while handling RECORDED messages; 'idle': closed by the idle flush.
    cause           text        NOT NULL CHECK (cause IN ('event', 'idle')),
    -- For cause 'event': the event ids of the handled messages of that session.
    cause_event_ids text[]      NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, segment_id, version)
);

CREATE INDEX segment_versions_cause ON segment_versions USING gin (cause_event_ids);

CREATE FUNCTION segment_versions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'segment_versions is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER segment_versions_no_update_delete BEFORE UPDATE OR DELETE ON segment_versions
    FOR EACH ROW EXECUTE FUNCTION segment_versions_append_only();

-- Versions closed by the idle flush and not yet confirmed published. The flush has no
-- redelivery to fall back on, so it commits the version together with a row here, publishes,
-- then deletes the row; a row left behind by a crash is republished by the next sweep.
CREATE TABLE segment_outbox (
    tenant     text        NOT NULL,
    segment_id text        NOT NULL,
    version    integer     NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, segment_id, version)
);
