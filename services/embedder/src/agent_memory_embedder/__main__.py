"""Run the embedder: ``python -m agent_memory_embedder``."""

from __future__ import annotations

import asyncio

from agent_memory_common.core.logs import configure_logging
from agent_memory_embedder.app import run
from agent_memory_embedder.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging("embedder", settings.log_level, settings.log_json)
    asyncio.run(run(settings))


if __name__ == "__main__":
    main()
