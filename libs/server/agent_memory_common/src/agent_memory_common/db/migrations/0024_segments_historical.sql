-- Whether an open segment is the tail of a historical session (issue 53, point 3): its last
-- event's time (end_ts) was already more than idle_flush_s old when the segmenter last handled
-- an event of the session, as with an imported backlog. Such a tail is not waiting for the
-- agent: the idle flush closes it once the session has been quiet for historical_quiet_s of
-- wall-clock time (a few seconds) instead of idle_flush_s (docs/toc.md, "Idle flush"), and the
-- query service's /v1/status counts it as closing (not drained) until then. Set by the
-- segmenter whenever it sets updated_at on an open row; read on open rows only.
ALTER TABLE segments ADD COLUMN IF NOT EXISTS historical boolean NOT NULL DEFAULT false;
