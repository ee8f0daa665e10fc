"""Vectors staged by an import, taken by the embedder instead of running the model.

``agent-memory export --vectors`` writes, for each exported event that the vector index holds,
the vector, the SHA-256 of the text it was made from and the deployment's vector space
(``RetrievalSettings.vector_space``). ``agent-memory import`` stages them in
``staged_vectors`` (migration 0026) before it posts the events, when the importing
deployment's space is the same. The embedder then meets each event's document as usual and
takes its staged vector when the text it would embed has that hash: the very vector the model
would give, without the model (hours of CPU for a million events here). A text that differs
(another previous turn, a redaction) or another space means the model runs, as without it.

Rows are taken (deleted) in the transaction of the batch that uses them, so a batch that fails
leaves them for its redelivery; an erasure's deletes remove them with the document.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection

from agent_memory_retrieval.docs import IndexDoc

TAKE_SQL = """
DELETE FROM staged_vectors
WHERE tenant = %(tenant)s AND doc_id = ANY(%(ids)s)
RETURNING doc_id, space, text_sha, vector
"""
# a document id names its tenant (``docs.event_doc_id``); the table is small (rows are taken)
DROP_SQL = "DELETE FROM staged_vectors WHERE doc_id = ANY(%(ids)s)"
# the import's write: a later import of the same dump replaces what an earlier one staged
STAGE_SQL = """
INSERT INTO staged_vectors (tenant, doc_id, space, text_sha, vector)
VALUES (%(tenant)s, %(doc_id)s, %(space)s, %(text_sha)s, %(vector)s)
ON CONFLICT (tenant, doc_id) DO UPDATE
SET space = excluded.space, text_sha = excluded.text_sha, vector = excluded.vector,
    staged_at = now()
"""


def text_sha(text: str) -> bytes:
    """The hash a staged vector is checked by: of the text the embedder would embed."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def pack(vector: Sequence[float]) -> bytes:
    """float32, little-endian: the vector exactly as the index holds it."""
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def unpack(data: bytes) -> list[float]:
    import numpy as np

    return [float(x) for x in np.frombuffer(data, dtype="<f4")]


def to_text(data: bytes) -> str:
    """A packed vector in an export line (base64)."""
    return base64.b64encode(data).decode("ascii")


def from_text(text: str) -> bytes:
    """A packed vector read from an export line; ``ValueError`` unless it is base64 of whole
    floats (the index refuses a vector of another dimension)."""
    data = base64.b64decode(text, validate=True)
    if not data or len(data) % 4:
        raise ValueError(f"{len(data)} bytes are no float32 vector")
    return data


async def take(
    conn: AsyncConnection[Any], space: str, docs: Sequence[IndexDoc], texts: Sequence[str]
) -> dict[str, list[float]]:
    """The staged vectors of ``docs`` whose space is ``space`` and whose hash is that of the
    doc's text in ``texts`` (same order), by text; every staged row of ``docs`` is consumed."""
    by_tenant: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        by_tenant.setdefault(doc.tenant, []).append(i)
    found: dict[str, list[float]] = {}
    for tenant, positions in by_tenant.items():
        wanted = {docs[i].id: texts[i] for i in positions}
        cur = await conn.execute(TAKE_SQL, {"tenant": tenant, "ids": list(wanted)})
        for doc_id, row_space, sha, vector in await cur.fetchall():
            text = wanted[doc_id]
            if row_space == space and bytes(sha) == text_sha(text):
                found[text] = unpack(bytes(vector))
    return found


async def drop(conn: AsyncConnection[Any], doc_ids: Sequence[str]) -> None:
    """Forget what was staged for these documents (deleted ones: an erasure's)."""
    if doc_ids:
        await conn.execute(DROP_SQL, {"ids": list(doc_ids)})
