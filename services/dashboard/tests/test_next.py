"""Where the dashboard sends the browser after sign-in: its own paths only (issue 55, point 5).
The stack test (tests/test_http_hardening.py) shows the same through the login page."""

from __future__ import annotations

import pytest

from agent_memory_dashboard.security import safe_next


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example",
        "/\\evil.example",
        "/%5Cevil.example",
        "/%5cevil.example",
        "/%2F%2Fevil.example",
        "https://evil.example/",
        "javascript:alert(1)",
        "/\tevil.example",
        "/%09/evil.example",
        "evil.example",
        "",
    ],
)
def test_anything_a_browser_could_read_as_another_site_goes_home(target: str) -> None:
    assert safe_next(target) == "/"


@pytest.mark.parametrize("target", ["/", "/search?q=x", "/toc/nodes/a%2Fb", "/projects/p#top"])
def test_a_path_of_the_dashboard_is_kept(target: str) -> None:
    assert safe_next(target) == target
