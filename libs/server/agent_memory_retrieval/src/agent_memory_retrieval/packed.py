"""A vector kept outside the vector index, packed: float16, little-endian.

The retention pruner keeps the vector of each event it takes out of the vector index
(``pruned_event_words.vector``) so that the descent can rank pruned events by meaning without
embedding them again. Half precision halves the bytes (768 for 384 dimensions) and changes a
cosine by about 1e-3, far below what separates two candidates.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def vector_bytes(vector: Sequence[float]) -> bytes:
    return np.asarray(vector, dtype="<f2").tobytes()


def bytes_vector(data: bytes) -> npt.NDArray[np.float32]:
    return np.frombuffer(data, dtype="<f2").astype(np.float32)


def packed_cosines(query: Sequence[float], packed: Sequence[bytes]) -> list[float]:
    """The cosine of ``query`` with each packed vector, in one matrix product."""
    if not packed:
        return []
    rows = np.stack([bytes_vector(p) for p in packed])
    q = np.asarray(query, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1) * (float(np.linalg.norm(q)) or 1.0)
    sims = rows @ q / np.where(norms > 0, norms, 1.0)
    return [float(x) for x in sims]
