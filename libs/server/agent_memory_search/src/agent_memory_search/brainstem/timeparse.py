"""Time expressions in a query ("yesterday", "last week", "in March", "on 2026-03-15"...).

An agent asks "what did we decide about auth last week?": the words "last week" are a filter,
not something to match in the text. We find the expression, turn it into a half-open range
``[since, until)`` against the caller's ``now`` (calendar boundaries in ``now``'s own UTC
offset, so "yesterday" means the caller's yesterday), and hand back the query without it.

Calendar words ("last week", "yesterday", "in March") mean whole calendar units; rolling words
("last 10 hours", "past 3 days") mean a window ending now. Ambiguous bare words that are also
ordinary English ("may", "march", "recently") are never taken as time on their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}
WEEKDAYS = {
    name: i
    for i, names in enumerate(
        [
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        ]
    )
    for name in names
}
NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "couple of": 2,
    "few": 3,
}

# Parts of the day, as [start hour, end hour) of the local day.
DAY_PARTS = {
    "morning": (0, 12),
    "afternoon": (12, 18),
    "evening": (18, 24),
    "night": (18, 24),
}


@dataclass(frozen=True)
class TimeRange:
    """A half-open interval ``[since, until)`` in UTC; either end may be open."""

    since: datetime | None
    until: datetime | None
    expression: str | None = None

    def intersect(self, other: TimeRange) -> TimeRange:
        since = _max_opt(self.since, other.since)
        until = _min_opt(self.until, other.until)
        expression = " & ".join(e for e in (self.expression, other.expression) if e) or None
        return TimeRange(since, until, expression)

    @property
    def empty(self) -> bool:
        return self.since is not None and self.until is not None and self.since >= self.until


@dataclass(frozen=True)
class TimeParse:
    """The range found in a query (or None) and the query with the expression taken out."""

    range: TimeRange | None
    rest: str


def _max_opt(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    return a if b is None else max(a, b)


def _min_opt(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


class _Clock:
    """Calendar arithmetic in the caller's time zone; results in UTC."""

    def __init__(self, now: datetime) -> None:
        if now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
        self.now = now
        self.tz: tzinfo = now.tzinfo or UTC
        self.today = now.date()

    def at(self, day: date, hour: int = 0) -> datetime:
        return (datetime.combine(day, time(0), self.tz) + timedelta(hours=hour)).astimezone(UTC)

    def days(self, first: date, count: int = 1) -> TimeRange:
        return TimeRange(self.at(first), self.at(first + timedelta(days=count)))

    def week_of(self, day: date) -> TimeRange:
        monday = day - timedelta(days=day.weekday())
        return self.days(monday, 7)

    def month(self, year: int, month: int) -> TimeRange:
        nxt = date(year + month // 12, month % 12 + 1, 1)
        return TimeRange(self.at(date(year, month, 1)), self.at(nxt))

    def year(self, year: int) -> TimeRange:
        return TimeRange(self.at(date(year, 1, 1)), self.at(date(year + 1, 1, 1)))

    def rolling(self, delta: timedelta) -> TimeRange:
        return TimeRange((self.now - delta).astimezone(UTC), None)

    def add_months(self, year: int, month: int, offset: int) -> tuple[int, int]:
        index = year * 12 + (month - 1) + offset
        return index // 12, index % 12 + 1

    def latest_month(self, month: int) -> int:
        """The year of the most recent ``month`` that has begun (this month counts)."""
        return self.today.year if month <= self.today.month else self.today.year - 1


def _number(text: str) -> int:
    text = " ".join(text.lower().split())
    if text.isdigit():
        return int(text)
    if text not in NUMBER_WORDS:
        text = text.removeprefix("a ")
    return NUMBER_WORDS[text]


_NUM = (
    r"(?P<n>\d{1,4}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|a\s+couple\s+of|couple\s+of|a\s+few|few)"
)
_UNIT = r"(?P<unit>minute|min|hour|hr|day|week|month|year)s?"
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = r"(?P<weekday>" + "|".join(sorted(WEEKDAYS, key=len, reverse=True)) + r")"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_OPT_YEAR = r"(?:,?\s+" + _YEAR + r")?"
_DAYNUM = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_ISO_DATE = r"(?P<iso>\d{4}-\d\d-\d\d)"
_RELDAY = (
    r"(?P<word>(?:the\s+)?day\s+before\s+yesterday|yesterday|today|tonight)"
    r"(?:\s+(?P<part>morning|afternoon|evening|night))?"
)
_MONTH_DAY = _MONTH + r"\s+" + _DAYNUM + _OPT_YEAR + r"(?![\d:])"  # March 15, 2026
_DAY_MONTH = r"(?:the\s+)?" + _DAYNUM + r"(?:\s+of)?\s+" + _MONTH + _OPT_YEAR  # 15th of March
_IN = r"(?:in|during|of|throughout)\s+"

Handler = Callable[[re.Match[str], _Clock], TimeRange | None]


def _unit_delta(unit: str, n: int) -> timedelta | None:
    unit = unit.lower()
    if unit in ("minute", "min"):
        return timedelta(minutes=n)
    if unit in ("hour", "hr"):
        return timedelta(hours=n)
    if unit == "day":
        return timedelta(days=n)
    if unit == "week":
        return timedelta(weeks=n)
    return None


def _rolling(m: re.Match[str], c: _Clock) -> TimeRange | None:
    n = _number(m.group("n")) if m.groupdict().get("n") else 1
    unit = m.group("unit").lower()
    delta = _unit_delta(unit, n)
    if delta is None:  # months and years: rolling, so 30 and 365 days are close enough
        delta = timedelta(days=30 * n if unit == "month" else 365 * n)
    return c.rolling(delta)


def _last_unit(m: re.Match[str], c: _Clock) -> TimeRange | None:
    """'last week' = the previous calendar week; 'last hour' = the past 60 minutes."""
    unit = m.group("unit").lower()
    if unit in ("minute", "min", "hour", "hr"):
        return _rolling(m, c)
    if unit == "day":
        return c.rolling(timedelta(days=1))
    if unit == "week":
        return c.week_of(c.today - timedelta(days=7))
    if unit == "month":
        y, mo = c.add_months(c.today.year, c.today.month, -1)
        return c.month(y, mo)
    return c.year(c.today.year - 1)


def _this_unit(m: re.Match[str], c: _Clock) -> TimeRange | None:
    unit = m.group("unit").lower()
    if unit == "week":
        return c.week_of(c.today)
    if unit == "month":
        return c.month(c.today.year, c.today.month)
    if unit == "year":
        return c.year(c.today.year)
    if unit == "day":
        return c.days(c.today)
    return _rolling(m, c)


def _ago(m: re.Match[str], c: _Clock) -> TimeRange | None:
    """'2 days ago' is that calendar day; '3 hours ago' is the hour around that moment;
    'a few weeks ago' is vague, so it spans from one unit nearer to two units further."""
    word = " ".join(m.group("n").lower().split())
    n = _number(word)
    unit = m.group("unit").lower()
    if word.endswith(("few", "couple of")):
        far, near = _ago_exact(n + 2, unit, c), _ago_exact(max(n - 1, 1), unit, c)
        return TimeRange(far.since, near.until)
    return _ago_exact(n, unit, c)


def _ago_exact(n: int, unit: str, c: _Clock) -> TimeRange:
    if unit in ("minute", "min", "hour", "hr"):
        delta = _unit_delta(unit, n)
        step = _unit_delta(unit, 1)
        assert delta is not None and step is not None
        center = c.now - delta
        return TimeRange((center - step).astimezone(UTC), (center + step).astimezone(UTC))
    if unit == "day":
        return c.days(c.today - timedelta(days=n))
    if unit == "week":
        return c.week_of(c.today - timedelta(weeks=n))
    if unit == "month":
        return c.month(*c.add_months(c.today.year, c.today.month, -n))
    return c.year(c.today.year - n)


def _weekend(m: re.Match[str], c: _Clock) -> TimeRange | None:
    """'the weekend' / 'this weekend': the current or most recent one; 'last weekend': the most
    recent one that is over."""
    saturday = c.today - timedelta(days=(c.today.weekday() - 5) % 7)
    if (m.group("which") or "").lower() == "last" and c.today <= saturday + timedelta(days=1):
        saturday -= timedelta(days=7)
    return c.days(saturday, 2)


def _relative_day(m: re.Match[str], c: _Clock) -> TimeRange | None:
    word = m.group("word").lower()
    offset = {"today": 0, "tonight": 0, "yesterday": -1, "day before yesterday": -2}[
        re.sub(r"^the\s+|\s+", " ", word).strip()
    ]
    day = c.today + timedelta(days=offset)
    part = (m.group("part") or "").lower()
    if word == "tonight":
        part = "evening"
    if part:
        start, end = DAY_PARTS[part]
        return TimeRange(c.at(day, start), c.at(day, end))
    return c.days(day)


def _this_part(m: re.Match[str], c: _Clock) -> TimeRange | None:
    start, end = DAY_PARTS[m.group("part").lower()]
    return TimeRange(c.at(c.today, start), c.at(c.today, end))


def _last_night(_: re.Match[str], c: _Clock) -> TimeRange | None:
    return TimeRange(c.at(c.today - timedelta(days=1), 18), c.at(c.today, 6))


def _weekday(m: re.Match[str], c: _Clock) -> TimeRange | None:
    """'on Monday' / 'last Monday': the most recent such day; today when it is that day
    and 'last' was not said."""
    target = WEEKDAYS[m.group("weekday").lower()]
    back = (c.today.weekday() - target) % 7
    if back == 0 and (m.group("last") or "").strip():
        back = 7
    return c.days(c.today - timedelta(days=back))


def _month_year(m: re.Match[str], c: _Clock) -> TimeRange | None:
    month = MONTHS[m.group("month").lower()]
    year = int(m.group("year")) if m.group("year") else c.latest_month(month)
    return c.month(year, month)


def _last_month_name(m: re.Match[str], c: _Clock) -> TimeRange | None:
    """'last March': the most recent March that is over (never the current month)."""
    month = MONTHS[m.group("month").lower()]
    year = c.today.year if month < c.today.month else c.today.year - 1
    return c.month(year, month)


def _day_month(m: re.Match[str], c: _Clock) -> TimeRange | None:
    month = MONTHS[m.group("month").lower()]
    day = int(m.group("day"))
    if m.group("year"):
        year = int(m.group("year"))
    else:
        year = c.today.year
        try:
            if date(year, month, day) > c.today:
                year -= 1
        except ValueError:
            return None
    try:
        return c.days(date(year, month, day))
    except ValueError:
        return None


def _iso(m: re.Match[str], c: _Clock) -> TimeRange | None:
    try:
        return c.days(date.fromisoformat(m.group("iso")))
    except ValueError:
        return None


def _year(m: re.Match[str], c: _Clock) -> TimeRange | None:
    return c.year(int(m.group("year")))


# A point-like expression that can follow since/before/after/until/between.
_ANCHORS: list[tuple[str, Handler]] = [
    (_RELDAY, _relative_day),
    (_ISO_DATE, _iso),
    (_MONTH_DAY, _day_month),
    (_DAY_MONTH, _day_month),
    (r"(?P<last>last\s+)?" + _WEEKDAY, _weekday),
    (_MONTH + r"(?:\s+" + _YEAR + r")?", _month_year),
    (_YEAR, _year),
    (r"last\s+" + _UNIT, _last_unit),
    (r"this\s+" + _UNIT, _this_unit),
    (_NUM + r"\s+" + _UNIT + r"\s+ago", _ago),
]

# Whole expressions, most specific first; each must stand on word boundaries.
_PATTERNS: list[tuple[str, Handler]] = [
    (
        r"(?:(?:in|over|during|within|for)\s+)?(?:the\s+)?(?:last|past|previous)\s+"
        + _NUM
        + r"\s+"
        + _UNIT,
        _rolling,
    ),
    (r"(?:(?:in|over|during)\s+)?(?:the\s+)?past\s+" + _UNIT, _rolling),
    (r"(?:(?:in|over|during)\s+)?(?:the\s+)?(?:last|previous)\s+" + _UNIT, _last_unit),
    (r"(?:earlier\s+)?(?:(?:during|in)\s+)?this\s+(?P<part>morning|afternoon|evening)", _this_part),
    (r"last\s+night", _last_night),
    (r"(?:(?:on|over|during)\s+)?(?P<which>the|this|last)\s+weekend", _weekend),
    (r"(?:earlier\s+|so\s+far\s+)?(?:(?:in|during|over)\s+)?this\s+" + _UNIT, _this_unit),
    (_NUM + r"\s+" + _UNIT + r"\s+ago", _ago),
    (r"(?:earlier\s+)?" + _RELDAY, _relative_day),
    (r"(?:on\s+)?" + _ISO_DATE, _iso),
    (r"(?:on\s+)?" + _MONTH_DAY, _day_month),
    (r"(?:on\s+)?" + _DAY_MONTH, _day_month),
    (r"(?:on\s+)?(?P<last>last\s+)" + _WEEKDAY, _weekday),
    (r"on\s+(?P<last>)" + _WEEKDAY, _weekday),
    (r"last\s+" + _MONTH, _last_month_name),
    (_IN + r"(?:early\s+|late\s+|mid\s+)?" + _MONTH + r"(?:\s+" + _YEAR + r")?", _month_year),
    (_MONTH + r"\s+" + _YEAR, _month_year),
    (_IN + _YEAR, _year),
]

_COMPILED = [(re.compile(r"(?<![\w-])" + p + r"(?![\w-])", re.IGNORECASE), h) for p, h in _PATTERNS]
# the anchors once more without their group names, which may not repeat in one pattern
_ANCHOR_ALT = re.sub(r"\(\?P<\w+>", "(?:", "|".join(f"(?:{p})" for p, _ in _ANCHORS))
_BOUND = re.compile(
    r"(?<![\w-])(?P<op>since|after|before|until|till|from|between)\s+(?P<a>"
    + _ANCHOR_ALT
    + r")(?:\s+(?:and|to|until|till|-)\s+(?P<b>"
    + _ANCHOR_ALT
    + r"))?(?![\w-])",
    re.IGNORECASE,
)
_ANCHOR_COMPILED = [(re.compile(r"^" + p + r"$", re.IGNORECASE), h) for p, h in _ANCHORS]


def _anchor(text: str, clock: _Clock) -> TimeRange | None:
    for pattern, handler in _ANCHOR_COMPILED:
        m = pattern.match(text.strip())
        if m:
            return handler(m, clock)
    return None


def _bounded(m: re.Match[str], clock: _Clock) -> TimeRange | None:
    op = m.group("op").lower()
    first = _anchor(m.group("a"), clock)
    if first is None:
        return None
    if m.group("b"):
        second = _anchor(m.group("b"), clock)
        if second is None or op not in ("between", "from"):
            return None
        return TimeRange(first.since, second.until)
    if op == "since":
        return TimeRange(first.since, None)
    if op == "after":
        return TimeRange(first.until, None)
    if op in ("between", "from"):  # "notes from Monday" means on Monday, not since
        return None
    return TimeRange(None, first.since)  # before / until / till


def _tidy(text: str) -> str:
    text = re.sub(r"\s+([?.!,;:])", r"\1", text)
    text = re.sub(r"\s{2,}", " ", text)
    return text.strip(" ,;")


def parse_time(query: str, now: datetime) -> TimeParse:
    """The first (longest) time expression in ``query``, resolved against ``now``."""
    clock = _Clock(now)
    best: tuple[int, int, TimeRange] | None = None
    candidates: list[tuple[re.Match[str], Handler]] = [
        (m, _bounded) for m in _BOUND.finditer(query)
    ]
    for pattern, handler in _COMPILED:
        candidates.extend((m, handler) for m in pattern.finditer(query))
    for m, handler in candidates:
        start, end = m.span()
        while start < end and query[start].isspace():
            start += 1
        if best is not None and not (start < best[0] or (start == best[0] and end > best[1])):
            continue
        try:
            found = handler(m, clock)
        except (KeyError, ValueError, OverflowError):
            found = None
        if found is not None:
            best = (start, end, found)
    if best is None:
        return TimeParse(None, query.strip())
    start, end, found = best
    expression = query[start:end].strip()
    rest = _tidy(query[:start] + " " + query[end:])
    return TimeParse(TimeRange(found.since, found.until, expression), rest)
