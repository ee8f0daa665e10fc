-- The scope of an erasure, as a filter on events (every scope is within one project).
-- name: tombstone_scope
INSERT INTO erased_events (tenant, event_id, erasure_id, project_id, session_id, ts)
SELECT e.tenant, e.event_id, %(erasure_id)s, e.project_id, e.session_id, e.ts
FROM events e
WHERE e.tenant = %(tenant)s AND e.project_id = %(project_id)s
  AND (%(session_id)s::text IS NULL OR e.session_id = %(session_id)s::text)
  AND (%(agent_id)s::text IS NULL OR e.agent_id = %(agent_id)s::text)
  AND (%(user_id)s::text IS NULL OR e.user_id = %(user_id)s::text)
  AND (%(event_ids)s::text[] IS NULL OR e.event_id = ANY(%(event_ids)s::text[]))
ON CONFLICT (tenant, event_id) DO NOTHING

-- name: tombstone_duplicates
-- The stored copies of an erased event (dedup at ingest, docs/lifecycle.md (dedup)) hold the same text:
-- they are erased with it.
INSERT INTO erased_events (tenant, event_id, erasure_id, project_id, session_id, ts)
SELECT e.tenant, e.event_id, %(erasure_id)s, e.project_id, e.session_id, e.ts
FROM event_duplicates d
JOIN erased_events x ON x.tenant = d.tenant AND x.event_id = d.duplicate_of
JOIN events e ON e.tenant = d.tenant AND e.event_id = d.event_id
WHERE x.erasure_id = %(erasure_id)s
ON CONFLICT (tenant, event_id) DO NOTHING

-- name: preview_events
SELECT count(*) AS events, count(DISTINCT e.session_id) AS sessions,
       (array_agg(DISTINCT e.session_id))[1:20] AS some_sessions
FROM events e
WHERE e.tenant = %(tenant)s AND e.project_id = %(project_id)s
  AND (%(session_id)s::text IS NULL OR e.session_id = %(session_id)s::text)
  AND (%(agent_id)s::text IS NULL OR e.agent_id = %(agent_id)s::text)
  AND (%(user_id)s::text IS NULL OR e.user_id = %(user_id)s::text)
  AND (%(event_ids)s::text[] IS NULL OR e.event_id = ANY(%(event_ids)s::text[]))

-- name: preview_derived
-- Derived rows naming the events of the scope (a dry run: a CTE instead of tombstones).
WITH scope AS (
    SELECT e.event_id FROM events e
    WHERE e.tenant = %(tenant)s AND e.project_id = %(project_id)s
      AND (%(session_id)s::text IS NULL OR e.session_id = %(session_id)s::text)
      AND (%(agent_id)s::text IS NULL OR e.agent_id = %(agent_id)s::text)
      AND (%(user_id)s::text IS NULL OR e.user_id = %(user_id)s::text)
      AND (%(event_ids)s::text[] IS NULL OR e.event_id = ANY(%(event_ids)s::text[]))
)
SELECT
    (SELECT count(*) FROM segments s
     WHERE s.tenant = %(tenant)s AND s.project_id = %(project_id)s
       AND EXISTS (SELECT 1 FROM unnest(s.event_ids) u (id) JOIN scope ON scope.event_id = u.id)
    ) AS segments,
    (SELECT count(*) FROM toc_node_versions v
     WHERE v.tenant = %(tenant)s AND v.project_id = %(project_id)s AND v.level = 'segment'
       AND EXISTS (SELECT 1 FROM unnest(v.event_ids) u (id) JOIN scope ON scope.event_id = u.id)
    ) AS segment_node_versions,
    (SELECT count(*) FROM toc_grips g
     WHERE g.tenant = %(tenant)s AND g.project_id = %(project_id)s
       AND EXISTS (SELECT 1 FROM unnest(g.event_ids) u (id) JOIN scope ON scope.event_id = u.id)
    ) AS grips

-- name: preview_episodes
SELECT count(*) FROM episodes
WHERE tenant = %(tenant)s AND project_id = %(project_id)s
  AND (%(project)s OR (%(session_id)s::text IS NOT NULL AND session_id = %(session_id)s::text)
       OR (%(agent_id)s::text IS NOT NULL AND agent_id = %(agent_id)s::text))

