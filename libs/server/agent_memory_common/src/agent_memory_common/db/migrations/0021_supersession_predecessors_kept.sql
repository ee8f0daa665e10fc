-- A newer statement keeps its two best detected predecessors over all segments (the
-- summarizer's supersession.MAX_PREDECESSORS). Before, the cap held per summarized segment
-- only, so a statement summarized early gathered two more candidates from each later segment
-- of older statements: 194 links on one event of a 1,000,000-event store, each shown with its
-- words in every search answer citing it. Keep the same two the summarizer now keeps (score,
-- then the most recent older statement, then its id); explicit links are untouched.
DELETE FROM memory_supersessions AS l
USING (
    SELECT s.tenant, s.older_event_id, s.newer_event_id,
           row_number() OVER (PARTITION BY s.tenant, s.newer_event_id
                              ORDER BY s.score DESC, o.ts DESC, s.older_event_id) AS place
    FROM memory_supersessions s
    JOIN memory_statements o ON o.tenant = s.tenant AND o.event_id = s.older_event_id
    WHERE s.source = 'detected'
) AS ranked
WHERE ranked.place > 2 AND l.tenant = ranked.tenant
  AND l.older_event_id = ranked.older_event_id AND l.newer_event_id = ranked.newer_event_id;
