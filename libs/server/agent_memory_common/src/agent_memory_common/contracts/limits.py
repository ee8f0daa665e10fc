"""What every store and index can hold, stated once: an event outside it is refused at the door.

The gateway's ``202`` promises that the event will be recorded *and* indexed. Before these limits
(issue 55) some events were accepted and then lost downstream: metadata nested 200 levels deep
passed the gateway but not pydantic's JSON parser in the consumers (its recursion limit is 200,
and the envelope adds levels), so the segmenter, the embedder and the bm25-indexer dead-lettered
it; a ``ts`` in year 1 or 9999 was refused by Tantivy 8 times over, then dead-lettered; 254
levels broke ``orjson.dumps`` in the gateway itself (a 500); and a number such as ``1e308`` is
stored by Postgres ``jsonb`` as a 309-digit integer, which no JSON encoder of ours writes back
(a 500 on every read of it). So, for every event (HTTP and gRPC, through ``EventIn``) and every
metadata the query service stores (episodes, actions):

- ``metadata`` is nested at most ``MAX_METADATA_DEPTH`` (32) levels: ``{"a": 1}`` is one level,
  ``{"a": {"b": [1]}}`` three;
- every number in it is finite and in ``[-2**63, 2**63)``: what ``jsonb`` gives back as a number
  a 64-bit integer (or a double) holds;
- ``ts`` lies in ``[TS_MIN, TS_MAX)``, 1970-01-01 to 2199-12-31 UTC, inside what every store
  accepts: Tantivy's date field (nanoseconds in an i64: 1677-09-21 to 2262-04-11), OpenSearch's
  ``date`` (years 0000 to 9999 in its default format) and Postgres ``timestamptz`` (4713 BC to
  294276 AD).

The checks are cheap where it matters: flat metadata (the common case) costs one pass over its
values, and only nested metadata is walked.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, ValidationInfo

MAX_METADATA_DEPTH = 32
TS_MIN = datetime(1970, 1, 1, tzinfo=UTC)
TS_MAX = datetime(2200, 1, 1, tzinfo=UTC)  # exclusive
NUMBER_MIN = -(2**63)
NUMBER_END = 2**63  # exclusive; a float is compared exactly, so 9.3e18 is refused

_SCALARS = (str, bool, type(None))


def ts_problem(when: datetime) -> str | None:
    """Why ``when`` cannot be stored and indexed, or None when it can."""
    if TS_MIN <= when < TS_MAX:
        return None
    return f"must be between {TS_MIN:%Y-%m-%d} and 2199-12-31 (UTC), not {when.isoformat()}"


def clamp_ts(when: datetime) -> datetime:
    """``when`` moved into ``[TS_MIN, TS_MAX]``: for the bounds of a search, which may lie
    anywhere (``until=9999-12-31`` means "no end"), while an index refuses a date outside its
    range. Nothing stored lies outside, so the answer is the same."""
    return min(max(when, TS_MIN), TS_MAX)


def metadata_problem(metadata: dict[str, Any], field: str = "metadata") -> str | None:
    """Why ``metadata`` cannot be stored and read back, or None when it can.

    The message names the place (``metadata.a.b[2]``). Flat metadata is one pass with no
    recursion; anything nested is walked, at most ``MAX_METADATA_DEPTH`` levels down, and the
    place is spelled out only when something is wrong.
    """
    for value in metadata.values():
        kind = type(value)
        if kind in _SCALARS:
            continue
        if (kind is int or kind is float) and NUMBER_MIN <= value < NUMBER_END:
            continue
        break  # a container or a bad number: the walk words it
    else:
        return None
    found = _walk(metadata, 1)
    if found is None:
        return None
    message, *steps = found
    place = field + "".join(reversed(steps))
    if len(place) > _PLACE_MAX:
        place = place[:_PLACE_MAX] + "..."
    return f"{place}: {message}"


_PLACE_MAX = 200


def _walk(value: Any, depth: int) -> list[str] | None:
    """None, or [message, the steps back up from the bad value]: built only on the way out."""
    kind = type(value)
    if kind is dict or kind is list:
        if depth > MAX_METADATA_DEPTH:
            return [f"nested deeper than {MAX_METADATA_DEPTH} levels"]
        items = value.items() if kind is dict else enumerate(value)
        for key, item in items:
            found = _walk(item, depth + 1)
            if found is not None:
                found.append(f".{key}" if kind is dict else f"[{key}]")
                return found
        return None
    if kind is int or kind is float:
        if NUMBER_MIN <= value < NUMBER_END:
            return None
        # NaN compares false with everything, so it is refused here with the infinities
        return [f"number {value!r} is outside what the stores hold (finite, -2**63 <= n < 2**63)"]
    return None


def _storable(value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    problem = metadata_problem(value, info.field_name or "metadata")
    if problem:
        raise ValueError(problem)
    return value


# A free-form JSON object that is stored as ``jsonb`` and read back: a pydantic field type, so
# that each model says it in its annotation (the event's metadata, an episode's, a lesson's source)
StorableObject = Annotated[dict[str, Any], AfterValidator(_storable)]