-- name: snapshot_grips
-- Grips citing an erased event: named now, so an index drops their documents even after the
-- summarizer deleted the rows. A join on the tombstones' key, not an EXISTS per grip: that one
-- hashed every tombstone of the erasure once per grip (a 100,000-event project: 6,300 grips x
-- 100,000 rows, minutes inside the request).
INSERT INTO erasure_items (erasure_id, tenant, kind, item_id)
SELECT DISTINCT %(erasure_id)s, g.tenant, 'grip', g.grip_id
FROM toc_grips g
CROSS JOIN LATERAL unnest(g.event_ids) AS u (event_id)
JOIN erased_events x ON x.tenant = g.tenant AND x.event_id = u.event_id
WHERE g.tenant = %(tenant)s AND g.project_id = %(project_id)s
  AND x.erasure_id = %(erasure_id)s
ON CONFLICT DO NOTHING

-- name: analyze_tombstones
-- The tombstones just written can be most of erased_events (a whole project): without fresh
-- statistics the planner takes "erasure_id = X" for one row, and every later query of this
-- erasure (here and in each participant) plans for one tombstone. ANALYZE counts the rows of
-- its own transaction.
ANALYZE erased_events

-- name: snapshot_needles
-- A few phrases of the erased text for the verifier (deleted once verified): only phrases no
-- remaining event of the project says too, or the verifier would find the text the erasure
-- rightly left (the same sentence in another session) and never be satisfied. The remaining
-- texts are normalised once (not once per phrase: 100 phrases x a 100,000-event project was
-- over a minute inside the request), and a whole project leaves none to compare.
WITH remaining AS MATERIALIZED (
    SELECT lower(regexp_replace(r.text, '\s+', ' ', 'g')) AS text
    FROM events r
    WHERE r.tenant = %(tenant)s AND r.project_id = %(project_id)s
      AND NOT EXISTS (
          SELECT 1 FROM erased_events y WHERE y.tenant = r.tenant AND y.event_id = r.event_id
      )
),
candidates AS MATERIALIZED (
    SELECT DISTINCT n.needle
    FROM (
        SELECT lower(left(btrim(regexp_replace(e.text, '\s+', ' ', 'g')), 48)) AS needle
        FROM erased_events x
        JOIN events e ON e.tenant = x.tenant AND e.event_id = x.event_id
        WHERE x.erasure_id = %(erasure_id)s AND char_length(e.text) >= 24
        ORDER BY char_length(e.text) DESC
        LIMIT %(limit)s * 4
    ) AS n
    WHERE char_length(n.needle) >= 16
)
INSERT INTO erasure_needles (erasure_id, needle)
SELECT %(erasure_id)s, c.needle
FROM candidates c
WHERE NOT EXISTS (SELECT 1 FROM remaining m WHERE strpos(m.text, c.needle) > 0)
LIMIT %(limit)s
ON CONFLICT DO NOTHING

-- name: insert_erasure
INSERT INTO erasures (erasure_id, tenant, project_id, scope, requested_by, event_count)
VALUES (%(erasure_id)s, %(tenant)s, %(project_id)s, %(scope)s::jsonb, %(requested_by)s, 0)

-- name: set_event_count
UPDATE erasures SET event_count = (
    SELECT count(*) FROM erased_events WHERE erasure_id = %(erasure_id)s
) WHERE erasure_id = %(erasure_id)s
RETURNING event_count

-- name: get_erasure
SELECT erasure_id, tenant, project_id, scope, requested_by, requested_at, status,
       event_count, findings, streams, published_at, verified_at
FROM erasures WHERE tenant = %(tenant)s AND erasure_id = %(erasure_id)s

-- name: list_erasures
SELECT erasure_id, tenant, project_id, scope, requested_by, requested_at, status,
       event_count, findings, streams, published_at, verified_at
FROM erasures
WHERE tenant = %(tenant)s AND (%(project_id)s::text IS NULL OR project_id = %(project_id)s::text)
ORDER BY requested_at DESC, erasure_id DESC
LIMIT %(limit)s

-- name: reports
SELECT participant, counts FROM erasure_reports WHERE erasure_id = %(erasure_id)s

-- name: participants
SELECT name FROM erasure_participants ORDER BY name

-- name: open_erasures
SELECT erasure_id, tenant, project_id, scope, status, streams, published_at
FROM erasures WHERE status <> 'verified'
ORDER BY requested_at
LIMIT 20

