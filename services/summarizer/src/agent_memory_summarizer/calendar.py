"""The calendar of the TOC: which day, week, month and year a segment belongs to.

The tree must be a tree (one parent per node) and deterministic, yet ISO weeks straddle month
and year boundaries. The rule, in UTC:

- a segment belongs to the day of its ``start_ts``;
- a day belongs to its ISO week (Monday to Sunday);
- **a week belongs to the month of its Thursday** (the ISO 8601 rule that also decides which year
  a week belongs to), so every month holds 4 or 5 whole weeks: 2026-03-31, a Tuesday, is in
  2026-W14 (Mon 2026-03-30 .. Sun 2026-04-05), whose Thursday is 2026-04-02, so it is found under
  April 2026;
- a month belongs to its year, which is then always the ISO year of its weeks.

A node's time range is the union of what it can hold, end exclusive: a month runs from the
Monday of its first week to the Monday after its last one, a year likewise over its ISO weeks.

Node ids are deterministic and unique per tenant: ``segment:<segment_id>`` (segment ids are
unique per tenant already) and ``<level>:<bucket>@<project key>`` for the calendar levels, e.g.
``week:2026-W11@my-project``. The project key is the project id when it is URL- and
subject-safe, else ``~`` and a stable hash of it (``~`` never occurs in a safe id).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal

Level = Literal["year", "month", "week", "day", "segment"]
LEVELS: tuple[Level, ...] = ("year", "month", "week", "day", "segment")
CALENDAR_LEVELS: tuple[Level, ...] = ("day", "week", "month", "year")  # bottom-up

_SAFE_PROJECT = re.compile(r"^[A-Za-z0-9_.\-]{1,80}$")
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def project_key(project_id: str) -> str:
    if _SAFE_PROJECT.match(project_id):
        return project_id
    return "~" + hashlib.blake2b(project_id.encode(), digest_size=8).hexdigest()


def segment_node_id(segment_id: str) -> str:
    return f"segment:{segment_id}"


def calendar_node_id(level: Level, bucket: str, project_id: str) -> str:
    return f"{level}:{bucket}@{project_key(project_id)}"


@dataclass(frozen=True)
class Bucket:
    """One calendar node's identity and time range."""

    level: Level
    bucket: str
    start: datetime
    end: datetime

    def node_id(self, project_id: str) -> str:
        return calendar_node_id(self.level, self.bucket, project_id)


def _at(d: date) -> datetime:
    return datetime.combine(d, time(0), tzinfo=UTC)


def _monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


def _thursday(d: date) -> date:
    return _monday(d) + timedelta(days=3)


def _first_monday_of_month(year: int, month: int) -> date:
    """Monday of the first week whose Thursday falls in the month."""
    first = date(year, month, 1)
    thursday = first + timedelta(days=(3 - first.weekday()) % 7)
    return thursday - timedelta(days=3)


def _next_month(year: int, month: int) -> tuple[int, int]:
    return (year + 1, 1) if month == 12 else (year, month + 1)


def day_bucket(ts: datetime) -> Bucket:
    d = ts.astimezone(UTC).date()
    return Bucket("day", d.isoformat(), _at(d), _at(d + timedelta(days=1)))


def week_bucket(d: date) -> Bucket:
    iso_year, iso_week, _ = d.isocalendar()
    monday = _monday(d)
    return Bucket("week", f"{iso_year}-W{iso_week:02d}", _at(monday), _at(monday + timedelta(7)))


def month_bucket(d: date) -> Bucket:
    """The month of ``d``'s week (the month of that week's Thursday)."""
    thursday = _thursday(d)
    year, month = thursday.year, thursday.month
    start = _first_monday_of_month(year, month)
    end = _first_monday_of_month(*_next_month(year, month))
    return Bucket("month", f"{year}-{month:02d}", _at(start), _at(end))


def year_bucket(d: date) -> Bucket:
    year = _thursday(d).year
    return Bucket(
        "year",
        str(year),
        _at(_first_monday_of_month(year, 1)),
        _at(_first_monday_of_month(year + 1, 1)),
    )


def chain(ts: datetime) -> list[Bucket]:
    """Day, week, month, year holding a segment that starts at ``ts`` (bottom-up)."""
    day = day_bucket(ts)
    d = day.start.date()
    return [day, week_bucket(d), month_bucket(d), year_bucket(d)]


def title_prefix(bucket: Bucket) -> str:
    """How a calendar node introduces itself in a title."""
    if bucket.level == "day":
        d = bucket.start.date()
        return f"{d.strftime('%a')} {bucket.bucket}"
    if bucket.level == "week":
        first = bucket.start.date()
        last = (bucket.end - timedelta(days=1)).date()
        return f"Week {bucket.bucket} ({first:%b} {first.day} - {last:%b} {last.day})"
    if bucket.level == "month":
        year, month = bucket.bucket.split("-")
        return f"{MONTH_NAMES[int(month) - 1]} {year}"
    return bucket.bucket
