"""``/api/...``: the page scripts' calls, passed to the query service with the user's key;
``/login`` and ``/logout``: putting the key in (and out of) its cookie; ``/healthz``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from agent_memory_common.web.http import ApiError
from agent_memory_dashboard.security import KEY_COOKIE, WRITE_HEADER, Sessions
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


def sessions(request: Request) -> Sessions:
    found = request.app.state.sessions
    assert isinstance(found, Sessions)
    return found


def key_of(request: Request) -> str | None:
    """The signed-in key: the one the session cookie names, while that session lasts."""
    return sessions(request).key(request.cookies.get(KEY_COOKIE))


def signed_in(request: Request) -> bool:
    return key_of(request) is not None


def _is_https(request: Request) -> bool:
    """Over TLS: the socket's scheme, or X-Forwarded-Proto when uvicorn trusts the proxy
    (``trusted_proxies``), which it has already written into the scheme."""
    return request.url.scheme == "https"


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
    """Check the key against the API, then keep it here and give the browser a session id."""
    try:
        answer = await query_api(request).get("/v1/projects", body.key.strip(), limit=1)
    except SignInRequired:
        raise ApiError(
            401, "unauthorized", "the query service refused this key", field="key"
        ) from None
    if answer.status == 429:  # the query service's limit of failed keys from this address
        raise ApiError(
            429,
            "too_many_failures",
            answer.message,
            field="key",
            headers={"Retry-After": answer.retry_after or "1"},
        )
    if not answer.ok:
        raise ApiError(502, "bad_gateway", answer.message)
    options = request.app.state.settings.dashboard
    response = Response(status_code=204)
    response.set_cookie(
        KEY_COOKIE,
        sessions(request).open(body.key.strip()),
        max_age=options.session_max_age_s,
        httponly=True,
        samesite="strict",
        secure=options.secure_cookie or _is_https(request),
        path="/",
    )
    return response


@router.post("/logout", include_in_schema=False)
async def logout(request: Request) -> Response:
    """Forget the session here (a copy of the cookie stops working), and in the browser."""
    sessions(request).close(request.cookies.get(KEY_COOKIE))
    response = Response(status_code=204)
    response.delete_cookie(
        KEY_COOKIE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.app.state.settings.dashboard.secure_cookie or _is_https(request),
    )
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
    key = key_of(request)
    if key is None and (KEY_COOKIE in request.cookies or request.app.state.settings.tokens):
        raise SignInRequired  # 401 before the body is read: a stale cookie, or team mode
    raw = request.scope.get("raw_path") or request.url.path.encode()
    upstream_path = raw.decode("latin-1").removeprefix("/api")  # as sent: ids stay encoded
    if "/../" in upstream_path or upstream_path.endswith("/.."):
        raise ApiError(422, "validation_error", "path: no '..' segments", field="path")
    upstream = await upstream_for(request, upstream_path).forward(
        request.method,
        upstream_path,
        key,
        request.url.query.encode(),
        await request.body(),
    )
    if upstream.status_code == 401:
        raise SignInRequired
    headers: dict[str, Any] = {}
    if "content-type" in upstream.headers:
        headers["content-type"] = upstream.headers["content-type"]
    return Response(upstream.content, status_code=upstream.status_code, headers=headers)