-- name: mark_published
UPDATE erasures SET published_at = now() WHERE erasure_id = %(erasure_id)s

-- name: mark_purged
UPDATE erasures SET streams = %(streams)s::jsonb, status = 'verifying'
WHERE erasure_id = %(erasure_id)s

-- name: mark_findings
UPDATE erasures SET findings = %(findings)s::jsonb WHERE erasure_id = %(erasure_id)s

-- name: mark_verified
UPDATE erasures SET status = 'verified', verified_at = now(), findings = '{}'::jsonb
WHERE erasure_id = %(erasure_id)s

-- name: drop_needles
DELETE FROM erasure_needles WHERE erasure_id = %(erasure_id)s

-- name: needles
SELECT needle FROM erasure_needles WHERE erasure_id = %(erasure_id)s ORDER BY needle

-- name: erased_ids
SELECT event_id FROM erased_events WHERE erasure_id = %(erasure_id)s

-- name: toc_version_keys
SELECT node_id, version FROM toc_node_versions
WHERE tenant = %(tenant)s AND project_id = %(project_id)s

-- Verification: each counts what still holds an erased id or phrase.
-- name: check_events
SELECT count(*) FROM erased_events x
JOIN events e ON e.tenant = x.tenant AND e.event_id = x.event_id
WHERE x.erasure_id = %(erasure_id)s

-- name: check_segments
SELECT count(*) FROM segments s
WHERE s.tenant = %(tenant)s AND s.project_id = %(project_id)s
  AND EXISTS (
      SELECT 1 FROM unnest(s.event_ids) AS u (event_id)
      JOIN erased_events x ON x.tenant = s.tenant AND x.event_id = u.event_id
      WHERE x.erasure_id = %(erasure_id)s
  )

-- name: check_segment_versions
SELECT count(*) FROM segment_versions v
JOIN segments s ON s.tenant = v.tenant AND s.segment_id = v.segment_id
WHERE s.tenant = %(tenant)s AND s.project_id = %(project_id)s
  AND EXISTS (
      SELECT 1 FROM jsonb_array_elements_text(v.payload -> 'event_ids') AS u (event_id)
      JOIN erased_events x ON x.tenant = v.tenant AND x.event_id = u.event_id
      WHERE x.erasure_id = %(erasure_id)s
  )

-- name: check_toc
SELECT count(*) FROM toc_node_versions v
WHERE v.tenant = %(tenant)s AND v.project_id = %(project_id)s
  AND (
      EXISTS (
          SELECT 1 FROM unnest(v.event_ids) AS u (event_id)
          JOIN erased_events x ON x.tenant = v.tenant AND x.event_id = u.event_id
          WHERE x.erasure_id = %(erasure_id)s
      )
      OR EXISTS (
          SELECT 1 FROM erasure_needles n
          WHERE n.erasure_id = %(erasure_id)s
            AND strpos(lower(v.title || ' ' || v.bullets::text || ' ' || v.search_text),
                       n.needle) > 0
      )
  )

-- name: check_grips
SELECT count(*) FROM toc_grips g
WHERE g.tenant = %(tenant)s AND g.project_id = %(project_id)s
  AND (
      EXISTS (
          SELECT 1 FROM unnest(g.event_ids) AS u (event_id)
          JOIN erased_events x ON x.tenant = g.tenant AND x.event_id = u.event_id
          WHERE x.erasure_id = %(erasure_id)s
      )
      OR EXISTS (
          SELECT 1 FROM erasure_needles n
          WHERE n.erasure_id = %(erasure_id)s AND strpos(lower(g.excerpt), n.needle) > 0
      )
  )

-- name: check_episodes
SELECT count(*) FROM episodes p
WHERE p.tenant = %(tenant)s AND p.project_id = %(project_id)s
  AND (
      %(project)s
      OR (%(session_id)s::text IS NOT NULL AND p.session_id = %(session_id)s::text)
      OR (%(agent_id)s::text IS NOT NULL AND p.agent_id = %(agent_id)s::text)
      OR EXISTS (
          SELECT 1 FROM erasure_needles n
          WHERE n.erasure_id = %(erasure_id)s
            AND strpos(lower(p.task || ' ' || coalesce(p.summary, '') || ' '
                             || array_to_string(p.lessons, ' ')), n.needle) > 0
      )
  )

