"""Run the bm25-indexer: ``python -m agent_memory_bm25``."""

from __future__ import annotations

import asyncio

from agent_memory_bm25.app import run
from agent_memory_bm25.settings import Settings
from agent_memory_common.core.logs import configure_logging


def main() -> None:
    settings = Settings()
    configure_logging("bm25-indexer", settings.log_level, settings.log_json)
    asyncio.run(run(settings))


if __name__ == "__main__":
    main()
