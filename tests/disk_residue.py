"""Where a phrase still lies on disk: every file under a folder, read raw and, for Tantivy's
document stores, decompressed.

Tantivy keeps a document's stored fields in its segment's ``.store`` file, in blocks of 16 KB
compressed with LZ4 (``docstore_compression`` in ``meta.json``; each block is the uncompressed
length, 4 bytes little-endian, then one LZ4 block). LZ4 replaces a repeat of earlier bytes by a
back-reference, so a phrase said twice in a block (an event's text and the next event's
context) is not found in the raw bytes: each block is decoded here and searched as well.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import orjson

MAX_BLOCK = 1 << 24


def lz4_block(data: bytes, start: int, size: int) -> tuple[bytes, int]:
    """One LZ4 block (the block format, no frame) from ``data[start:]``, decoded until ``size``
    bytes are out; returns them and where the block ended. ValueError or IndexError where the
    bytes are not such a block."""
    out = bytearray()
    i = start
    while True:
        token = data[i]
        i += 1
        literals = token >> 4
        if literals == 15:
            while True:
                more = data[i]
                i += 1
                literals += more
                if more != 255:
                    break
        out += data[i : i + literals]
        i += literals
        if len(out) >= size:
            if len(out) != size:
                raise ValueError("more literals than the block's length")
            return bytes(out), i
        offset = data[i] | (data[i + 1] << 8)
        i += 2
        if offset == 0 or offset > len(out):
            raise ValueError("a match before the block's start")
        length = token & 15
        if length == 15:
            while True:
                more = data[i]
                i += 1
                length += more
                if more != 255:
                    break
        for _ in range(length + 4):  # byte by byte: a match may overlap what it writes
            out.append(out[-offset])
        if len(out) > size:
            raise ValueError("a match past the block's length")


def store_blocks(data: bytes) -> Iterator[bytes]:
    """The decompressed blocks of a Tantivy ``.store`` file, from its start until the bytes
    are no longer a block (the skip index and footer that follow them)."""
    pos = 0
    while pos + 4 < len(data):
        size = struct.unpack_from("<I", data, pos)[0]
        if size == 0 or size > MAX_BLOCK:
            return
        try:
            block, pos = lz4_block(data, pos + 4, size)
        except (ValueError, IndexError):
            return
        yield block


def tantivy_compression(root: Path) -> set[str]:
    """The doc store compression of every Tantivy index under ``root``."""
    return {
        str(orjson.loads(meta.read_bytes())["index_settings"]["docstore_compression"])
        for meta in root.rglob("meta.json")
    }


def files_holding(root: Path, phrase: str) -> list[str]:
    """The files under ``root`` whose bytes hold ``phrase`` (case-insensitive), raw or, for
    a ``.store`` file, in a decompressed block; as paths relative to ``root``."""
    needle = phrase.lower().encode()
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # removed meanwhile (a merge, a garbage collection)
            continue
        texts = [data]
        if path.suffix == ".store":
            texts.extend(store_blocks(data))
        if any(needle in text.lower() for text in texts):
            found.append(str(path.relative_to(root)))
    return found
