"""Usage feedback: what an agent *used*, the input of the ranking's usage factor.

A memory is used when an agent opens it by id (an event, a grip, a TOC node: what MCP's
``memory_expand`` does) or pins it. Being returned by a search is not being used: a search
records nothing, so two identical searches on an unchanged store rank alike (issue 53, point
6). The counts go to ``search_access`` through the search runtime's ``AccessRecorder`` (batched,
off the request's path); with search not ready, nothing is counted.
"""

from __future__ import annotations

from agent_memory_query.context import QueryContext
from agent_memory_retrieval.docs import event_doc_id, grip_doc_id, node_doc_id


def used(ctx: QueryContext, tenant: str, doc_id: str) -> None:
    """Count one use of the search document ``doc_id`` (``event:<tenant>:<id>``, ...)."""
    if ctx.search is not None:
        ctx.search.access.record(tenant, [doc_id])


def used_event(ctx: QueryContext, tenant: str, event_id: str) -> None:
    used(ctx, tenant, event_doc_id(tenant, event_id))


def used_grip(ctx: QueryContext, tenant: str, grip_id: str) -> None:
    used(ctx, tenant, grip_doc_id(tenant, grip_id))


def used_node(ctx: QueryContext, tenant: str, node_id: str) -> None:
    used(ctx, tenant, node_doc_id(tenant, node_id))
