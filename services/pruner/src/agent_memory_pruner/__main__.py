"""Run the retention pruner: ``python -m agent_memory_pruner``."""

from __future__ import annotations

import uvicorn

from agent_memory_common.core.logs import configure_logging
from agent_memory_common.web.browser import uvicorn_options
from agent_memory_pruner.app import create_app
from agent_memory_pruner.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging("pruner", settings.log_level, settings.log_json)
    uvicorn.run(
        create_app(settings),
        host=settings.pruner.host,
        port=settings.pruner.port,
        **uvicorn_options(),
    )


if __name__ == "__main__":
    main()
