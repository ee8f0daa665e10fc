"""What the engine reads besides the indexes, as the callables it is given: the fallback tiers'
searches and the refinements' lookups (and ``supersede.SupersessionLookup``). The query service
wires them to Postgres (``agent_memory_search.store``, ``arc_store``, ``period``,
``supersession_store``); a test gives its own. Each may fail with one of
``failures.SURVIVABLE``, and the search answers without it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from agent_memory_retrieval.docs import Hit, SearchFilter

TierSearch = Callable[[str, SearchFilter, int], Awaitable[list[Hit]]]
AccessLookup = Callable[[str, Sequence[str]], Awaitable[dict[str, int]]]
# (tenant, project, since, until, limit, newest first) -> the period's TOC nodes, coarsest
# level first, each level in time order or newest first (``search.period``)
PeriodBrowse = Callable[[str, str | None, datetime, datetime, int, bool], Awaitable[list[Hit]]]
# (tenant, project, now) -> [since, until) of the last day of work in scope before now
LastWorkedDay = Callable[[str, str | None, datetime], Awaitable[tuple[datetime, datetime] | None]]
# (scope, event ids, window) -> per event id, the messages after it that may state a fix
FollowLookup = Callable[[SearchFilter, Sequence[str], int], Awaitable[dict[str, list[Hit]]]]
# (scope, event ids, window) -> the edit made last before each (``arc_store.edits_before``)
EditLookup = Callable[[SearchFilter, Sequence[str], int], Awaitable[dict[str, Hit]]]
# (tenant, event ids) -> role per stored event
RoleLookup = Callable[[str, Sequence[str]], Awaitable[dict[str, str]]]
