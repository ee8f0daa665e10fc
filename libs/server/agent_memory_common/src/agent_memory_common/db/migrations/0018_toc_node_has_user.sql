-- Whether a TOC node holds an event of a user: one of the segments below it (the current tree,
-- each segment's latest version) cites an event with that user_id. The query service's user
-- filter on the TOC (years, children, TOC search: query toc/store.py, "By user") asks exactly
-- this for each node it would answer with; one definition instead of a copy per query.
CREATE FUNCTION toc_node_has_user(p_tenant text, p_node_id text, p_user_id text)
RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH RECURSIVE below AS (
        SELECT p_node_id AS node_id
        UNION ALL
        SELECT c.node_id FROM toc_nodes c JOIN below b ON c.parent_id = b.node_id
        WHERE c.tenant = p_tenant
    )
    SELECT EXISTS (
        SELECT 1
        FROM below b
        JOIN toc_nodes s ON s.tenant = p_tenant AND s.node_id = b.node_id AND s.level = 'segment'
        JOIN toc_node_versions sv
          ON sv.tenant = s.tenant AND sv.node_id = s.node_id AND sv.version = s.latest_version
        JOIN events e ON e.tenant = sv.tenant AND e.event_id = ANY(sv.event_ids)
        WHERE e.user_id = p_user_id
    )
$$;
