"""One guard for what Postgres and JSON cannot hold, applied to every route of the service.

Postgres text and jsonb refuse the NUL character (``psycopg.DataError``) and a lone UTF-16
surrogate (text that is not Unicode: ``UnicodeEncodeError`` on the way in), and an integer beyond
64 bits or a number that overflows to infinity can be stored in jsonb but not be written back as
JSON (orjson refuses it). Without this guard such an input was a 500 at the first write or read;
with it, a 422 that names the field, before a route sees the request. The field is named as in
every other validation error: ``q``, ``episode_id``, ``actions[0].metadata.n``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.dependencies.models import Dependant

from agent_memory_common.web.http import ApiError, field_path

INT_MIN, INT_MAX = -(2**63), 2**64 - 1
# An id or name in a path or query (project, node, topic, episode...): no control characters.
ID_PATTERN = r"^[^\x00-\x1f\x7f]+$"
# The optional project_id filter of a listing.
ProjectParam = Annotated[str | None, Query(min_length=1, max_length=200, pattern=ID_PATTERN)]
# the only ways a JSON body can hold one: an escaped NUL or surrogate, a long number
_SUSPECT = re.compile(rb"\\u0000|\\u[dD][89abAB]|\d{19,}|[eE][+-]?\d{3,}")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _refuse(field: str, problem: str) -> ApiError:
    return ApiError(422, "validation_error", f"{field}: {problem}", field=field)


def check_value(value: Any, path: list[int | str]) -> None:
    """Raise a 422 for the first NUL in a string (or key) or out-of-range number in ``value``."""
    if isinstance(value, str):
        if "\x00" in value:
            raise _refuse(field_path(path) or "body", "must not contain the NUL character")
        if not value.isascii() and not _encodable(value):
            raise _refuse(field_path(path) or "body", "must be valid Unicode (a lone surrogate)")
    elif isinstance(value, bool):
        return
    elif isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise _refuse(field_path(path) or "body", "integer out of the 64-bit range")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _refuse(field_path(path) or "body", "number out of range")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_value(key, path)  # a key with a NUL: the object holding it is named
            check_value(item, [*path, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_value(item, [*path, index])


def _query_names(dependant: Dependant) -> frozenset[str]:
    """The query parameters a route reads (its own and its dependencies')."""
    names = {p.alias for p in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return frozenset(names)


async def guard_inputs(request: Request) -> None:
    """App-wide dependency: path and query parameters the route reads (others are ignored, as
    the route ignores them), then a JSON body when it may hold one."""
    for name, text in request.path_params.items():
        check_value(text, [name])
    dependant = getattr(request.scope.get("route"), "dependant", None)
    declared = _query_names(dependant) if isinstance(dependant, Dependant) else None
    for name, text in request.query_params.multi_items():
        if declared is None or name in declared:
            check_value(text, [name])
    if request.method not in _BODY_METHODS:
        return
    body = await request.body()  # cached by Starlette: the route reads it again for free
    if not _SUSPECT.search(body):
        return
    try:
        data = json.loads(body)
    except ValueError:
        return  # not JSON: the route's own parsing answers that
    check_value(data, [])
