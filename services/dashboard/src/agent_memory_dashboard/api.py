"""``/api/...``: the page scripts' calls, passed to the query service with the user's key;
``/login`` and ``/logout``: putting the key in (and out of) its cookie; ``/healthz``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from agent_memory_common.web.http import ApiError
from agent_memory_dashboard.security import KEY_COOKIE, WRITE_HEADER
from agent_memory_dashboard.upstream import QueryApi, SignInRequired

router = APIRouter()


def query_api(request: Request) -> QueryApi:
    api = request.app.state.query
    assert isinstance(api, QueryApi)
    return api


# Routes served by the retention pruner rather than the query service.
PRUNER_PATHS = ("/v1/admin/cleanup",)


def upstream_for(request: Request, path: str) -> QueryApi:
    if path.split("?", 1)[0] in PRUNER_PATHS:
        api = request.app.state.pruner
        assert isinstance(api, QueryApi)
        return api
    return query_api(request)


def key_of(request: Request) -> str | None:
    return request.cookies.get(KEY_COOKIE) or None


@router.get("/healthz", include_in_schema=False)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", include_in_schema=False)
async def readyz(request: Request) -> dict[str, str]:
    """Ready when the query service answers (its readiness covers Postgres and NATS)."""
    try:
        answer = await query_api(request).get("/readyz", None)
    except SignInRequired:  # pragma: no cover - /readyz takes no key
        answer = None
    if answer is None or not answer.ok:
        raise ApiError(503, "unavailable", "query service not ready", headers={"Retry-After": "2"})
    return {"status": "ready"}


class SignIn(BaseModel):
    key: str = Field(min_length=1, max_length=500, description="An API key of the query service.")


@router.post("/login", include_in_schema=False)
async def login(request: Request, body: SignIn) -> Response:
    """Check the key against the API, then keep it in an HttpOnly cookie."""
    try:
        answer = await query_api(request).get("/v1/projects", body.key.strip(), limit=1)
    except SignInRequired:
        raise ApiError(
            401, "unauthorized", "the query service refused this key", field="key"
        ) from None
    if not answer.ok:
        raise ApiError(502, "bad_gateway", answer.message)
    response = Response(status_code=204)
    response.set_cookie(
        KEY_COOKIE,
        body.key.strip(),
        httponly=True,
        samesite="strict",
        secure=request.app.state.settings.dashboard.secure_cookie,
        path="/",
    )
    return response


@router.post("/logout", include_in_schema=False)
async def logout() -> Response:
    response = Response(status_code=204)
    response.delete_cookie(KEY_COOKIE, path="/")
    return response


ApiPath = Annotated[str, Path(pattern=r"^v1/[^\x00-\x1f\x7f]+$", max_length=1000)]


@router.api_route("/api/{path:path}", methods=["GET", "POST", "PUT", "DELETE"])
async def passthrough(request: Request, path: ApiPath) -> Response:
    """The query API as the page scripts see it: same routes, the key added from the cookie.

    Writes must carry ``x-dashboard: 1`` (see ``security``); the query service decides what the
    key may do, so a reader's key cannot pin or erase through the dashboard either.
    """
    if request.method != "GET" and request.headers.get(WRITE_HEADER) != "1":
        raise ApiError(403, "forbidden", f"dashboard writes need the {WRITE_HEADER} header")
    raw = request.scope.get("raw_path") or request.url.path.encode()
    upstream_path = raw.decode("latin-1").removeprefix("/api")  # as sent: ids stay encoded
    if "/../" in upstream_path or upstream_path.endswith("/.."):
        raise ApiError(422, "validation_error", "path: no '..' segments", field="path")
    upstream = await upstream_for(request, upstream_path).forward(
        request.method,
        upstream_path,
        key_of(request),
        request.url.query.encode(),
        await request.body(),
    )
    if upstream.status_code == 401:
        raise SignInRequired
    headers: dict[str, Any] = {}
    if "content-type" in upstream.headers:
        headers["content-type"] = upstream.headers["content-type"]
    return Response(upstream.content, status_code=upstream.status_code, headers=headers)
