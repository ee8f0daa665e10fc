"""``TextIndex`` on OpenSearch (team mode, ``AGENT_MEMORY_OPENSEARCH_URL``).

The same shape as the Tantivy index: keyword fields for every filter, ``title`` and ``text``
analysed as English (stop words, stemming) and scored together with BM25 (``cross_fields``),
and the document id as ``_id`` so that a redelivery re-indexes the same document. The request
bodies are built by pure functions (``index_body``, ``bulk_upsert_body``, ``search_body``...)
so they can be checked without a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opensearchpy import AsyncOpenSearch
from opensearchpy.exceptions import ConnectionError as OSConnectionError
from opensearchpy.exceptions import NotFoundError, TransportError

from agent_memory_retrieval.docs import (
    Hit,
    IndexDoc,
    SearchFilter,
    as_utc,
    doc_from_json,
    doc_to_json,
)
from agent_memory_retrieval.ports import IndexUnavailableError
from agent_memory_retrieval.settings import RetrievalSettings

_UNAVAILABLE = (OSConnectionError, TransportError, OSError)


def index_body() -> dict[str, Any]:
    keyword = {"type": "keyword"}
    english = {"type": "text", "analyzer": "english"}
    return {
        "settings": {"index": {"number_of_shards": 1, "refresh_interval": "1s"}},
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "id": keyword,
                "type": keyword,
                "tenant": keyword,
                "project_id": keyword,
                "agent_id": keyword,
                "session_id": keyword,
                "ts": {"type": "date"},
                "level": keyword,
                "kind": keyword,
                "salience": {"type": "float"},
                "title": english,
                "text": english,
                "context": english,
                "event_ids": {"type": "keyword", "index": False},
            },
        },
    }


def bulk_upsert_body(index: str, docs: Sequence[IndexDoc]) -> list[dict[str, Any]]:
    latest = {doc.id: doc for doc in docs}  # the last copy of an id wins, as with upserts
    body: list[dict[str, Any]] = []
    for doc in latest.values():
        body.append({"index": {"_index": index, "_id": doc.id}})
        body.append(doc_to_json(doc))
    return body


def bulk_delete_body(index: str, ids: Sequence[str]) -> list[dict[str, Any]]:
    return [{"delete": {"_index": index, "_id": doc_id}} for doc_id in dict.fromkeys(ids)]


def filter_clauses(flt: SearchFilter) -> list[dict[str, Any]]:
    """The ``SearchFilter`` as non-scoring clauses; the tenant term is always the first."""
    clauses: list[dict[str, Any]] = [{"term": {"tenant": flt.tenant}}]
    for field, value in (
        ("project_id", flt.project_id),
        ("agent_id", flt.agent_id),
        ("session_id", flt.session_id),
    ):
        if value is not None:
            clauses.append({"term": {field: value}})
    for field, values in (("type", flt.types), ("kind", flt.kinds), ("level", flt.levels)):
        if values is not None:
            clauses.append({"terms": {field: list(values)}})
    if flt.since is not None or flt.until is not None:
        bounds: dict[str, str] = {}
        if flt.since is not None:
            bounds["gte"] = as_utc(flt.since).isoformat()
        if flt.until is not None:
            bounds["lt"] = as_utc(flt.until).isoformat()
        clauses.append({"range": {"ts": bounds}})
    return clauses


def search_body(query: str, flt: SearchFilter, limit: int) -> dict[str, Any]:
    return {
        "size": limit,
        "track_total_hits": False,
        # equal scores in id order, as the Tantivy adapter returns them: the engine's own order
        # of ties is where each document sits in its shards, which differs between two builds
        "sort": [{"_score": {"order": "desc"}}, {"id": {"order": "asc"}}],
        "query": {
            "bool": {
                # cross_fields scores title, text and context as if they were one field, as
                # Tantivy's ``body`` does, so both engines rank alike
                "must": [
                    {
                        "multi_match": {
                            "query": query,
                            "fields": ["title", "text", "context"],
                            "type": "cross_fields",
                            "operator": "or",
                        }
                    }
                ],
                "filter": filter_clauses(flt),
            }
        },
    }


def count_body(tenant: str) -> dict[str, Any]:
    return {"query": {"bool": {"filter": filter_clauses(SearchFilter(tenant))}}}


class OpenSearchIndex:
    def __init__(self, client: AsyncOpenSearch, index: str) -> None:
        self._client = client
        self._index = index
        self._ready = False

    @classmethod
    def from_settings(cls, settings: RetrievalSettings) -> OpenSearchIndex:
        hosts = [h.strip() for h in (settings.opensearch_url or "").split(",") if h.strip()]
        auth = None
        if settings.opensearch_user:
            auth = (settings.opensearch_user, settings.opensearch_password or "")
        client = AsyncOpenSearch(hosts=hosts, http_auth=auth, timeout=10, max_retries=1)
        return cls(client, settings.opensearch_index)

    async def _ensure(self) -> None:
        """Create the index on first use, not at open: the server may be down then."""
        if self._ready:
            return
        try:
            if not await self._client.indices.exists(index=self._index):
                await self._client.indices.create(
                    index=self._index, body=index_body(), params={"ignore": 400}
                )
            else:  # an index made by an older release: new fields are added, never changed
                await self._client.indices.put_mapping(
                    index=self._index,
                    body={"properties": index_body()["mappings"]["properties"]},
                )
        except _UNAVAILABLE as exc:
            raise _unavailable(exc) from exc
        self._ready = True

    async def _bulk(self, body: list[dict[str, Any]]) -> None:
        if not body:
            return
        await self._ensure()
        try:
            response = await self._client.bulk(body=body, params={"refresh": "wait_for"})
        except _UNAVAILABLE as exc:
            raise _unavailable(exc) from exc
        if response.get("errors"):
            failed = [
                item
                for item in response.get("items", [])
                for op in item.values()
                if op.get("status", 200) >= 300 and op.get("status") != 404  # 404: gone already
            ]
            if failed:
                raise RuntimeError(f"opensearch bulk rejected {len(failed)} item(s): {failed[:3]}")

    async def upsert(self, docs: Sequence[IndexDoc]) -> None:
        await self._bulk(bulk_upsert_body(self._index, docs))

    async def delete(self, ids: Sequence[str]) -> None:
        await self._bulk(bulk_delete_body(self._index, ids))

    async def clear(self) -> None:
        await self._ensure()
        try:
            await self._client.delete_by_query(
                index=self._index,
                body={"query": {"match_all": {}}},
                params={"refresh": "true", "conflicts": "proceed"},
            )
        except _UNAVAILABLE as exc:
            raise _unavailable(exc) from exc

    async def search(self, query: str, flt: SearchFilter, limit: int) -> list[Hit]:
        if not query.strip() or limit <= 0:
            return []
        await self._ensure()
        try:
            response = await self._client.search(
                index=self._index, body=search_body(query, flt, limit)
            )
        except _UNAVAILABLE as exc:
            raise _unavailable(exc) from exc
        hits = []
        for raw in response.get("hits", {}).get("hits", []):
            doc = doc_from_json(raw["_source"])
            if doc.tenant != flt.tenant:  # belt and braces: never hand out another tenant's doc
                continue
            hits.append(Hit(id=doc.id, score=float(raw.get("_score") or 0.0), doc=doc))
        return hits

    async def upgrade(self) -> None:
        """Nothing to do: the index and its mapping are created on first use (``_ensure``)."""

    async def expunge_deletes(self) -> int:
        """Merge away the segments' deleted documents (``only_expunge_deletes``): OpenSearch
        keeps a deleted document's source in its segment until a merge."""
        await self._ensure()
        try:
            await self._client.indices.forcemerge(
                index=self._index, params={"only_expunge_deletes": "true"}
            )
        except _UNAVAILABLE as exc:
            raise _unavailable(exc) from exc
        return 0

    async def count(self, tenant: str) -> int:
        await self._ensure()
        try:
            response = await self._client.count(index=self._index, body=count_body(tenant))
        except _UNAVAILABLE as exc:
            raise _unavailable(exc) from exc
        return int(response.get("count", 0))

    async def healthy(self) -> bool:
        try:
            return bool(await self._client.ping())
        except _UNAVAILABLE:
            return False

    async def close(self) -> None:
        await self._client.close()


def _unavailable(exc: Exception) -> IndexUnavailableError:
    if isinstance(exc, NotFoundError):
        return IndexUnavailableError(f"opensearch index missing: {exc}")
    return IndexUnavailableError(f"opensearch: {exc}")
