"""Run the topics service: ``python -m agent_memory_topics``; or rebuild the topic graph from
the table of contents: ``python -m agent_memory_topics rebuild [--tenant T] [--project P]``."""

from __future__ import annotations

import argparse
import asyncio

import orjson

from agent_memory_common.core.logs import configure_logging
from agent_memory_common.core.runtime import one_blas_thread
from agent_memory_topics.settings import Settings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m agent_memory_topics")
    sub = parser.add_subparsers(dest="command")
    rb = sub.add_parser("rebuild", help="rebuild the topic graph from the table of contents")
    rb.add_argument("--tenant")
    rb.add_argument("--project")
    args = parser.parse_args(argv)
    settings = Settings()
    if args.command == "rebuild":
        from agent_memory_topics.rebuild import rebuild

        configure_logging("topics", "WARNING", settings.log_json)
        one_blas_thread()  # after the import that loads numpy
        done = asyncio.run(rebuild(settings, args.tenant, args.project))
        print(orjson.dumps({"projects": done}).decode())  # noqa: T201 (the command's answer)
        return
    from agent_memory_topics.app import run

    configure_logging("topics", settings.log_level, settings.log_json)
    one_blas_thread()  # after the import that loads numpy (hdbscan)
    asyncio.run(run(settings))


if __name__ == "__main__":
    main()
