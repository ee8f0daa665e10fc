-- name: toc_present
SELECT to_regclass('toc_nodes') IS NOT NULL AND to_regclass('toc_grips') IS NOT NULL

-- name: latest_versions
SELECT n.tenant, n.node_id, n.latest_version
FROM toc_nodes AS n
JOIN unnest(%(tenants)s::text[], %(node_ids)s::text[]) AS k (tenant, node_id)
  ON n.tenant = k.tenant AND n.node_id = k.node_id

-- name: count_events
SELECT count(*) FROM events

-- name: count_nodes
SELECT count(*) FROM toc_nodes WHERE latest_version > 0

-- name: count_grips
SELECT count(*) FROM toc_grips

-- name: tenant_events_page
-- events_page for one tenant (one project, from a time): what an export holds.
SELECT seq, tenant, event_id, ts, project_id, agent_id, session_id, user_id, role, type, text,
       metadata, received_at,
       EXISTS (
           SELECT 1 FROM erased_events x
           WHERE x.tenant = events.tenant AND x.event_id = events.event_id
       ) AS erased
FROM events
WHERE tenant = %(tenant)s AND seq > %(after)s
  AND (%(project)s::text IS NULL OR project_id = %(project)s)
  AND (%(since)s::timestamptz IS NULL OR ts >= %(since)s)
  AND NOT EXISTS (
      SELECT 1 FROM event_duplicates AS d
      WHERE d.tenant = events.tenant AND d.event_id = events.event_id
  )
ORDER BY seq
LIMIT %(limit)s

-- name: events_page
SELECT seq, tenant, event_id, ts, project_id, agent_id, session_id, user_id, role, type, text,
       metadata, received_at,
       EXISTS (
           SELECT 1 FROM erased_events x
           WHERE x.tenant = events.tenant AND x.event_id = events.event_id
       ) AS erased
FROM events
WHERE seq > %(after)s
  AND NOT EXISTS (  -- a duplicate (dedup at ingest) was never indexed: a rebuild keeps it so
      SELECT 1 FROM event_duplicates AS d
      WHERE d.tenant = events.tenant AND d.event_id = events.event_id
  )
ORDER BY seq
LIMIT %(limit)s

-- name: previous_turns
-- the turn before each given event in its session: (ts, seq) order, as the TOC reads events;
-- the live indexers and rebuild-index both ask it, so both give an event the same context.
-- A session marker ("session started") is no turn: it says nothing the next one answers.
SELECT k.i, p.text, p.metadata
FROM unnest(%(tenants)s::text[], %(event_ids)s::text[]) WITH ORDINALITY AS k (tenant, event_id, i)
JOIN events AS e ON e.tenant = k.tenant AND e.event_id = k.event_id
CROSS JOIN LATERAL (
    SELECT q.text, q.metadata
    FROM events AS q
    WHERE q.tenant = e.tenant AND q.session_id = e.session_id AND e.session_id <> ''
      AND q.project_id = e.project_id AND (q.ts, q.seq) < (e.ts, e.seq)
      AND q.type NOT IN ('session_start', 'session_end')
      AND NOT EXISTS (
          SELECT 1 FROM erased_events x WHERE x.tenant = q.tenant AND x.event_id = q.event_id
      )
    ORDER BY q.ts DESC, q.seq DESC
    LIMIT 1
) AS p

-- name: stored_before_successors
-- the turn after each given event in its session, when that turn was stored before the event
-- (a lower seq): indexed then, it lacked this event as its context. The recorder stores one
-- session's events under a lock, so seq order is commit order within a session.
SELECT n.seq, n.tenant, n.event_id, n.ts, n.project_id, n.agent_id, n.session_id, n.user_id,
       n.role, n.type, n.text, n.metadata, n.received_at
FROM unnest(%(tenants)s::text[], %(event_ids)s::text[]) AS k (tenant, event_id)
JOIN events AS e ON e.tenant = k.tenant AND e.event_id = k.event_id
CROSS JOIN LATERAL (
    SELECT q.*
    FROM events AS q
    WHERE q.tenant = e.tenant AND q.session_id = e.session_id AND e.session_id <> ''
      AND q.project_id = e.project_id AND (q.ts, q.seq) > (e.ts, e.seq)
      AND NOT EXISTS (
          SELECT 1 FROM erased_events x WHERE x.tenant = q.tenant AND x.event_id = q.event_id
      )
    ORDER BY q.ts, q.seq
    LIMIT 1
) AS n
WHERE n.seq < e.seq
  AND NOT EXISTS (
      SELECT 1 FROM event_duplicates AS d WHERE d.tenant = n.tenant AND d.event_id = n.event_id
  )

