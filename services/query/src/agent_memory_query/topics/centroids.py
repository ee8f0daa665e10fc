"""Topic centroids kept in the process, read again only where a topic changed.

A search by meaning scores the query against the centroid of every topic in scope. Read from
Postgres on every search (384 floats a topic, sent as text and parsed), the 2,110 topics of a
1,000,000-event store took ~150 ms, most of an explore search's time, for rows that change
only when the topics service reclusters a project. Each search now asks Postgres for one
figure summing the scope's row versions (~1 ms for those 2,110 topics); only when it moved
does it list the versions and read the rows of new or changed topics. A row's version is
``xmin`` (the transaction that wrote this version of the row: every update or re-insert
changes it) with ``updated_at``, so that a database made again at the same address cannot pass
its rows off as the old one's. A search still sees the topics committed when it asks, deleted
ones gone, as without the cache.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from psycopg import AsyncConnection

from agent_memory_query.topics.queries import rows as _rows

if TYPE_CHECKING:  # numpy is imported where vectors are compared: not at the service's start
    import numpy as np

SCOPES = 64  # (database, tenant, project) scopes kept, least recently searched dropped first
# and at most this many topics in all (~3 KB each with their matrix row: ~150 MB), so that a
# deployment with many large tenants bounds the cache, not the other way round
TOPICS = 50_000

_Key = tuple[str, str, str | None]


@dataclass(frozen=True)
class Topic:
    topic_id: str
    version: str
    label: str
    keywords: tuple[str, ...]
    centroid: np.ndarray  # float32, as stored (its length is the topics service's model's)


@dataclass
class Scope:
    """The topics of one (tenant, project), or of the whole tenant, in ``topic_id`` order."""

    topics: list[Topic] = field(default_factory=list)
    digest: tuple[int, str] = (0, "")  # ``topic_digest`` when listed (or older: never newer)
    _matrices: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return [t.topic_id for t in self.topics]

    def matrix(self, dim: int) -> np.ndarray:
        import numpy as np

        """Centroids as rows, made once per scope version; a centroid of another length
        (written with another model) is a zero row, which scores 0 and is never a match."""
        made = self._matrices.get(dim)
        if made is None:
            made = np.zeros((len(self.topics), dim), dtype=np.float32)
            for i, topic in enumerate(self.topics):
                if topic.centroid.shape == (dim,):
                    made[i] = topic.centroid
            self._matrices[dim] = made
        return made


class CentroidCache:
    def __init__(self, scopes: int = SCOPES, topics: int = TOPICS) -> None:
        self._size = scopes
        self._topics = topics
        self._scopes: OrderedDict[_Key, Scope] = OrderedDict()
        self.rows_read = 0  # topic rows fetched whole since start (for tests and tuning)

    async def scope(self, conn: AsyncConnection, tenant: str, project_id: str | None) -> Scope:
        info = conn.info
        key: _Key = (f"{info.host}:{info.port}/{info.dbname}", tenant, project_id)
        (row,) = await _rows(conn, "topic_digest", tenant=tenant, project_id=project_id)
        digest = (int(row["topics"]), str(row["digest"]))
        known = self._scopes.get(key)
        if known is not None and known.digest == digest:
            self._scopes.move_to_end(key)
            return known
        versions = {
            row["topic_id"]: row["version"]
            for row in await _rows(conn, "topic_versions", tenant=tenant, project_id=project_id)
        }
        kept = {
            t.topic_id: t
            for t in (known.topics if known is not None else ())
            if versions.get(t.topic_id) == t.version
        }
        missing = sorted(set(versions) - set(kept))
        import numpy as np

        for row in await _rows(conn, "topic_rows", tenant=tenant, ids=missing) if missing else []:
            # a topic changed or deleted since the listing: take the row as it is now (its
            # own version; the next listing will agree), or leave it out
            kept[row["topic_id"]] = Topic(
                topic_id=row["topic_id"],
                version=row["version"],
                label=row["label"],
                keywords=tuple(row["keywords"]),
                centroid=np.asarray(row["centroid"], dtype=np.float32),
            )
        self.rows_read += len(missing)
        # taken before the listing: a write in between makes the next search list again
        scope = Scope(topics=[kept[t] for t in sorted(kept)], digest=digest)
        self._scopes[key] = scope
        self._scopes.move_to_end(key)
        while len(self._scopes) > self._size or (
            len(self._scopes) > 1 and self.topics_kept > self._topics
        ):
            self._scopes.popitem(last=False)  # the scope just read stays: it is being used
        return scope

    @property
    def topics_kept(self) -> int:
        return sum(len(s.topics) for s in self._scopes.values())
