-- The idempotent-consumer inbox of 0001 was never used by a service: every consumer is
-- idempotent on the natural key of what it writes (events by (tenant, event_id), segment and
-- TOC versions by their cause, index documents by deterministic ids), in the transaction the
-- runner owns. A table that nothing writes only misleads the reader, so it goes.
DROP TABLE IF EXISTS consumer_inbox;
