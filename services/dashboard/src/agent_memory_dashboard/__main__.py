"""Run the dashboard: ``python -m agent_memory_dashboard``."""

from __future__ import annotations

import logging

import uvicorn

from agent_memory_common.core.logs import configure_logging
from agent_memory_common.web.browser import uvicorn_options
from agent_memory_dashboard.app import create_app
from agent_memory_dashboard.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging("dashboard", settings.log_level, settings.log_json)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per API call otherwise
    uvicorn.run(
        create_app(settings),
        host=settings.dashboard.host,
        port=settings.dashboard.port,
        **uvicorn_options(),
        # the scheme (Secure cookie) and client address (failed sign-in limit) from a proxy
        proxy_headers=True,
        forwarded_allow_ips=settings.dashboard.trusted_proxies,
    )


if __name__ == "__main__":
    main()
