"""How ``make test`` spreads the suite over pytest-xdist workers, and what runs alone.

Most of the suite's wall time is waiting: a service process importing, a consumer draining, a
poll sleeping. On a machine of two cores one test at a time leaves a core idle most of the
time, so ``make test`` runs modules on three workers (``--dist loadfile``: a module's tests stay
on one worker, so a module's shared stack is started once).

Two things make that work:

- **The longest modules start first.** xdist hands out modules in collection order; a module of
  five minutes handed out last keeps the run going alone for five minutes at the end. Modules
  holding a ``slow`` test (crash, chaos, replica, pruning tests on real stacks) are moved to
  the front, so they overlap the many short modules instead of following them
  (``--no-loadscope-reorder`` keeps this order; xdist would sort by test count instead).
- **What cannot share the machine runs alone, after.** Tests marked ``serial`` are left out of
  the parallel run and run on their own: a test that binds the services' default ports (every
  other test's CLI would find it there), and a test whose assertion is a wall-clock budget (a
  hook's latency), which concurrent modules would turn into a measurement of them.
"""

from __future__ import annotations

import os

import pytest

SLOW = "slow"


def pytest_configure(config: pytest.Config) -> None:
    """An xdist worker runs with ``COLUMNS=80`` and ``LINES=24`` set by execnet; a CLI a test
    runs would then wrap its output at 79 columns where a serial run gets the 100-column
    fallback (no terminal). Each test should see the same environment either way."""
    if hasattr(config, "workerinput"):
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)


def module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def order_slow_modules_first(items: list[pytest.Item]) -> None:
    """Stable reorder: every test of a module holding a ``slow`` test first, the modules'
    own order otherwise kept (so a module's tests stay together and in their order)."""
    slow_modules = {module_of(i) for i in items if i.get_closest_marker(SLOW) is not None}
    items.sort(key=lambda i: module_of(i) not in slow_modules)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    order_slow_modules_first(items)
