"""Route declarations: a declared role is enforced, an undeclared route is admin-only (fail
closed), both for routes on the app and on included routers."""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI
from fastapi.testclient import TestClient

from agent_memory_common.auth.access import (
    READ,
    WRITE,
    Authenticator,
    Principal,
    app_routes,
    authorize,
    declared_access,
)
from agent_memory_common.web.http import install_error_handlers


class RoleByToken(Authenticator):
    """The bearer token is the role: this tests the route machinery, not the key store."""

    async def principal(self, authorization: str | None) -> Principal:
        role = (authorization or "").removeprefix("Bearer ")
        assert role in ("reader", "writer", "admin")
        return Principal(tenant="t", role=role)  # type: ignore[arg-type]


def make_app() -> FastAPI:
    app = FastAPI(dependencies=[Depends(authorize)])
    app.state.auth = RoleByToken("", None)
    install_error_handlers(app)
    router = APIRouter()

    @router.get("/read", dependencies=[READ])
    async def read() -> dict[str, str]:
        return {}

    @router.post("/write", dependencies=[WRITE])
    async def write() -> dict[str, str]:
        return {}

    @router.get("/forgot")
    async def forgot() -> dict[str, str]:
        return {}

    app.include_router(router)
    return app


def test_declared_roles_are_enforced_and_undeclared_routes_are_admin_only() -> None:
    client = TestClient(make_app())
    expected = {
        ("GET", "/read"): {"reader": 200, "writer": 200, "admin": 200},
        ("POST", "/write"): {"reader": 403, "writer": 200, "admin": 200},
        ("GET", "/forgot"): {"reader": 403, "writer": 403, "admin": 200},
    }
    for (method, path), by_role in expected.items():
        for role, status in by_role.items():
            r = client.request(method, path, headers={"authorization": f"Bearer {role}"})
            assert r.status_code == status, (method, path, role, r.text)


def test_app_routes_walks_included_routers() -> None:
    found = {path: declared_access(route) for path, route in app_routes(make_app())}
    assert set(found) >= {"/read", "/write", "/forgot"}
    assert found["/forgot"] is None
    assert found["/write"] is not None and found["/write"].role == "writer"