-- name: nodes_page
SELECT n.tenant, n.node_id, n.project_id, n.level, n.is_empty, n.pinned,
       v.version, v.bucket, v.parent_id, v.title, v.bullets, v.keywords, v.memory_kind,
       v.base_salience, v.child_ids, v.start_ts, v.end_ts, v.session_id, v.agent_id,
       v.event_ids, v.overlap_count, v.source_version, v.summarizer
FROM toc_nodes AS n
JOIN toc_node_versions AS v
  ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version
WHERE n.latest_version > 0 AND (n.tenant, n.node_id) > (%(after_tenant)s, %(after_node)s)
ORDER BY n.tenant, n.node_id
LIMIT %(limit)s

-- name: node_version
SELECT n.tenant, n.node_id, n.project_id, n.level, n.is_empty, n.pinned,
       v.version, v.bucket, v.parent_id, v.title, v.bullets, v.keywords, v.memory_kind,
       v.base_salience, v.child_ids, v.start_ts, v.end_ts, v.session_id, v.agent_id,
       v.event_ids, v.overlap_count, v.source_version, v.summarizer
FROM toc_nodes AS n
JOIN toc_node_versions AS v ON v.tenant = n.tenant AND v.node_id = n.node_id
WHERE n.tenant = %(tenant)s AND n.node_id = %(node_id)s AND v.version = %(version)s

-- name: grips_by_id
SELECT grip_id, node_id, node_version, bullet_index, event_ids, excerpt, memory_kind, salience,
       pinned
FROM toc_grips
WHERE tenant = %(tenant)s AND grip_id = ANY(%(ids)s::text[])

-- name: grips_page
SELECT g.tenant, g.grip_id, g.node_id, g.node_version, g.event_ids, g.excerpt, g.memory_kind,
       g.salience, v.project_id, v.start_ts, v.session_id, v.agent_id
FROM toc_grips AS g
JOIN toc_node_versions AS v
  ON v.tenant = g.tenant AND v.node_id = g.node_id AND v.version = g.node_version
WHERE (g.tenant, g.grip_id) > (%(after_tenant)s, %(after_grip)s)
ORDER BY g.tenant, g.grip_id
LIMIT %(limit)s

-- name: texts_by_id
SELECT e.tenant, e.event_id, e.text, e.metadata
FROM unnest(%(tenants)s::text[], %(event_ids)s::text[]) AS k (tenant, event_id)
JOIN events AS e ON e.tenant = k.tenant AND e.event_id = k.event_id

-- name: erasure_neighbours
-- The events that followed an erased one in its session (not erased themselves): their index
-- documents carry the previous turn as context, which was erased text. One pass over each
-- touched session: a remaining event whose gap to the remaining event before it holds an
-- erased event's time (a whole erased session leaves nothing to scan).
WITH sessions AS (
    SELECT DISTINCT tenant, project_id, session_id
    FROM erased_events WHERE erasure_id = %(erasure_id)s
),
remaining AS (
    SELECT e.seq, e.tenant, e.event_id, e.ts, e.project_id, e.agent_id, e.session_id,
           e.user_id, e.role, e.type, e.text, e.metadata, e.received_at,
           lag(e.ts) OVER (PARTITION BY e.tenant, e.project_id, e.session_id
                           ORDER BY e.ts, e.seq) AS prev_ts
    FROM events e
    JOIN sessions s
      ON e.tenant = s.tenant AND e.project_id = s.project_id AND e.session_id = s.session_id
    WHERE NOT EXISTS (
        SELECT 1 FROM erased_events y WHERE y.tenant = e.tenant AND y.event_id = e.event_id
    )
)
SELECT r.seq, r.tenant, r.event_id, r.ts, r.project_id, r.agent_id, r.session_id, r.user_id,
       r.role, r.type, r.text, r.metadata, r.received_at
FROM remaining r
WHERE EXISTS (
    SELECT 1 FROM erased_events x
    WHERE x.erasure_id = %(erasure_id)s AND x.tenant = r.tenant
      AND x.project_id = r.project_id AND x.session_id = r.session_id
      AND x.ts <= r.ts AND (r.prev_ts IS NULL OR x.ts >= r.prev_ts)
)

-- name: erased_among
SELECT k.tenant, k.event_id
FROM unnest(%(tenants)s::text[], %(event_ids)s::text[]) AS k (tenant, event_id)
JOIN erased_events x ON x.tenant = k.tenant AND x.event_id = k.event_id
