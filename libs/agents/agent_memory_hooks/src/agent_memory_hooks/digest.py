"""SHA-256 hex digests without loading OpenSSL.

``hashlib`` imports ``_hashlib`` (OpenSSL) first, which costs 3-10 ms of a hook's budget; the
builtin ``_sha256`` module computes the same digest and is already in the interpreter.
"""

from __future__ import annotations

try:
    import _sha256 as _impl  # type: ignore[import-not-found]

    _new = _impl.sha256
except ImportError:  # pragma: no cover - interpreters without the builtin module
    import hashlib

    _new = hashlib.sha256


def sha256_hex(text: str) -> str:
    return str(_new(text.encode()).hexdigest())
