-- name: insert_episode
INSERT INTO episodes (tenant, episode_id, project_id, agent_id, session_id, task, metadata, tsv)
VALUES (%(tenant)s, %(episode_id)s, %(project_id)s, %(agent_id)s, %(session_id)s, %(task)s,
        %(metadata)s, to_tsvector('english', %(task)s))
ON CONFLICT (tenant, episode_id) DO NOTHING
RETURNING episode_id

-- name: episode_by_id
SELECT episode_id, project_id, agent_id, session_id, task, status, lessons, summary, value,
       metadata, actions_count, started_at, completed_at
FROM episodes
WHERE tenant = %(tenant)s AND episode_id = %(episode_id)s

-- name: lock_episode
SELECT status FROM episodes
WHERE tenant = %(tenant)s AND episode_id = %(episode_id)s
FOR UPDATE

-- name: insert_action
INSERT INTO episode_actions (tenant, episode_id, action_id, ts, action, result, ok, metadata)
VALUES (%(tenant)s, %(episode_id)s, %(action_id)s, coalesce(%(ts)s, now()), %(action)s,
        %(result)s, %(ok)s, %(metadata)s)
ON CONFLICT (tenant, episode_id, action_id) DO NOTHING
RETURNING seq

-- name: count_actions
UPDATE episodes SET actions_count = actions_count + %(added)s
WHERE tenant = %(tenant)s AND episode_id = %(episode_id)s
RETURNING actions_count

-- name: actions_of
SELECT action_id, ts, action, result, ok, metadata
FROM episode_actions
WHERE tenant = %(tenant)s AND episode_id = %(episode_id)s
ORDER BY seq
LIMIT %(limit)s

-- name: complete_episode
UPDATE episodes
SET status = %(outcome)s, lessons = %(lessons)s, summary = %(summary)s, value = %(value)s,
    completed_at = now(),
    tsv = to_tsvector('english', task || ' ' || coalesce(%(summary)s, '') || ' '
                      || array_to_string(%(lessons)s::text[], ' '))
WHERE tenant = %(tenant)s AND episode_id = %(episode_id)s AND status = 'running'
RETURNING episode_id

-- name: similar_episodes
-- Any of the query's words (an OR of its lexemes, not websearch's AND), ranked by cover density
-- normalised to 0..1, weighted by the episode's value so that a success that taught something
-- comes before a failure that taught nothing.
WITH q AS (
    SELECT nullif(replace(plainto_tsquery('english', %(q)s)::text, ' & ', ' | '), '')::tsquery
           AS query
)
SELECT e.episode_id, e.project_id, e.agent_id, e.session_id, e.task, e.status, e.lessons,
       e.summary, e.value, e.metadata, e.actions_count, e.started_at, e.completed_at,
       ts_rank_cd(e.tsv, q.query, 32) * (0.5 + 0.5 * coalesce(e.value, 0.5)) AS score
FROM episodes e, q
WHERE e.tenant = %(tenant)s
  AND q.query IS NOT NULL
  AND e.status <> 'running'
  AND (%(project_id)s::text IS NULL OR e.project_id = %(project_id)s)
  AND (%(outcome)s::text IS NULL OR e.status = %(outcome)s)
  AND e.tsv @@ q.query
ORDER BY score DESC, e.completed_at DESC
LIMIT %(limit)s

-- name: playbook_lock
SELECT pg_advisory_xact_lock(hashtextextended(%(tenant)s || '/' || %(project_id)s, 7))

-- name: playbook_rows
SELECT entry_id, section, text, helpful, harmful, neutral, embedder, embedding, created_at,
       updated_at
FROM playbook_entries
WHERE tenant = %(tenant)s AND project_id = %(project_id)s
  AND (%(section)s::text IS NULL OR section = %(section)s)
ORDER BY updated_at DESC
LIMIT %(limit)s

-- name: playbook_reembed
UPDATE playbook_entries SET embedder = %(embedder)s, embedding = %(embedding)s
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND entry_id = %(entry_id)s

-- name: playbook_insert
INSERT INTO playbook_entries (tenant, project_id, entry_id, section, text, helpful, harmful,
                              neutral, embedder, embedding, sources)
VALUES (%(tenant)s, %(project_id)s, %(entry_id)s, %(section)s, %(text)s, %(helpful)s,
        %(harmful)s, %(neutral)s, %(embedder)s, %(embedding)s, %(sources)s)

-- name: playbook_mark
-- Counts only grow; the newest sources are kept (the last 20), enough to trace an entry back.
UPDATE playbook_entries
SET helpful = helpful + %(helpful)s, harmful = harmful + %(harmful)s,
    neutral = neutral + %(neutral)s, updated_at = now(),
    sources = (SELECT coalesce(jsonb_agg(s ORDER BY n), '[]'::jsonb) FROM (
                   SELECT s, n FROM jsonb_array_elements(sources || %(sources)s) WITH ORDINALITY
                       AS t(s, n)
                   ORDER BY n DESC LIMIT 20) recent)
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND entry_id = %(entry_id)s
RETURNING entry_id

-- name: submission_get
SELECT results FROM playbook_submissions
WHERE tenant = %(tenant)s AND project_id = %(project_id)s AND submission_id = %(submission_id)s

-- name: submission_put
INSERT INTO playbook_submissions (tenant, project_id, submission_id, results)
VALUES (%(tenant)s, %(project_id)s, %(submission_id)s, %(results)s)
