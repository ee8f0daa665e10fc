"""The dashboard in a real browser (Debian's Chromium, through Selenium) against the real stack:
gateway, recorder, segmenter, summarizer, both indexers and the query service as processes on a
real nats-server and Postgres, and the dashboard process in front of the query service.

The flows of issue 17: open the dashboard and find a project, descend the timeline to an event,
expand a grip, pin and unpin, search and read the explain panel, watch the pipeline drain after
posting events. The last test writes a PNG of every page (``make screenshots`` keeps them).
"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.ui import WebDriverWait

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.browser.support import chromium, dashboard_process, find_browser
from tests.helpers import eventually, make_event
from tests.stack import Stack, module_stack

# The stack starts six services and a sentence model: minutes on a busy two-core machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]
T = TypeVar("T")

PROJECT = "webshop"
TEXTS = [
    "We chose Tantivy as the embedded BM25 engine because readers work in any process.",
    "Decision: the recorder must acknowledge a message only after the Postgres commit.",
    "The staging deploy failed because the migration took an exclusive lock for minutes.",
    "Run make install first, then start everything with agent-memory up.",
    "I prefer plain SQL files over an ORM for the checkout service.",
    "The cart page times out when the pricing service is slow; we added a two second budget.",
]
SEARCH = "why Tantivy for BM25"


class Site:
    """The running dashboard, the stack behind it, and the browser looking at it."""

    def __init__(self, stack: Stack, url: str, driver: webdriver.Chrome) -> None:
        self.stack = stack
        self.url = url
        self.driver = driver
        self.posted = 0

    def open(self, path: str) -> None:
        self.driver.get(self.url + path)

    def find(self, css: str) -> WebElement:
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def wait(self, check: Callable[[webdriver.Chrome], T], timeout: float = 30) -> T:
        return WebDriverWait(
            self.driver, timeout, ignored_exceptions=[StaleElementReferenceException]
        ).until(check)

    def post(self, events: list[dict[str, Any]]) -> None:
        r = plain_http.post(
            f"{self.stack.gateway_url}/v1/events", json={"events": events}, timeout=30
        )
        assert r.status_code == 202, r.text
        self.posted += len(events)

    def api(self, path: str, **params: Any) -> Any:
        r = plain_http.get(f"{self.stack.query_url}{path}", params=params, timeout=30)
        return r


@pytest.fixture(scope="module")
def site(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    find_browser()  # skip (or fail in CI) before starting anything
    with module_stack(
        pg_server, tmp_path_factory, AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false"
    ) as stack:
        # every consumer: the pipeline page's "drained" is the status' (the topic clusterer too)
        for name in ("segmenter", "summarizer", "bm25-indexer", "embedder", "topics"):
            stack.start(name)
        with dashboard_process(stack) as url, chromium() as driver:
            s = Site(stack, url, driver)
            session = [
                make_event(i, project=PROJECT, session="s1", text=TEXTS[i % len(TEXTS)])
                for i in range(8)
            ]
            session.append(make_event(8, project=PROJECT, session="s1", type="session_end"))
            s.post(session)
            s.post([make_event(100 + i, project="infra", session="ops-1") for i in range(3)])
            eventually(lambda: _summarised(s), timeout=180, what="the timeline built")
            yield s


def _summarised(s: Site) -> bool:
    r = s.api("/v1/toc/at", ts=session_ts(3), project_id=PROJECT)
    return r.status_code == 200 and bool(r.json()["path"][-1]["level"] == "segment")


def session_ts(i: int) -> int:
    return int(make_event(i)["ts"])


def test_open_the_dashboard_and_find_a_project(site: Site) -> None:
    site.open("/")
    assert "Projects" in site.find("h1").text
    row = site.find(f'tr[data-project="{PROJECT}"]')
    assert row.find_element(By.CSS_SELECTOR, 'td[data-field="events"]').text == "9"
    row.find_element(By.LINK_TEXT, PROJECT).click()
    site.wait(lambda d: d.find_element(By.CSS_SELECTOR, 'tr[data-session="s1"]'))
    s1 = site.find('tr[data-session="s1"]')
    assert "claude-code" in s1.text
    title = s1.find_element(By.CSS_SELECTOR, "td:last-child a")  # its latest summary
    assert title.text.strip()

    # what recall injected into the project (issue 54): a brief given to a session, counted
    # per project and session, shown on the project's page, and the switch that stops it
    given = site.api(f"/v1/projects/{PROJECT}/brief", session_id="web-1").json()["tokens"]
    assert given > 0
    recall = f"/v1/projects/{PROJECT}/recall"
    eventually(
        lambda: site.api(recall).json()["windows"][0]["tokens"] >= given,
        timeout=10,
        what="the brief's tokens counted",
    )
    today = site.api(recall).json()["windows"][0]
    site.open(f"/projects/{PROJECT}")
    shown = site.find('#recall-usage [data-days="1"]').text
    assert f"{today['tokens']:,} tokens" in shown and f"{today['given']}/" in shown, shown
    row = site.find('tr[data-recall-session="web-1"]')
    assert row.find_element(By.CSS_SELECTOR, "td.tokens").text == str(given)
    for state in ("off", "on"):  # the button turns it over, as the user's key (admin here)
        button = site.find("#recall-toggle")
        button.click()
        site.wait(staleness_of(button))  # the page reloaded
        assert site.find("#recall-injection").text == state
        assert site.api(recall).json()["injection"] == state


def test_descend_the_timeline_to_an_event(site: Site) -> None:
    site.open(f"/projects/{PROJECT}")
    site.find("#project-timeline").click()
    levels = []
    while not site.all("#events"):
        link = site.wait(lambda d: d.find_element(By.CSS_SELECTOR, "a.node-link"))
        levels.append(link.get_attribute("data-level"))
        link.click()
        site.wait(staleness_of(link))
        site.wait(lambda d: d.find_element(By.ID, "node-title"))
        assert len(levels) <= 5, levels
    assert levels == ["year", "month", "week", "day", "segment"]
    assert site.find("#node-title").get_attribute("data-level") == "segment"
    texts = [td.text for td in site.all("#events td.text")]
    assert TEXTS[0] in texts
    bullets = site.all("#bullets > li")
    assert bullets and all(b.find_elements(By.CSS_SELECTOR, ".kind") for b in bullets)
    assert all(b.find_elements(By.CSS_SELECTOR, ".salience") for b in bullets)


def test_expand_a_grip_to_its_exact_events(site: Site) -> None:
    _open_segment(site)
    toggle = site.find("button.grip-toggle")
    toggle.click()
    cited = site.wait(lambda d: d.find_elements(By.CSS_SELECTOR, ".grip-events tr.event.cited"))
    grip_id = toggle.get_attribute("data-grip")
    r = site.api(f"/v1/grips/{grip_id}")
    assert [row.get_attribute("data-event") for row in cited] == [
        e["event_id"] for e in r.json()["events"]
    ]
    toggle.click()
    site.wait(lambda d: not d.find_element(By.CSS_SELECTOR, ".grip-events").is_displayed())


def test_pin_and_unpin_a_node(site: Site) -> None:
    node_id = _open_segment(site)
    pin = site.find("p.meta button.pin")
    assert pin.text == "pin"
    pin.click()
    site.wait(lambda d: d.find_element(By.CSS_SELECTOR, "p.meta button.pin").text == "unpin")
    assert site.api(f"/v1/toc/nodes/{node_id}").json()["pinned"] is True
    site.driver.refresh()
    site.find("p.meta button.pin").click()
    site.wait(lambda d: d.find_element(By.CSS_SELECTOR, "p.meta button.pin").text == "pin")
    assert site.api(f"/v1/toc/nodes/{node_id}").json()["pinned"] is False


def test_search_and_read_the_explain_panel(site: Site) -> None:
    site.open("/search")
    box = site.find("#search-q")
    box.send_keys(SEARCH)
    site.find("#search-go").click()
    site.wait(lambda d: d.find_element(By.ID, "explain"))
    assert site.find("#explain-intent").text in {"explore", "answer", "locate", "time-boxed"}
    tiers = {
        row.find_element(By.CSS_SELECTOR, "td").text: row.find_elements(By.CSS_SELECTOR, "td")[
            1
        ].text
        for row in site.all("#explain-tiers tbody tr")
    }
    assert tiers.get("bm25", "").startswith("used"), tiers
    assert site.find("#explain-timings").text
    results = site.all("#results li.result")
    assert results and "Tantivy" in results[0].text
    # the filters: another project has nothing about it
    site.open(f"/search?q={SEARCH.replace(' ', '+')}&project_id=infra")
    assert "Tantivy" not in " ".join(r.text for r in site.all("#results li.result"))


def _drained_on_the_page(site: Site, timeout: float) -> None:
    try:
        site.wait(lambda d: d.find_element(By.ID, "drained").text == "drained", timeout)
    except TimeoutException:
        raise AssertionError(f"not drained: {site.api('/v1/status').text}") from None


def _chart_points(driver: webdriver.Chrome) -> list[str]:
    line = driver.find_element(By.CSS_SELECTOR, "#backlog-chart polyline")
    return (line.get_attribute("points") or "").split()


def test_the_pipeline_drains_after_posting_events(site: Site) -> None:
    site.open("/pipeline")
    _drained_on_the_page(site, 180)
    assert all(td.text == "0" for td in site.all('td[data-field="dead_letters"]'))
    before = int(site.find("#events-stored").text)
    site.post(
        [make_event(1000 + i, project=PROJECT, session="s3", text=TEXTS[i % 6]) for i in range(60)]
    )
    site.wait(lambda d: d.find_element(By.ID, "events-stored").text == str(before + 60), 120)
    _drained_on_the_page(site, 180)
    # the chart is redrawn every second, so its line is read inside a wait that
    # steps over the moment a redraw replaces it
    site.wait(lambda d: len(_chart_points(d)) >= 2, 30)
    # the live projects page has the new events too
    site.open("/")
    cell = f'tr[data-project="{PROJECT}"] td[data-field="events"]'
    site.wait(lambda d: d.find_element(By.CSS_SELECTOR, cell).text == "69")


@pytest.mark.parametrize(
    ("page", "route"),
    [
        ("/topics", "/v1/topics"),
        ("/retention", f"/v1/projects/{PROJECT}/retention"),
        ("/erasures", "/v1/erasures"),
        ("/keys", "/v1/keys"),
    ],
)
def test_pages_of_other_features_say_when_they_are_not_there(
    site: Site, page: str, route: str
) -> None:
    r = site.api(route)
    site.open(page)
    notices = " ".join(n.text for n in site.all(".notice"))
    if r.status_code in (404, 405) and not r.json().get("field"):
        assert "not available on this server" in notices
    else:
        assert "not available" not in notices and not site.all(".notice.error"), notices


def test_screenshots_of_every_page(site: Site, tmp_path: Path) -> None:
    """``make screenshots`` sets AGENT_MEMORY_SCREENSHOTS to keep them; otherwise a temp dir."""
    out = Path(os.environ.get("AGENT_MEMORY_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    segment = _open_segment(site)
    day = site.api(f"/v1/toc/nodes/{segment}").json()["parent_id"]
    shots: list[tuple[str, str, Callable[[], None] | None]] = [
        ("projects", "/", None),
        ("sessions", f"/projects/{PROJECT}", None),
        ("timeline", f"/toc?project_id={PROJECT}", None),
        ("day", f"/toc/nodes/{quote(day, safe='')}", None),
        ("segment-grip", f"/toc/nodes/{segment}", lambda: _expand_first_grip(site)),
        ("search", f"/search?q={SEARCH.replace(' ', '+')}&project_id={PROJECT}", None),
        ("pipeline", "/pipeline", lambda: time.sleep(3)),
        ("topics", "/topics", None),
        ("retention", "/retention", None),
        ("erasures", "/erasures", None),
        ("keys", "/keys", None),
        ("login", "/login", None),
    ]
    for name, path, prepare in shots:
        site.open(path)
        if prepare:
            prepare()
        png = out / f"{name}.png"
        png.write_bytes(_full_page_png(site.driver))
        assert png.stat().st_size > 5000, name


def _full_page_png(driver: webdriver.Chrome, max_height: int = 2400) -> bytes:
    """The whole page, not only the window (Chrome DevTools' captureBeyondViewport)."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    clip = {
        "x": 0,
        "y": 0,
        "width": max(float(size["width"]), 1024.0),
        "height": min(float(size["height"]), float(max_height)),
        "scale": 1,
    }
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
    )
    return base64.b64decode(shot["data"])


def _open_segment(site: Site) -> str:
    r = site.api("/v1/toc/at", ts=session_ts(3), project_id=PROJECT)
    node_id: str = r.json()["path"][-1]["node_id"]
    site.open(f"/toc/nodes/{node_id}")
    site.wait(lambda d: d.find_element(By.ID, "node-title"))
    return node_id


def _expand_first_grip(site: Site) -> None:
    site.find("button.grip-toggle").click()
    site.wait(lambda d: d.find_elements(By.CSS_SELECTOR, ".grip-events tr.event"))
