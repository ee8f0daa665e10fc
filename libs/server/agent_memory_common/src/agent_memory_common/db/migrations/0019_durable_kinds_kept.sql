-- Durable kinds are kept by the indexes at any age (retention.DURABLE_KINDS: decisions,
-- constraints, preferences, procedures, definitions never go stale). Grips of those kinds, and
-- events noted as one of them, that an earlier pruner run removed are recorded in
-- index_pruned, which rebuild-index never writes back: forget those records, so that
-- `agent-memory admin rebuild-index` restores the entries. Nothing else is touched.
DELETE FROM index_pruned AS p
USING toc_grips AS g
WHERE p.level = 'grip' AND p.reason = 'retention' AND p.tenant = g.tenant
  AND p.doc_id = 'grip:' || g.tenant || ':' || g.grip_id
  AND g.memory_kind IN ('decision', 'constraint', 'preference', 'procedure', 'definition');

DELETE FROM index_pruned AS p
USING events AS e
WHERE p.level = 'event' AND p.reason = 'retention' AND p.tenant = e.tenant
  AND p.doc_id = 'event:' || e.tenant || ':' || e.event_id
  AND e.metadata->>'memory_kind' IN ('decision', 'constraint', 'preference', 'procedure',
                                     'definition');
