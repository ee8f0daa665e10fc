"""Client-side event ids: a client that chooses the id can retry a post without storing twice
(the gateway de-duplicates by id), so every helper here names its events before sending."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32, as the server's ULIDs


def new_id(now_ms: int | None = None) -> str:
    """A ULID: 48-bit millisecond time then 80 random bits, so ids sort by creation time."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        value, rem = divmod(value, 32)
        chars.append(_ALPHABET[rem])
    return "".join(reversed(chars))
