"""Which ``Host`` headers the HTTP services answer (DNS rebinding, issue 55): the matching rules
of ``CrossOriginGuard``'s allowlist, which the stack tests exercise only through a few names."""

from __future__ import annotations

import pytest

from agent_memory_common.core.settings import CommonSettings
from agent_memory_common.web.browser import host_allowed, parse_hosts

OPERATOR = parse_hosts("Memory.Example.com, q:8701, *.corp.example")


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("localhost", True),
        ("localhost:8701", True),
        ("LOCALHOST.:1", True),
        ("127.0.0.1:8701", True),
        ("[::1]:8701", True),
        ("[::1]", True),
        ("memory.example.com", True),
        ("memory.example.com:443", True),
        ("q:8701", True),
        ("q:8702", False),
        ("a.corp.example:80", True),
        ("corp.example", False),
        ("evil.example:8701", False),
        ("localhost.evil.example", False),
        ("127.0.0.1.nip.io:8701", False),
        ("memory.example.com.evil.example", False),
    ],
)
def test_loopback_names_and_the_operators_entries_only(host: str, allowed: bool) -> None:
    assert host_allowed(host.encode(), OPERATOR) is allowed


def test_local_mode_is_loopback_only_and_team_mode_what_the_operator_sets() -> None:
    local = parse_hosts(CommonSettings(tokens="").host_allowlist)
    assert host_allowed(b"localhost:9", local) and not host_allowed(b"evil.example:9", local)
    team = parse_hosts(CommonSettings(tokens="t:acme").host_allowlist)
    assert team is None and host_allowed(b"query:8701", team)
    listed = parse_hosts(CommonSettings(tokens="t:acme", allowed_hosts="m.example").host_allowlist)
    assert host_allowed(b"m.example", listed) and not host_allowed(b"query:8701", listed)
    assert parse_hosts("a, *") is None
