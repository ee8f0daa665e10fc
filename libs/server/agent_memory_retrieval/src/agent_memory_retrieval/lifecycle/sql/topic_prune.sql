-- Topic pruning (topic_prune.py): the one query of the retention pruner's "topics" step and of
-- the topics service's own timer.

-- name: topic_prune
-- Topics whose importance is below %(below)s: importance = sum over the members of salience x 0.5 ^
-- (age / half-life), age = asof - the member's end (never negative); a topic without members scores
-- 0. asof is least(%(now)s, the project's latest activity: its newest segment's end), the clock the
-- topic listing values topics by (query service, topics.sql, written out again here because the two
-- live in different packages): valued as of the wall clock, every topic of sessions imported months
-- after they happened fell below the default 0.05 on the first hourly run; this way a project left
-- alone keeps its topics, and a topic is pruned only when it has faded relative to its own
-- project's activity. A topic's time is its newest member's end (its creation without members).
-- Ordered by (time, tenant, topic id), at most %(limit)s rows; `total` counts every candidate in
-- scope (before the limit). With %(delete)s those rows are deleted in the same statement and only
-- the deleted ones are returned: the topic's topic_members and topic_edges rows go with it (ON
-- DELETE CASCADE), its segments stay in topic_segments, unassigned.
WITH scored AS (
    SELECT t.tenant, t.topic_id, t.project_id, t.label,
           coalesce(max(s.end_ts), t.created_at) AS ts,
           coalesce(sum(s.salience * power(0.5,
               greatest(extract(epoch FROM w.asof - s.end_ts), 0)
               / (%(half_life_days)s::float8 * 86400.0))), 0) AS importance
    FROM topics AS t
    CROSS JOIN LATERAL (
        SELECT least(%(now)s::timestamptz, (
            SELECT max(ls.end_ts) FROM topic_segments AS ls
            WHERE ls.tenant = t.tenant AND ls.project_id = t.project_id)) AS asof
    ) AS w
    LEFT JOIN topic_members AS m ON m.tenant = t.tenant AND m.topic_id = t.topic_id
    LEFT JOIN topic_segments AS s ON s.tenant = m.tenant AND s.node_id = m.node_id
    WHERE (%(tenant)s::text IS NULL OR t.tenant = %(tenant)s::text)
      AND (%(project_id)s::text IS NULL OR t.project_id = %(project_id)s::text)
    GROUP BY t.tenant, t.topic_id, w.asof
),
doomed AS (
    SELECT tenant, topic_id, project_id, label, ts, importance, count(*) OVER () AS total
    FROM scored
    WHERE importance < %(below)s::float8
    ORDER BY ts, tenant, topic_id
    LIMIT %(limit)s::integer
),
gone AS (
    DELETE FROM topics AS t USING doomed AS d
    WHERE %(delete)s::boolean AND t.tenant = d.tenant AND t.topic_id = d.topic_id
    RETURNING t.tenant, t.topic_id
)
SELECT d.tenant, d.topic_id AS doc_id, d.project_id, d.ts, d.label AS excerpt, d.importance,
       d.total
FROM doomed AS d
LEFT JOIN gone AS g ON g.tenant = d.tenant AND g.topic_id = d.topic_id
WHERE NOT %(delete)s::boolean OR g.topic_id IS NOT NULL
ORDER BY d.ts, d.tenant, d.topic_id
