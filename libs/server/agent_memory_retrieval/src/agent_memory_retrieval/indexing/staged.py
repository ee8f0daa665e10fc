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
leaves them for its redelivery; a row whose text does not match yet stays for a later reading
(an event read before its previous turn was stored is indexed again once it is); an erasure's
deletes remove them with the document, and the next import purges what a day left unmatched.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection

from agent_memory_retrieval.docs import IndexDoc

# Only a row whose hash and space match is taken: an event read before its previous turn was
# stored has another text now, and is read again (with it) once that turn is stored.
TAKE_SQL = """
DELETE FROM staged_vectors AS s
USING unnest(%(ids)s::text[], %(shas)s::bytea[]) AS w(doc_id, text_sha)
WHERE s.tenant = %(tenant)s AND s.doc_id = w.doc_id AND s.text_sha = w.text_sha
  AND s.space = %(space)s
RETURNING s.doc_id, s.vector
"""
# what an import leaves that no reading matched (an event exported without the turn before
# it, a text redacted since): gone a day later, when the next import of the tenant starts
PURGE_SQL = """
DELETE FROM staged_vectors
WHERE tenant = %(tenant)s AND staged_at < now() - interval '1 day'
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
    doc's text in ``texts`` (same order), by text; the rows taken are deleted."""
    by_tenant: dict[str, dict[str, str]] = {}
    for doc, text in zip(docs, texts, strict=True):
        by_tenant.setdefault(doc.tenant, {})[doc.id] = text
    found: dict[str, list[float]] = {}
    for tenant, wanted in by_tenant.items():
        params = {
            "tenant": tenant,
            "space": space,
            "ids": list(wanted),
            "shas": [text_sha(t) for t in wanted.values()],
        }
        cur = await conn.execute(TAKE_SQL, params)
        for doc_id, vector in await cur.fetchall():
            found[wanted[doc_id]] = unpack(bytes(vector))
    return found


async def drop(conn: AsyncConnection[Any], doc_ids: Sequence[str]) -> None:
    """Forget what was staged for these documents (deleted ones: an erasure's)."""
    if doc_ids:
        await conn.execute(DROP_SQL, {"ids": list(doc_ids)})
