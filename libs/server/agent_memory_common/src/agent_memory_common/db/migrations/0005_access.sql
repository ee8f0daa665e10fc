-- How often each search result has been returned, for the ranking policy's usage penalty
-- 1 / (1 + decay * access_count). Written off the hot path by the query service (batched,
-- a few times per second) and read for the candidates of each search. Derived data: it can
-- be truncated at any time, which only forgets the usage history.
CREATE TABLE search_access (
    tenant        text        NOT NULL,
    -- The IndexDoc id of the result: 'event:<tenant>:<event_id>', 'grip:...', 'node:...'.
    item_id       text        NOT NULL,
    access_count  bigint      NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    first_access  timestamptz NOT NULL DEFAULT now(),
    last_access   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, item_id)
);
