"""``agent-memory``: run the stack and talk to it from a terminal.

Every command pays for what this module and the command modules import before the command runs,
so they import only the standard library (and ``agent_memory_hooks``, which is nothing more) at
the top; each command imports what it needs (psycopg, the client, pydantic settings, rich, the
index adapters) when it runs. ``--help`` builds every parser and runs nothing: it costs no more
than Python's start. ``tests/test_cli_startup.py`` fails when a heavy import creeps back to the
top; ``make bench-cli`` measures the times.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agent_memory_cli.api import CommandFailed, run_with_client

if TYPE_CHECKING:
    from agent_memory_cli.settings import Settings

DESCRIPTION = "Run the agent-memory stack and talk to it from a terminal."


def _cmd_up(settings: Settings, args: argparse.Namespace) -> int:
    from agent_memory_cli.supervisor import Supervisor, left_out, replica_counts
    from agent_memory_common.core.logs import configure_logging

    configure_logging("supervisor", settings.log_level, settings.log_json)
    try:
        replicas = replica_counts(args.replicas or [])
        without = left_out(args.without or [])
    except ValueError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 2
    return Supervisor(settings, replicas=replicas, without=without).run()


def _cmd_migrate(settings: Settings, _: argparse.Namespace) -> int:
    import psycopg

    from agent_memory_common.db.postgres import prepare_database

    try:
        applied = prepare_database(settings.pg_dsn)
    except psycopg.OperationalError as exc:
        print(f"agent-memory: Postgres not reachable: {exc}", file=sys.stderr)
        return 2
    print(f"applied {len(applied)} migration(s)" + (": " + ", ".join(applied) if applied else ""))
    return 0


def _cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    from agent_memory_cli.recall import overview_lines, status_and_recall

    try:
        data, recall = run_with_client(settings, args.token, status_and_recall, timeout=5)
    except CommandFailed as exc:
        print(f"agent-memory: {exc}")
        return exc.code
    from agent_memory_cli.phases import phase_lines

    print(
        f"events stored: {data['events_stored']}   "
        f"duplicates: {data.get('duplicates_stored', 0)}   drained: {data['drained']}"
    )
    print("phases:")
    for line in phase_lines(data):
        print(line)
    print("consumers:")
    for c in data["consumers"]:
        if not c.get("exists"):
            print(f"  {c['name']:<12} (not created yet)")
            continue
        if "pending" not in c:  # with tokens configured a tenant sees no shared counters
            print(f"  {c['name']:<12} {'caught up' if c.get('caught_up') else 'working'}")
            continue
        print(
            f"  {c['name']:<12} pending={c['pending']:<8} ack_pending={c['ack_pending']:<6} "
            f"redelivered={c['redelivered']:<6} ack_floor={c['ack_floor']}"
        )
    if recall is not None:
        for line in overview_lines(recall):
            print(line)
    return 0


# Further command groups live in their own modules (``toc.py``, ``search.py``, and the hook and
# installer commands of ``agent_memory_hooks``) and expose ``register(subparsers)``, which adds
# their parsers with ``set_defaults(run=...)``; ``run`` takes (settings, args) and returns the
# exit code. Add the module's full name here.
COMMAND_MODULES: tuple[str, ...] = (
    "agent_memory_cli.mcp_cmd",
    "agent_memory_hooks.commands",
    "agent_memory_hooks.install.commands",
    "agent_memory_cli.search",
    "agent_memory_cli.listing",
    "agent_memory_cli.admin",
    "agent_memory_cli.toc",
    "agent_memory_cli.importer",
    "agent_memory_cli.portable_cmd",
    "agent_memory_cli.erase",
    "agent_memory_cli.topics",
    "agent_memory_cli.recall",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-memory", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start the embedded stack and every service (Ctrl-C stops)")
    up.add_argument(
        "--replicas",
        action="append",
        metavar="N|SERVICE=N",
        help="processes of every consumer service (N), or of one (embedder=2; repeatable), "
        "sharing its durable consumer (default 1)",
    )
    up.add_argument(
        "--without",
        action="append",
        metavar="SERVICE[,SERVICE]",
        help="services not to start (e.g. dashboard, or embedder on a machine without the CPU "
        "to spare: search answers from its other tiers); repeatable",
    )
    up.set_defaults(run=_cmd_up)
    sub.add_parser(
        "migrate", help="create the database if needed and apply migrations"
    ).set_defaults(run=_cmd_migrate)
    status = sub.add_parser(
        "status", help="pipeline backlog, stored event count, recall tokens injected per project"
    )
    status.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")
    status.set_defaults(run=_cmd_status)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line, with a command's options allowed before, between and after its
    positionals.

    argparse matches positionals in runs between options: in ``import claude-code --dry-run
    PATH`` it fills RUNTIME and the optional PATH (with nothing) at ``claude-code``, and PATH is
    then left over ("unrecognized arguments", issue 58). So a command without subcommands is
    parsed by its own parser's ``parse_intermixed_args``, which takes the options out first and
    the positionals after. A group with subcommands (admin, topics, install) keeps the usual
    parsing, which intermixed parsing does not support; its commands have no optional
    positional after another, the case that goes wrong.
    """
    parser = build_parser()
    command = _subcommands(parser).get(argv[0]) if argv else None
    if command is None or _subcommands(command):
        return parser.parse_args(argv)
    args = command.parse_intermixed_args(argv[1:])
    args.command = argv[0]
    return args


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parsers of ``parser``'s subcommands by name (none for a command)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["import"] and len(argv) > 1:
        from agent_memory_cli import portable_cmd

        if portable_cmd.is_dump(argv[1]):  # `import FILE`: an export, not a runtime's sessions
            settings = load_settings()
            if settings is None:
                return 2
            return portable_cmd.run_import_dump(settings, argv[1], argv[2:])
    args = parse_args(argv)
    settings = load_settings()
    if settings is None:
        return 2
    code: int = args.run(settings, args)
    return code


def load_settings() -> Settings | None:
    """The settings, or None after naming each wrong environment variable (not a traceback)."""
    import pydantic

    from agent_memory_cli.settings import Settings

    try:
        return Settings()
    except pydantic.ValidationError as exc:
        for err in exc.errors():
            path = "__".join(str(part).upper() for part in err["loc"])
            variable = f"AGENT_MEMORY_{path}" if path else "settings"
            print(
                f"agent-memory: {variable}: {err['msg']} (got {err.get('input')!r})",
                file=sys.stderr,
            )
        return None


if __name__ == "__main__":
    sys.exit(main())
