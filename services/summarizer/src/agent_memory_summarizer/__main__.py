"""Run the summarizer: ``python -m agent_memory_summarizer``."""

from __future__ import annotations

import asyncio

from agent_memory_common.core.logs import configure_logging
from agent_memory_summarizer.app import run
from agent_memory_summarizer.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging("summarizer", settings.log_level, settings.log_json)
    asyncio.run(run(settings))


if __name__ == "__main__":
    main()
