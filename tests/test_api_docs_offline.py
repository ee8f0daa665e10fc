"""``/docs`` and ``/redoc`` of every HTTP service work offline: the pages name no other host
and every file they load is served by the service itself.

Issue #56: FastAPI's pages load Swagger UI from a CDN, so ``/docs`` was a blank page on a
machine without the internet (``agent_memory_common.web.apidocs``). The stack runs in team
mode (a bootstrap token): the pages and their files stay readable without a key, as FastAPI's
own were, since they show only what ``/openapi.json`` shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.stack import Stack, module_stack


@pytest.fixture(scope="module")
def http_services(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        ("gateway", "query", "pruner"),
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
        AGENT_MEMORY_TOKENS="docs-token:acme",
    ) as s:
        yield s


def loaded(page: str) -> list[str]:
    """What a page makes the browser load: scripts, styles, icons, the API description."""
    return re.findall(r'(?:src|href|spec-url)="([^"]+)"', page) + re.findall(
        r"url: '([^']+)'", page
    )


@pytest.mark.parametrize("service", ["gateway", "query", "pruner"])
@pytest.mark.parametrize(
    ("page", "script"),
    [("/docs", "SwaggerUIBundle"), ("/redoc", "Redoc")],
)
def test_the_docs_pages_load_nothing_from_another_host(
    http_services: Stack, service: str, page: str, script: str
) -> None:
    base = getattr(http_services, f"{service}_url")
    r = plain_http.get(base + page, timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    assert not re.search(r"(?:https?:)?//", r.text), f"{page} names another host:\n{r.text}"
    urls = loaded(r.text)
    assert "/openapi.json" in urls and any(u.endswith(".js") for u in urls), urls
    for url in urls:
        assert not urlsplit(url).netloc, url
        asset = plain_http.get(urljoin(base + page, url), timeout=10)
        assert asset.status_code == 200, url
        if url.endswith(".js"):
            assert script in asset.text and len(asset.content) > 100_000, url
        if url.endswith(".css"):
            assert asset.headers["content-type"].startswith("text/css"), url
