"""Run the recorder: ``python -m agent_memory_recorder``."""

from __future__ import annotations

from agent_memory_common.core import runtime
from agent_memory_common.core.logs import configure_logging
from agent_memory_recorder.app import run
from agent_memory_recorder.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging("recorder", settings.log_level, settings.log_json)
    runtime.run(run(settings))


if __name__ == "__main__":
    main()
