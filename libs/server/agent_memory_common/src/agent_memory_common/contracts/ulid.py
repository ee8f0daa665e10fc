"""ULIDs for events that arrive without a client idempotency key.

A ULID sorts by creation time, so generated ids keep the natural order of a session's events
and stay readable in logs; 80 random bits make collisions irrelevant.
"""

from __future__ import annotations

import os
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_ulid(now_ms: int | None = None) -> str:
    """Return a 26-character ULID for the given (or current) time in milliseconds."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))
