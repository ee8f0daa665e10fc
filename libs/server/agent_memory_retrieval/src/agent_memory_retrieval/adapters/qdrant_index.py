"""``VectorIndex`` on Qdrant (team mode, ``AGENT_MEMORY_QDRANT_URL``).

Point ids are UUIDv5 of the document id (Qdrant accepts only UUIDs and integers), so the same
document always lands on the same point and a redelivery overwrites it. The payload is the
document's JSON plus ``ts_epoch`` for range filters; every filterable field gets a payload
index, with ``tenant`` marked as the tenant key (Qdrant co-locates each tenant's points).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import httpx
from qdrant_client import AsyncQdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from agent_memory_retrieval.docs import (
    Hit,
    IndexDoc,
    SearchFilter,
    as_utc,
    doc_from_json,
    doc_to_json,
)
from agent_memory_retrieval.ports import EMBEDDING_DIM, IndexUnavailableError

_ID_NAMESPACE = uuid.UUID("6c1d3b1e-3f0e-4a53-9d0c-6a6d656d6f72")  # fixed: ids must not move
_KEYWORDS = ("type", "project_id", "agent_id", "session_id", "level", "kind")
_UNAVAILABLE = (ResponseHandlingException, UnexpectedResponse, httpx.HTTPError, OSError)


def point_id(doc_id: str) -> str:
    return str(uuid.uuid5(_ID_NAMESPACE, doc_id))


class QdrantIndex:
    def __init__(self, client: AsyncQdrantClient, collection: str, *, local: bool = False) -> None:
        self._client = client
        self._collection = collection
        self._local = local  # qdrant-client's local mode has no payload indexes
        self._ready = False

    @classmethod
    async def open(
        cls,
        *,
        url: str | None = None,
        api_key: str | None = None,
        collection: str = "agent_memory",
        location: str | None = None,
    ) -> QdrantIndex:
        """``location=":memory:"`` runs qdrant-client's local mode (contract tests only)."""
        if location is not None:
            return cls(AsyncQdrantClient(location=location), collection, local=True)
        return cls(AsyncQdrantClient(url=url, api_key=api_key, timeout=10), collection)

    async def _ensure(self) -> None:
        """Create the collection on first use, not at open: the server may be down then."""
        if self._ready:
            return
        try:
            if not await self._client.collection_exists(self._collection):
                await self._client.create_collection(
                    self._collection,
                    vectors_config=models.VectorParams(
                        size=EMBEDDING_DIM, distance=models.Distance.COSINE
                    ),
                    hnsw_config=models.HnswConfigDiff(m=16, ef_construct=64),
                )
                if not self._local:
                    await self._payload_indexes()
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"qdrant: {exc}") from exc
        self._ready = True

    async def _payload_indexes(self) -> None:
        await self._client.create_payload_index(
            self._collection,
            "tenant",
            field_schema=models.KeywordIndexParams(
                type=models.KeywordIndexType.KEYWORD, is_tenant=True
            ),
        )
        for name in _KEYWORDS:
            await self._client.create_payload_index(
                self._collection, name, field_schema=models.PayloadSchemaType.KEYWORD
            )
        for name in ("ts_epoch", "salience"):
            await self._client.create_payload_index(
                self._collection, name, field_schema=models.PayloadSchemaType.FLOAT
            )

    async def upsert(self, docs: Sequence[IndexDoc], vectors: Sequence[Sequence[float]]) -> None:
        if len(docs) != len(vectors):
            raise ValueError(f"{len(docs)} documents but {len(vectors)} vectors")
        if not docs:
            return
        await self._ensure()
        points = {}
        for doc, vector in zip(docs, vectors, strict=True):
            if len(vector) != EMBEDDING_DIM:
                raise ValueError(f"expected a {EMBEDDING_DIM}-d vector, got {len(vector)}")
            payload: dict[str, Any] = doc_to_json(doc)
            payload.pop("context", None)  # BM25's alone (a segment's whole text), as in pgvector
            payload["ts_epoch"] = as_utc(doc.ts).timestamp()
            points[doc.id] = models.PointStruct(
                id=point_id(doc.id), vector=[float(x) for x in vector], payload=payload
            )
        try:
            await self._client.upsert(self._collection, points=list(points.values()), wait=True)
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"qdrant: {exc}") from exc

    async def delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        await self._ensure()
        selector = models.PointIdsList(points=[point_id(i) for i in ids])
        try:
            await self._client.delete(self._collection, points_selector=selector, wait=True)
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"qdrant: {exc}") from exc

    async def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        await self._ensure()
        by_point = {point_id(i): i for i in ids}
        try:
            points = await self._client.retrieve(
                self._collection, ids=list(by_point), with_payload=False, with_vectors=True
            )
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"qdrant: {exc}") from exc
        out: dict[str, list[float]] = {}
        for point in points:
            vector = point.vector
            if isinstance(vector, list) and str(point.id) in by_point:
                out[by_point[str(point.id)]] = [float(x) for x in vector]  # type: ignore[arg-type]
        return out

    async def clear(self) -> None:
        try:
            if await self._client.collection_exists(self._collection):
                await self._client.delete_collection(self._collection)
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"qdrant: {exc}") from exc
        self._ready = False
        await self._ensure()

    async def search(self, vector: Sequence[float], flt: SearchFilter, limit: int) -> list[Hit]:
        if limit <= 0:
            return []
        await self._ensure()
        try:
            response = await self._client.query_points(
                self._collection,
                query=[float(x) for x in vector],
                query_filter=qdrant_filter(flt),
                limit=limit,
                with_payload=True,
            )
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"qdrant: {exc}") from exc
        hits = []
        for point in response.points:
            doc = doc_from_json(point.payload or {})
            hits.append(Hit(id=doc.id, score=float(point.score), doc=doc))
        return hits

    async def count(self, tenant: str) -> int:
        await self._ensure()
        try:
            result = await self._client.count(
                self._collection, count_filter=qdrant_filter(SearchFilter(tenant)), exact=True
            )
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"qdrant: {exc}") from exc
        return int(result.count)

    async def healthy(self) -> bool:
        try:
            await self._ensure()
            await self._client.get_collections()
        except (IndexUnavailableError, *_UNAVAILABLE):
            return False
        return True

    async def close(self) -> None:
        await self._client.close()


def qdrant_filter(flt: SearchFilter) -> models.Filter:
    """The ``SearchFilter`` as Qdrant conditions; the tenant condition is always there."""
    must: list[models.Condition] = [
        models.FieldCondition(key="tenant", match=models.MatchValue(value=flt.tenant))
    ]
    for key, value in (
        ("project_id", flt.project_id),
        ("agent_id", flt.agent_id),
        ("session_id", flt.session_id),
    ):
        if value is not None:
            must.append(models.FieldCondition(key=key, match=models.MatchValue(value=value)))
    for key, values in (("type", flt.types), ("kind", flt.kinds), ("level", flt.levels)):
        if values is not None:
            if not values:  # "any of nothing" matches nothing
                must.append(models.HasIdCondition(has_id=[]))
            else:
                must.append(models.FieldCondition(key=key, match=models.MatchAny(any=list(values))))
    if flt.since is not None or flt.until is not None:
        must.append(
            models.FieldCondition(
                key="ts_epoch",
                range=models.Range(
                    gte=as_utc(flt.since).timestamp() if flt.since is not None else None,
                    lt=as_utc(flt.until).timestamp() if flt.until is not None else None,
                ),
            )
        )
    return models.Filter(must=must)
