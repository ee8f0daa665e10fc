"""A vector kept outside the vector index, packed: float16, little-endian.

The retention pruner keeps the vector of each event it takes out of the vector index
(``pruned_event_words.vector``) so that the descent can rank pruned events by meaning without
embedding them again. Half precision halves the bytes (768 for 384 dimensions) and changes a
cosine by about 1e-3, far below what separates two candidates.

numpy is imported by the functions, not the module: the query service's settings reach this
module (through the pruning code) at import, and numpy is a third of a second of CPU its start
need not pay before a descent compares vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def vector_bytes(vector: Sequence[float]) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f2").tobytes()


def bytes_vector(data: bytes) -> npt.NDArray[np.float32]:
    import numpy as np

    return np.frombuffer(data, dtype="<f2").astype(np.float32)


def packed_cosines(query: Sequence[float], packed: Sequence[bytes]) -> list[float]:
    """The cosine of ``query`` with each packed vector, in one matrix product."""
    if not packed:
        return []
    import numpy as np

    rows = np.stack([bytes_vector(p) for p in packed])
    q = np.asarray(query, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1) * (float(np.linalg.norm(q)) or 1.0)
    sims = rows @ q / np.where(norms > 0, norms, 1.0)
    return [float(x) for x in sims]
