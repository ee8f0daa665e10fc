"""HTTP plumbing shared by the gateway and the query service.

One exception family with a status code and one handler, so every error body has the same
shape: ``{"error": <code>, "message": <text>, "field": <dotted path or null>}``. Request
validation errors name the offending field; expected failures are never a 500.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import orjson
from fastapi import FastAPI, Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from agent_memory_common.redaction.engine import redact_json

LOCAL_TENANT = "default"


class JSONBytesResponse(JSONResponse):
    """JSON rendered by orjson: datetimes as RFC 3339, and several times faster than json.

    FastAPI deprecated its own ORJSONResponse; this is the same few lines, kept here. It is a
    ``JSONResponse`` because FastAPI documents a route's ``response_model`` in /openapi.json
    only for those (for any other response class it writes "a string").
    """

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)


class RedactingJSONResponse(JSONBytesResponse):
    """JSON whose every string went through the current secret detector on the way out.

    The gateway redacts before anything is stored, but a rule added today must also protect
    what was stored before it existed: services that answer with stored text use this as their
    default response class, so every route (and every MCP tool that calls them) is covered.
    """

    def render(self, content: Any) -> bytes:
        return super().render(redact_json(content))


class ApiError(Exception):
    """An error with an HTTP status, a machine-readable code and the field at fault."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
        details: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers
        self.details = details

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.code, "message": self.message, "field": self.field}
        if self.details:
            body["details"] = self.details
        return body


ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {"type": "string"},
        "message": {"type": "string"},
        "field": {"type": ["string", "null"]},
        "details": {"type": "array", "items": {"type": "object"}},
    },
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` entries for the listed error statuses."""
    return {
        s: {"description": "Error", "content": {"application/json": {"schema": ERROR_SCHEMA}}}
        for s in statuses
    }


_SECTIONS = ("body", "query", "path", "header", "cookie")


def field_path(loc: tuple[int | str, ...] | list[int | str]) -> str:
    """Render a pydantic location as ``events[3].role``."""
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def validation_details(errors: list[Any], *, request: bool = False) -> list[dict[str, Any]]:
    """Field paths and messages of pydantic errors; ``request``: locations start with the
    request section (``body``, ``query``...), which is dropped, and only that one part, so a
    body field that happens to be called ``query`` is still named."""
    details = []
    for err in errors:
        loc = [p for p in err.get("loc", ()) if not (isinstance(p, str) and "[" in p)]
        if request and loc and loc[0] in _SECTIONS:
            loc = loc[1:]
        details.append({"field": field_path(loc), "message": err.get("msg", "invalid")})
    return details


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = validation_details(list(exc.errors()), request=True)
        first = details[0] if details else {"field": None, "message": "invalid request"}
        err = ApiError(
            422,
            "validation_error",
            f"{first['field']}: {first['message']}" if first["field"] else str(first["message"]),
            field=first["field"],
            details=details,
        )
        return JSONResponse(err.body(), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = "not_found" if exc.status_code == 404 else "http_error"
        err = ApiError(exc.status_code, code, str(exc.detail))
        return JSONResponse(err.body(), status_code=exc.status_code, headers=exc.headers)


def _query_parameter_names(dependant: Dependant) -> set[str]:
    """Every query parameter a route reads, through its dependencies and query models."""
    names: set[str] = set()
    pending = [dependant]
    while pending:
        current = pending.pop()
        pending.extend(current.dependencies)
        for param in current.query_params:
            annotation = param.field_info.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                names |= {f.alias or n for n, f in annotation.model_fields.items()}
            else:
                names.add(param.alias)
    return names


_KNOWN_QUERY: dict[int, frozenset[str]] = {}


async def reject_unknown_query_parameters(request: Request) -> None:
    """422 naming the parameter when a request carries one its route does not read.

    A misspelt filter (``?sesion_id=...``) used to be ignored silently, so the caller got the
    unfiltered answer, while ``POST /v1/search`` already rejected unknown body fields. Used as
    an application-wide dependency (``FastAPI(dependencies=[Depends(...)])``); it reads the
    matched route from the scope, so each route is checked against its own parameters.
    """
    raw = request.scope.get("query_string", b"")
    route = request.scope.get("route")
    if not raw or not isinstance(route, APIRoute):
        return
    known = _KNOWN_QUERY.get(id(route))
    if known is None:
        known = _KNOWN_QUERY[id(route)] = frozenset(_query_parameter_names(route.dependant))
    for name, _ in parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
        if name not in known:
            expected = f" (expected one of: {', '.join(sorted(known))})" if known else ""
            raise ApiError(
                422,
                "validation_error",
                f"{name}: unknown query parameter{expected}",
                field=name,
            )
