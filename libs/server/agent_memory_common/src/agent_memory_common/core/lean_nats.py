"""nats-py without aiohttp: a quarter of a second of CPU off every process that talks to NATS.

``nats.aio.transport`` imports aiohttp at module level, for one thing only: NATS over
WebSocket (``ws://``, ``wss://``). Every process here connects over TCP (``nats://``), yet paid
~250-330 ms of CPU per start to import aiohttp (measured: 22% of the recorder's import time, 9%
of the query service's), and a service starts often (each replica, each restart, the CLI's
commands, hundreds of times in the test suite).

``install()`` adds an import hook that runs that one module with aiohttp hidden, when aiohttp
is not loaded yet and the configured NATS URL is not a WebSocket one: nats-py then keeps
``aiohttp = None``, which it supports (its WebSocket transport raises a clear ImportError if
ever used). Anything else importing aiohttp later (the OpenSearch adapter's async client) gets
the real package: only that module's own import is affected.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

TRANSPORT = "nats.aio.transport"
HIDDEN = "aiohttp"


class _HidingLoader(importlib.abc.Loader):
    """The module's own loader, run with ``aiohttp`` unimportable."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        sys.modules[HIDDEN] = None  # type: ignore[assignment]  # "import aiohttp" -> ImportError
        try:
            self.inner.exec_module(module)
        finally:
            if HIDDEN in sys.modules and sys.modules[HIDDEN] is None:
                del sys.modules[HIDDEN]

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename...: the inner loader's
        return getattr(self.inner, name)


class _TcpOnlyNats(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != TRANSPORT or HIDDEN in sys.modules or websocket_url():
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _HidingLoader(spec.loader)
        return spec


def websocket_url() -> bool:
    """Whether the configured NATS servers are reached over WebSocket (aiohttp then needed)."""
    return "ws://" in os.environ.get("AGENT_MEMORY_NATS_URL", "") or "wss://" in os.environ.get(
        "AGENT_MEMORY_NATS_URL", ""
    )


def install() -> None:
    """Add the hook once, ahead of the standard finders."""
    if not any(isinstance(finder, _TcpOnlyNats) for finder in sys.meta_path):
        sys.meta_path.insert(0, _TcpOnlyNats())
