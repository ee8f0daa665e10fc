"""Every ``agent-memory ... --help`` is plain text (issue 56: help showed reStructuredText).

The modules' docstrings are written for readers of the code and use reStructuredText
(````name````, ``:class:`X```, links); a terminal prints that markup as it is. Help texts are
written apart from the docstrings, and this walks every parser, subcommands of subcommands
included, and fails on the first markup it finds.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from agent_memory_cli import toc
from agent_memory_cli.__main__ import build_parser

MARKUP = re.compile(
    r"``"  # an inline literal
    r"|:[a-z][a-z0-9_.-]*:`"  # a role, :class:`X`
    r"|`[^`\n]+`_"  # a link, `text <url>`_
    r"|^\s*\.\. [a-z]+::"  # a directive
    r"|\*\*\S",  # bold
    re.MULTILINE,
)


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("agent-memory",)
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every parser below it, with the command that shows its help."""
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, (*path, name))


ALL = list(parsers(build_parser()))


def test_every_command_is_walked() -> None:
    commands = {name for name, _ in ALL}
    for expected in (
        "agent-memory import",
        "agent-memory projects",
        "agent-memory sessions",
        "agent-memory admin keys create",
        "agent-memory admin redact",
        "agent-memory topics show",
    ):
        assert expected in commands


@pytest.mark.parametrize(("command", "parser"), ALL, ids=[name for name, _ in ALL])
def test_help_has_no_markup(command: str, parser: argparse.ArgumentParser) -> None:
    text = parser.format_help()
    found = [line.strip() for line in text.splitlines() if MARKUP.search(line)]
    assert found == [], f"{command} --help shows markup"


def test_the_check_finds_markup() -> None:
    """What the help used to be (the module docstring) is caught."""
    assert toc.__doc__ is not None and MARKUP.search(toc.__doc__)
    assert MARKUP.search("see :class:`Settings`") and MARKUP.search("`docs <https://x>`_")
    assert not MARKUP.search("agent-memory toc --project p   years (and their months)")
