"""Run the query service: ``python -m agent_memory_query``."""

from __future__ import annotations

import uvicorn

from agent_memory_common.core.logs import configure_logging
from agent_memory_common.core.runtime import one_blas_thread
from agent_memory_common.web.browser import uvicorn_options
from agent_memory_query.app import create_app
from agent_memory_query.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging("query", settings.log_level, settings.log_json)
    one_blas_thread()  # numpy is loaded (topic centroids): see one_blas_thread for why
    uvicorn.run(
        create_app(settings),
        host=settings.query.host,
        port=settings.query.port,
        **uvicorn_options(),
    )


if __name__ == "__main__":
    main()
