"""``agent-memory import``'s options go anywhere (issue 58): before the runtime, between the
runtime and the path, after the path.

argparse used to fill the optional PATH with nothing when an option followed the runtime, and
then refuse PATH as an unrecognised argument: ``import claude-code --dry-run PATH`` failed where
``import --dry-run claude-code PATH`` worked. Every option is tried in each place, alone and all
together, and a dry run of real Codex fixtures is run with the options split around the path.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from agent_memory_cli.__main__ import main, parse_args

CODEX = str(Path(__file__).parent / "fixtures" / "codex")
OPTIONS: dict[str, tuple[list[str], str, object]] = {
    # option: (its words, the Namespace attribute, the value it sets)
    "--dry-run": (["--dry-run"], "dry_run", True),
    "--quiet": (["--quiet"], "quiet", True),
    "--batch": (["--batch", "7"], "batch", 7),
    "--token": (["--token", "t0k3n"], "token", "t0k3n"),
    "--project": (["--project", "shop"], "project", "shop"),
}
PLACES = ("before the runtime", "after the runtime", "after the path")


def command(placed: dict[str, str]) -> list[str]:
    """``import codex PATH`` with each option of ``placed`` at its place."""
    at = {
        place: [w for o, p in placed.items() if p == place for w in OPTIONS[o][0]]
        for place in PLACES
    }
    return [
        "import",
        *at["before the runtime"],
        "codex",
        *at["after the runtime"],
        CODEX,
        *at["after the path"],
    ]


@pytest.mark.parametrize(("option", "place"), list(itertools.product(OPTIONS, PLACES)))
def test_each_option_in_each_place(option: str, place: str) -> None:
    argv = command({option: place})
    args = parse_args(argv)
    assert (args.runtime, args.path) == ("codex", CODEX), argv
    _, attribute, value = OPTIONS[option]
    assert getattr(args, attribute) == value, argv


@pytest.mark.parametrize("place", PLACES)
def test_every_option_together_in_each_place(place: str) -> None:
    args = parse_args(command(dict.fromkeys(OPTIONS, place)))
    assert (args.runtime, args.path) == ("codex", CODEX)
    assert (args.dry_run, args.quiet, args.batch, args.token) == (True, True, 7, "t0k3n")


def test_a_dry_run_with_the_options_around_the_path(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["import", "codex", "--dry-run", CODEX, "--batch", "3", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    # 11: the fixture's environment context is stored as a runtime event (issue 52.3), not dropped
    assert "imported 2 session(s) from 2 file(s): 11 event(s) read" in out


def test_a_wrong_option_is_still_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        parse_args(["import", "codex", CODEX, "--batch", "many"])
    assert refused.value.code == 2
    assert "--batch: invalid int value: 'many'" in capsys.readouterr().err
