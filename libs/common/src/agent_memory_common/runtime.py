"""Run a service's main coroutine on uvloop: measured 10-15% less CPU per message than asyncio's
default loop in the recorder, and the HTTP services already run on it through uvicorn."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


def run(main: Coroutine[Any, Any, None]) -> None:
    try:
        import uvloop
    except ImportError:  # platforms without uvloop (Windows) use the default loop
        asyncio.run(main)
        return
    uvloop.run(main)
