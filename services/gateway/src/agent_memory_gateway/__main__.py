"""Run the ingest gateway: ``python -m agent_memory_gateway``."""

from __future__ import annotations

import uvicorn

from agent_memory_common.core.logs import configure_logging
from agent_memory_common.web.browser import uvicorn_options
from agent_memory_gateway.app import create_app
from agent_memory_gateway.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging("gateway", settings.log_level, settings.log_json)
    uvicorn.run(
        create_app(settings),
        host=settings.gateway.host,
        port=settings.gateway.port,
        **uvicorn_options(),
    )


if __name__ == "__main__":
    main()
