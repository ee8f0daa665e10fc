"""The dashboard as a real process beside a test stack, and Debian's Chromium driven by Selenium.

``make test`` installs ``chromium`` and ``chromium-driver`` when they are missing (``make
browser``); Selenium is pointed at both explicitly, so it never tries to download a browser or
a driver of its own.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from agent_memory_embedded.servers import ManagedProcess, free_port
from tests.stack import Stack, _http_ok

CHROMIUM = ("chromium", "chromium-browser")
CHROMEDRIVER = "chromedriver"


@contextmanager
def dashboard_process(stack: Stack, **extra_env: str) -> Iterator[str]:
    """Start ``python -m agent_memory_dashboard`` against the stack's query service."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **stack.env,
        "AGENT_MEMORY_DASHBOARD__PORT": str(port),
        "AGENT_MEMORY_DASHBOARD__QUERY_URL": stack.query_url,
        "AGENT_MEMORY_DASHBOARD__PRUNER_URL": stack.pruner_url,
        "AGENT_MEMORY_DASHBOARD__REFRESH_MS": "500",
        **extra_env,
    }
    proc = ManagedProcess(
        "dashboard",
        [sys.executable, "-m", "agent_memory_dashboard"],
        stack.workdir / "dashboard.log",
        env=env,
        ready=_http_ok(url + "/healthz"),
    )
    proc.start(timeout=60)
    try:
        yield url
    finally:
        proc.stop()


def find_browser() -> tuple[str, str]:
    browser = next((p for p in map(shutil.which, CHROMIUM) if p), None)
    driver = shutil.which(CHROMEDRIVER)
    if browser and driver:
        return browser, driver
    # fail, never skip: a skipped browser test is a silent green (`make test` installs them)
    pytest.fail("chromium and chromedriver are needed: `make browser` installs Debian's packages")


@contextmanager
def chromium(width: int = 1360, height: int = 900) -> Iterator[webdriver.Chrome]:
    browser, driver_path = find_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in (
        "--headless=new",
        "--no-sandbox",  # root in CI containers
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
