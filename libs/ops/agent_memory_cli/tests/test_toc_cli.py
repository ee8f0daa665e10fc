"""``agent-memory toc`` against the real query service and a TOC the real summarizer built:
from the years down to the events of a segment, by pasting the ids it prints."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from agent_memory_cli.__main__ import main
from agent_memory_embedded.servers import PostgresServer
from tests.stack import Stack
from tests.toc_support import FakeEvent, toc_service_stack


@pytest.fixture(scope="module")
def toc_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stack, dict[str, list[FakeEvent]]]]:
    with toc_service_stack(pg_server, tmp_path_factory.mktemp("toc-cli")) as built:
        yield built


@pytest.fixture
def cli(
    toc_stack: tuple[Stack, dict[str, list[FakeEvent]]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[object]:
    stack, _ = toc_stack
    monkeypatch.setenv("AGENT_MEMORY_QUERY__PORT", stack.query_url.rsplit(":", 1)[1])

    def run(*argv: str) -> tuple[int, str]:
        code = main(["toc", *argv])
        return code, capsys.readouterr().out

    yield run


def ids(output: str, level: str) -> list[str]:
    return re.findall(rf"^\s*({level}:\S+)\s", output, flags=re.MULTILINE)


def test_browse_from_year_to_the_events_of_a_segment(
    cli: object, toc_stack: tuple[Stack, dict[str, list[FakeEvent]]]
) -> None:
    assert callable(cli)
    _, events = toc_stack
    code, out = cli("--project", "proj")
    assert code == 0, out
    assert ids(out, "year") == ["year:2026@proj"]
    assert ids(out, "month") == ["month:2026-03@proj", "month:2026-04@proj"]

    code, out = cli("month:2026-04@proj")
    assert code == 0 and "April 2026" in out
    assert ids(out, "week") == ["week:2026-W14@proj"]
    assert re.search(r"↳ grip:[0-9a-f]{20}  events ", out), "bullets show their grips"

    code, out = cli("week:2026-W14@proj")
    assert ids(out, "day") == ["day:2026-03-30@proj", "day:2026-03-31@proj", "day:2026-04-02@proj"]
    code, out = cli("day:2026-03-31@proj")
    assert ids(out, "segment") == ["segment:sg_mar31"]

    code, out = cli("segment:sg_mar31")
    assert code == 0 and "v2 of 2" in out and "session: b" in out
    assert "agent-memory toc segment:sg_mar31 --events" in out
    code, out = cli("segment:sg_mar31", "--events")
    assert code == 0
    shown = re.findall(r"\b(mar31-\d{5})\b", out.split("\nevents:\n", 1)[1])
    assert shown == [e.event_id for e in events["sg_mar31"]]

    code, out = cli("segment:sg_mar31", "--version", "1", "--events")
    assert "v1 of 2" in out
    assert "mar31-00011" not in out.split("\nevents:\n", 1)[1], "version 1 had 10 events"


def test_path_to_an_instant_and_json(cli: object) -> None:
    assert callable(cli)
    code, out = cli("--project", "proj", "--at", "2026-03-31T14:05:00Z")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()[1:]] == [
        "year:2026@proj",
        "month:2026-04@proj",
        "week:2026-W14@proj",
        "day:2026-03-31@proj",
        "segment:sg_mar31",
    ]
    code, out = cli("day:2026-04-02@proj", "--json")
    assert code == 0 and '"node_id": "day:2026-04-02@proj"' in out


def test_errors_are_one_line_and_an_exit_code(cli: object) -> None:
    assert callable(cli)
    code, out = cli("segment:nope")
    assert code == 1 and out.startswith("agent-memory: 404: no node 'segment:nope'")
    code, out = cli("--at", "2026-03-31T14:05:00Z")
    assert code == 1 and "--at needs --project" in out
    code, out = cli("--project", "nobody")
    assert code == 0 and "no table of contents yet for project 'nobody'" in out
