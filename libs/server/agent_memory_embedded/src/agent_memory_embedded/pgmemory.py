"""How much memory the embedded Postgres uses: sized from the machine, not Postgres's defaults.

Postgres ships with 128 MB of shared buffers whatever the machine. The HNSW graph of a million
events is about 2 GB, and a search walks pages all over it: with buffers that cannot hold it,
each search copies much of what it walks from the kernel's page cache. Measured with
``make bench-search`` on a 1,000,000-event store (2 cores, 24 GB): the vector search of one
project took 27 ms at p50 with 512 MB of buffers and 13.6 ms with 4 GB; a search of every
project 2.3 and 3.4 ms (docs/search.md, "A million events").

``auto`` gives Postgres a quarter of the machine's memory (the Postgres manual's starting point
for a dedicated server; the embedded stack shares the machine with its services and the
embedding model), at least 128 MB and at most 8 GB, and tells the planner that half of the
memory caches files (``effective_cache_size``). The machine's memory is the smaller of the
physical memory and the cgroup's limit, so a container is sized by its own limit.

``pg_prewarm``'s autoprewarm worker is loaded too: it notes which pages are in the buffers
every five minutes and at shutdown, and reads them back at start, so a restarted stack searches
as fast as before the restart instead of walking the graph from disk for a while.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

MIB = 1024 * 1024
MIN_SHARED_BUFFERS = 128 * MIB
MAX_SHARED_BUFFERS = 8 * 1024 * MIB
SIZE = re.compile(r"^(auto|[1-9][0-9]*(kB|MB|GB|TB))$")
_CGROUP_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),  # cgroup v2
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),  # cgroup v1
)


def machine_memory() -> int:
    """Bytes of memory this process may use: physical memory, or a smaller cgroup limit."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in _CGROUP_LIMITS:
        try:
            raw = path.read_text().strip()
        except OSError:
            continue
        if raw.isdigit():  # "max" (v2) or a huge number (v1) mean no limit
            physical = min(physical, int(raw))
    return physical


def postgres_memory_settings(
    shared_buffers: str = "auto", memory: int | None = None
) -> dict[str, str]:
    """``shared_buffers``, ``effective_cache_size`` and autoprewarm for the embedded server.

    ``shared_buffers`` is ``auto`` or a Postgres size (``512MB``, ``4GB``); ``memory`` is the
    machine's (``machine_memory()`` unless given, for tests).
    """
    if not SIZE.match(shared_buffers):
        raise ValueError(
            "shared_buffers: expected 'auto' or a size such as 512MB or 4GB, "
            f"got {shared_buffers!r}"
        )
    total = machine_memory() if memory is None else memory
    if shared_buffers == "auto":
        quarter = min(MAX_SHARED_BUFFERS, max(MIN_SHARED_BUFFERS, total // 4))
        shared_buffers = f"{quarter // MIB}MB"
    return {
        "shared_buffers": shared_buffers,
        "effective_cache_size": f"{max(MIN_SHARED_BUFFERS, total // 2) // MIB}MB",
        "shared_preload_libraries": "pg_prewarm",
    }