-- name: check_supersession
-- The statements and links the summarizer keeps for supersession (issue 13 item 4).
SELECT (SELECT count(*) FROM memory_statements s
        WHERE s.tenant = %(tenant)s AND s.project_id = %(project_id)s
          AND (EXISTS (SELECT 1 FROM erased_events x
                       WHERE x.tenant = s.tenant AND x.event_id = s.event_id
                         AND x.erasure_id = %(erasure_id)s)
               OR EXISTS (SELECT 1 FROM erasure_needles n
                          WHERE n.erasure_id = %(erasure_id)s
                            AND strpos(lower(s.text), n.needle) > 0)))
     + (SELECT count(*) FROM memory_supersessions m
        WHERE m.tenant = %(tenant)s AND m.project_id = %(project_id)s
          AND EXISTS (SELECT 1 FROM erased_events x
                      WHERE x.tenant = m.tenant AND x.erasure_id = %(erasure_id)s
                        AND x.event_id IN (m.older_event_id, m.newer_event_id)))

-- name: check_topic_segments
-- The topics service's copy of segment titles and bullets (issue 14).
SELECT count(*) FROM topic_segments s
WHERE s.tenant = %(tenant)s AND s.project_id = %(project_id)s
  AND (
      EXISTS (
          SELECT 1 FROM unnest(s.event_ids) AS u (event_id)
          JOIN erased_events x ON x.tenant = s.tenant AND x.event_id = u.event_id
          WHERE x.erasure_id = %(erasure_id)s
      )
      OR EXISTS (
          SELECT 1 FROM erasure_needles n
          WHERE n.erasure_id = %(erasure_id)s AND strpos(lower(s.text), n.needle) > 0
      )
  )

-- name: check_vectors
-- pgvector's table, when that is the vector index (else the search check covers it).
SELECT count(*) FROM vector_docs d
WHERE d.tenant = %(tenant)s AND d.project_id = %(project_id)s
  AND (
      EXISTS (
          SELECT 1 FROM unnest(d.event_ids) AS u (event_id)
          JOIN erased_events x ON x.tenant = d.tenant AND x.event_id = u.event_id
          WHERE x.erasure_id = %(erasure_id)s
      )
      OR EXISTS (
          SELECT 1 FROM erasure_needles n
          WHERE n.erasure_id = %(erasure_id)s
            AND strpos(lower(d.title || ' ' || d.text), n.needle) > 0
      )
  )

-- name: vectors_present
SELECT to_regclass('vector_docs') IS NOT NULL

-- Episodes and playbook: the query service's own part of an erasure.
-- name: erase_episode_actions
DELETE FROM episode_actions a USING episodes p
WHERE a.tenant = p.tenant AND a.episode_id = p.episode_id
  AND p.tenant = %(tenant)s AND p.project_id = %(project_id)s
  AND (%(project)s
       OR (%(session_id)s::text IS NOT NULL AND p.session_id = %(session_id)s::text)
       OR (%(agent_id)s::text IS NOT NULL AND p.agent_id = %(agent_id)s::text))

-- name: erase_episodes
DELETE FROM episodes p
WHERE p.tenant = %(tenant)s AND p.project_id = %(project_id)s
  AND (%(project)s
       OR (%(session_id)s::text IS NOT NULL AND p.session_id = %(session_id)s::text)
       OR (%(agent_id)s::text IS NOT NULL AND p.agent_id = %(agent_id)s::text))

-- name: erase_playbook
-- The whole project, or the lessons an erased agent contributed.
DELETE FROM playbook_entries b
WHERE b.tenant = %(tenant)s AND b.project_id = %(project_id)s
  AND (%(project)s
       OR (%(agent_id)s::text IS NOT NULL
           AND b.sources @> jsonb_build_array(jsonb_build_object('agent_id', %(agent_id)s::text))))

-- name: erase_playbook_submissions
DELETE FROM playbook_submissions
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND %(project)s

-- name: erase_recall_usage
-- What recall injected into the erased project or session (counts and the session's id).
DELETE FROM recall_usage
WHERE tenant = %(tenant)s AND project_id = %(project_id)s
  AND (%(project)s OR (%(session_id)s::text IS NOT NULL AND session_id = %(session_id)s::text))

-- name: events_since_page
SELECT seq, event_id, text FROM events
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND ts >= %(since)s
  AND seq > %(after)s
ORDER BY seq
LIMIT %(limit)s
