-- name: erased_of
-- Which of a batch's event ids are tombstoned (docs/lifecycle.md (erasure)): one probe of the
-- primary key (tenant, event_id) per id, in one statement per request.
SELECT event_id
FROM erased_events
WHERE tenant = %(tenant)s AND event_id = ANY(%(event_ids)s::text[])
