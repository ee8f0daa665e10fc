"""A project's injected tokens and answers over the last 1, 7 and 30 UTC days, from the rows
of ``recall_usage`` (one per day and kind once summed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

WINDOWS = (1, 7, 30)  # days, today included
KINDS = ("brief", "recall")
FIELDS = ("answers", "given", "tokens")


def today() -> date:
    return datetime.now(UTC).date()


def since(day: date, days: int = WINDOWS[-1]) -> date:
    """The first day of the window of ``days`` days ending on ``day``."""
    return day - timedelta(days=days - 1)


def windows(rows: Iterable[Mapping[str, Any]], day: date) -> list[dict[str, Any]]:
    """``RecallWindow`` of each of ``WINDOWS``; ``rows``: (day, kind, answers, given, tokens)."""
    rows = list(rows)
    out: list[dict[str, Any]] = []
    for days in WINDOWS:
        first = since(day, days)
        kinds = {kind: dict.fromkeys(FIELDS, 0) for kind in KINDS}
        for row in rows:
            if row["day"] >= first and row["kind"] in kinds:
                for f in FIELDS:
                    kinds[row["kind"]][f] += int(row[f])
        totals = {f: sum(kinds[k][f] for k in KINDS) for f in FIELDS}
        out.append({"days": days, **totals, **kinds})
    return out
