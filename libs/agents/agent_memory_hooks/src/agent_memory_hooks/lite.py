"""JSON and TCP for the hook path, straight from the C modules behind ``json`` and ``socket``.

``import json`` and ``import socket`` cost about 14 ms of CPU together, more than everything
else a hook imports, and half of it is spent compiling regular expressions and building enums
the hook never uses. The C accelerators they wrap (``_json``, ``_socket``) load in well under a
millisecond and do the actual work, so the hook calls them directly. If an interpreter lacks
them, the standard modules are used instead: same results, only slower to import.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
    import _socket

    _FAST = True
except ImportError:  # pragma: no cover - other interpreters
    _FAST = False

_WHITESPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _ScannerContext:
    """The attributes ``_json.make_scanner`` reads from a ``JSONDecoder``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__
    memo: dict[str, Any] = {}


if _FAST:
    # typeshed types the argument as the scanner class itself; the C code only reads the
    # attributes _ScannerContext has
    _scan = _json.make_scanner(_ScannerContext())  # type: ignore[arg-type]
    # markers, default, encoder, indent, key and item separators, sort_keys, skipkeys, allow_nan
    _encode = _json.make_encoder(
        None, str, _json.encode_basestring, None, ":", ",", False, False, True
    )


def loads(text: str) -> Any:
    """``json.loads`` for a ``str``; raises ``ValueError`` on malformed input."""
    if not _FAST:  # pragma: no cover
        import json

        return json.loads(text)
    start = 0
    end = len(text)
    while start < end and text[start] in _WHITESPACE:
        start += 1
    try:
        value, stop = _scan(text, start)
    except StopIteration:
        raise ValueError(f"not JSON (at character {start})") from None
    while stop < end and text[stop] in _WHITESPACE:
        stop += 1
    if stop != end:
        raise ValueError(f"extra data after JSON (at character {stop})")
    return value


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept as is, anything unknown written as ``str(value)``."""
    if not _FAST:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    if isinstance(value, str):
        return str(_json.encode_basestring(value))
    return "".join(_encode(value, 0))


def connect(host: str, port: int, timeout: float) -> Any:
    """A connected TCP socket (``_socket.socket``, same methods as ``socket.socket``)."""
    if not _FAST:  # pragma: no cover
        import socket

        return socket.create_connection((host, port), timeout=timeout)
    error: OSError | None = None
    for family, kind, proto, _, address in _socket.getaddrinfo(host, port, 0, _socket.SOCK_STREAM):
        sock = _socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(address)
            return sock
        except OSError as exc:
            error = exc
            sock.close()
    raise error or OSError(f"cannot resolve {host}:{port}")
