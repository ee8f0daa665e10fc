"""``agent-memory toc --user`` and ``agent-memory topics --user`` against the real query service
over the two users of ``tests/team_support`` (issue 17)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from agent_memory_cli.__main__ import main
from agent_memory_embedded.servers import PostgresServer
from tests.team_support import DAY16, DAY17, SEG_DANA, SEG_PAIR, WEEK, team_query_stack

Run = Callable[..., tuple[int, str]]


@pytest.fixture(scope="module")
def query_port(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with team_query_stack(pg_server, tmp_path_factory.mktemp("team-cli")) as stack:
        yield stack.query_url.rsplit(":", 1)[1]


@pytest.fixture
def cli(
    query_port: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Run:
    monkeypatch.setenv("AGENT_MEMORY_QUERY__PORT", query_port)

    def run(*argv: str) -> tuple[int, str]:
        code = main(list(argv))
        return code, capsys.readouterr().out

    return run


def test_toc_user_keeps_only_that_users_nodes(cli: Run) -> None:
    code, out = cli("toc", WEEK, "--user", "eli")
    assert code == 0, out
    assert DAY17 in out and DAY16 not in out
    code, out = cli("toc", WEEK, "--user", "dana")
    assert DAY16 in out and DAY17 in out
    code, out = cli("toc", SEG_PAIR)
    assert "agents: claude-code   users: dana, eli" in out
    code, out = cli("toc", SEG_DANA)
    assert "users: dana" in out
    code, out = cli("toc", "--project", "web", "--user", "zoe")
    assert code == 0 and "no table of contents yet" in out


def test_topics_user_keeps_only_that_users_topics(cli: Run) -> None:
    code, out = cli("topics", "--project", "web", "--user", "eli")
    assert code == 0, out
    assert "topic:team" in out and "topic:dana" not in out
    code, out = cli("topics", "search", "billing invoices", "--project", "web", "--user", "dana")
    assert code == 0, out
    assert "topic:team" in out and "topic:dana" in out
    code, out = cli("topics", "search", "billing", "--user", "zoe")
    assert "no topics yet" in out
