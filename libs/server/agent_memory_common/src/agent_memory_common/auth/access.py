"""Who is calling, and may they: API keys with roles, shared by the gateway and the query service.

A caller is a ``Principal``: a tenant, a role (reader < writer < admin) and optional bounds (the
projects it may touch, the agent and the user it writes as). It comes from the bearer token:

- no tokens configured (``AGENT_MEMORY_TOKENS`` empty) is local mode: a request without a key is
  the admin of tenant ``default`` (a key, when one is presented, is still honoured, so a bounded
  key can be tried locally);
- an ``AGENT_MEMORY_TOKENS`` pair ``token:tenant`` is a bootstrap admin key of that tenant (how a
  team deployment issues its first keys);
- ``amk_<key_id>_<secret>`` is an API key kept in Postgres (``api_keys``, migration 0013): only
  sha256 of the secret is stored, and it is compared in constant time.

Keys are looked up by their public ``key_id`` and the answer is cached for ``key_cache_s``
seconds (default 5), so the ingest hot path costs one dict lookup per request; a revocation takes
effect everywhere within that time.

Every route declares the role it needs with an ``Access`` dependency (``READ``, ``WRITE``,
``ADMIN``, ``PUBLIC``): ``dependencies=[READ]`` in the route decorator. A route without one is
treated as admin-only by ``authorize`` (fail closed) and fails the role-matrix test
(``tests/test_role_matrix.py``).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg
from fastapi import Depends, FastAPI, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_memory_common.auth.roles import ROLES as ROLES
from agent_memory_common.auth.roles import Role as Role
from agent_memory_common.core.settings import CommonSettings
from agent_memory_common.db.postgres import load_queries
from agent_memory_common.web.browser import CrossOriginGuard, send_error
from agent_memory_common.web.http import LOCAL_TENANT, ApiError
from agent_memory_common.web.limits import (
    PROBE_PATHS,
    BodyLimit,
    FailureBuckets,
    client_address,
    send_too_many,
)

_RANK: dict[str, int] = {"reader": 1, "writer": 2, "admin": 3}
KEY_PREFIX = "amk_"
_CACHE_MAX = 10_000
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="agent-memory"'}

Q = load_queries("agent_memory_common.auth", "sql/keys.sql")


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller: its tenant, its role, and the bounds of its key (None: unbounded)."""

    tenant: str
    role: Role
    key_id: str | None = None  # None: local mode or a bootstrap token
    projects: frozenset[str] | None = None
    agent_id: str | None = None
    user_id: str | None = None
    expires_at: datetime | None = None

    def has(self, role: Role) -> bool:
        return _RANK[self.role] >= _RANK[role]

    def require(self, role: Role) -> Principal:
        """Self, or a 403 naming the role needed."""
        if not self.has(role):
            raise ApiError(
                403, "forbidden", f"this key's role is {self.role}; this needs {role} or above"
            )
        return self

    def require_project(self, project_id: str, field: str = "project_id") -> None:
        """403 when the key is limited to other projects."""
        if self.projects is not None and project_id not in self.projects:
            raise ApiError(
                403,
                "forbidden",
                f"this key may not use project {project_id!r}",
                field=field,
            )


LOCAL_ADMIN = Principal(tenant=LOCAL_TENANT, role="admin")


# ---- key material -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewKey:
    key_id: str
    secret: str  # the full bearer token, shown once

    @property
    def secret_hash(self) -> bytes:
        parts = split_key(self.secret)
        assert parts is not None
        return hash_secret(parts[1])


def hash_secret(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def new_key() -> NewKey:
    key_id = secrets.token_hex(6)
    return NewKey(key_id, f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}")


def split_key(token: str) -> tuple[str, str] | None:
    """(key_id, secret) of an ``amk_`` token, or None when it is not shaped like one."""
    if not token.startswith(KEY_PREFIX):
        return None
    key_id, sep, secret = token[len(KEY_PREFIX) :].partition("_")
    if not sep or not key_id or not secret:
        return None
    return key_id, secret


def parse_bootstrap_tokens(tokens: str) -> dict[str, str]:
    """``token:tenant`` pairs of ``AGENT_MEMORY_TOKENS``."""
    found: dict[str, str] = {}
    for pair in tokens.split(","):
        pair = pair.strip()
        if not pair:
            continue
        token, sep, tenant = pair.rpartition(":")
        if not sep or not token or not tenant:
            raise ValueError("AGENT_MEMORY_TOKENS: expected 'token:tenant' pairs")
        found[token] = tenant
    return found


def principal_from_row(row: dict[str, Any], secret: str, now: datetime) -> Principal | None:
    """The key's principal if the secret matches and the key is live, else None."""
    if not hmac.compare_digest(bytes(row["secret_hash"]), hash_secret(secret)):
        return None
    if row["revoked_at"] is not None:
        return None
    expires = row["expires_at"]
    if expires is not None and expires <= now:
        return None
    return Principal(
        tenant=row["tenant"],
        role=row["role"],
        key_id=row["key_id"],
        projects=frozenset(row["projects"]) if row["projects"] is not None else None,
        agent_id=row["agent_id"],
        user_id=row["user_id"],
        expires_at=expires,
    )


# ---- the authenticator ------------------------------------------------------------------------


class Authenticator:
    """Bearer token -> ``Principal``: bootstrap tokens in memory, API keys from Postgres, cached.

    ``pool`` may be None for an app that runs without Postgres (then only bootstrap tokens and
    local mode work, and an API key is a 503).
    """

    def __init__(
        self,
        tokens: str,
        pool: AsyncConnectionPool | None,
        *,
        cache_s: float = 5.0,
        lookup_timeout_s: float = 2.0,
        stale_s: float = 3600.0,
    ) -> None:
        self._bootstrap = [
            (token.encode(), tenant) for token, tenant in parse_bootstrap_tokens(tokens).items()
        ]
        self.pool = pool
        self.cache_s = cache_s
        self.lookup_timeout_s = lookup_timeout_s
        self.stale_s = stale_s
        self._cache: dict[str, tuple[float, Principal | None]] = {}
        self._lookups: dict[str, asyncio.Task[Principal | None]] = {}

    @property
    def local_mode(self) -> bool:
        return not self._bootstrap

    async def principal(self, authorization: str | None) -> Principal:
        """The caller, or an ``ApiError`` 401 (503 when the key store is unreachable)."""
        if not authorization:
            if self.local_mode:
                return LOCAL_ADMIN
            raise ApiError(401, "unauthorized", "missing bearer token", headers=_CHALLENGE)
        cached = self._cache.get(authorization)
        if cached is not None and cached[0] > time.monotonic():
            found = cached[1]
        else:
            found = await self._resolve_bounded(authorization, cached)
        if found is None:
            raise ApiError(
                401, "unauthorized", "unknown, revoked or expired key", headers=_CHALLENGE
            )
        if found.expires_at is not None and found.expires_at <= datetime.now(UTC):
            raise ApiError(
                401, "unauthorized", "unknown, revoked or expired key", headers=_CHALLENGE
            )
        return found

    async def _resolve_bounded(
        self, authorization: str, cached: tuple[float, Principal | None] | None
    ) -> Principal | None:
        """``_resolve`` within ``lookup_timeout_s``; when Postgres cannot answer in that time
        (or at all), the key's last good answer if it is at most ``stale_s`` old, else a 503.

        Capture must not hang on the key store: JetStream alone can take the events, so a key
        this process has seen keeps writing through a Postgres outage (issue 55: with Postgres
        frozen, ingest with an API key hung 18 s). The price is bounded: a key revoked just
        before an outage works until Postgres answers again, at most ``stale_s``. One lookup
        per key is in flight at a time; it is never cancelled (a cancelled query leaves its
        connection in an unknown state), and it refreshes the cache when it ends."""
        stale = self._trusted(cached)
        lookup = self._lookups.get(authorization)
        if lookup is None:
            lookup = asyncio.create_task(self._resolve(authorization))
            self._lookups[authorization] = lookup
            lookup.add_done_callback(lambda done: self._lookup_done(authorization, done))
        elif stale is not None:
            return stale  # a refresh is under way: one request waits for it, not every one
        try:
            return await asyncio.wait_for(asyncio.shield(lookup), self.lookup_timeout_s)
        except TimeoutError:
            reason = f"key store did not answer within {self.lookup_timeout_s:g} s"
        except ApiError as exc:
            if exc.status != 503 or self.pool is None:  # refused, or no key store at all
                raise
            reason = exc.message
        if stale is not None:
            return stale
        raise ApiError(503, "unavailable", reason, headers={"Retry-After": "2"})

    def _trusted(self, cached: tuple[float, Principal | None] | None) -> Principal | None:
        """A cached good answer confirmed within ``stale_s`` (None: none to fall back on)."""
        if cached is None or cached[1] is None:
            return None
        confirmed_at = cached[0] - self.cache_s
        return cached[1] if confirmed_at + self.stale_s > time.monotonic() else None

    def _lookup_done(self, authorization: str, done: asyncio.Task[Principal | None]) -> None:
        if self._lookups.get(authorization) is done:
            del self._lookups[authorization]
        if not done.cancelled():
            done.exception()  # retrieved: an answer no request waited for is not an error

    async def _resolve(self, authorization: str) -> Principal | None:
        scheme, _, presented = authorization.partition(" ")
        presented = presented.strip()
        if scheme.lower() != "bearer" or not presented:
            if self.local_mode:
                return LOCAL_ADMIN
            raise ApiError(401, "unauthorized", "expected 'Bearer <token>'", headers=_CHALLENGE)
        found: Principal | None = None
        parts = split_key(presented)
        if parts is not None:
            found = await self._lookup(*parts)
        else:
            raw = presented.encode()
            for token, tenant in self._bootstrap:
                if hmac.compare_digest(token, raw):
                    found = Principal(tenant=tenant, role="admin")
            if found is None and self.local_mode:
                found = LOCAL_ADMIN  # local mode ignores a token that is not a key, as before
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[authorization] = (time.monotonic() + self.cache_s, found)
        return found

    async def _lookup(self, key_id: str, secret: str) -> Principal | None:
        if self.pool is None:
            raise ApiError(503, "unavailable", "API keys are not available here")
        try:
            async with (
                self.pool.connection(timeout=5) as conn,
                conn.cursor(row_factory=dict_row) as cur,
            ):
                await cur.execute(Q["key_by_id"], {"key_id": key_id})
                row = await cur.fetchone()
        except (psycopg.Error, PoolTimeout):
            raise ApiError(
                503, "unavailable", "key store unavailable", headers={"Retry-After": "2"}
            ) from None
        if row is None:
            hash_secret(secret)  # same work as a known key: no timing hint of which ids exist
            return None
        return principal_from_row(row, secret, datetime.now(UTC))

    def known(self, authorization: str) -> bool:
        """Whether the cache holds this key as good right now (no lookup needed)."""
        cached = self._cache.get(authorization)
        return cached is not None and cached[0] > time.monotonic() and cached[1] is not None

    def forget(self) -> None:
        """Drop the cache (a revocation through this process takes effect at once here)."""
        self._cache.clear()


# ---- route declarations --------------------------------------------------------------------


def get_authenticator(request: Request) -> Authenticator:
    auth = request.app.state.auth
    assert isinstance(auth, Authenticator)
    return auth


async def caller(request: Request) -> Principal:
    """The request's principal, authenticated once per request."""
    found = getattr(request.state, "principal", None)
    if isinstance(found, Principal):
        return found
    principal = await get_authenticator(request).principal(request.headers.get("authorization"))
    request.state.principal = principal
    return principal


class Access:
    """A route's declared role: ``dependencies=[READ]`` (or ``caller: Annotated[Principal,
    READ]`` to use the principal). ``role=None`` declares a public route (health probes)."""

    def __init__(self, role: Role | None) -> None:
        self.role = role

    def __repr__(self) -> str:
        return f"Access({self.role!r})"

    async def __call__(self, request: Request) -> Principal | None:
        if self.role is None:
            return None
        return (await caller(request)).require(self.role)


_PUBLIC = Access(None)
_READER = Access("reader")
_WRITER = Access("writer")
_ADMIN = Access("admin")
PUBLIC: Any = Depends(_PUBLIC)
READ: Any = Depends(_READER)
WRITE: Any = Depends(_WRITER)
ADMIN: Any = Depends(_ADMIN)


def _accesses(dependant: Dependant) -> Iterable[Access]:
    pending = [dependant]
    while pending:
        current = pending.pop()
        if isinstance(current.call, Access):
            yield current.call
        pending.extend(current.dependencies)


def declared_access(route: APIRoute) -> Access | None:
    """The strictest ``Access`` a route declares (None: it declares none)."""
    found = list(_accesses(route.dependant))
    if not found:
        return None
    return max(found, key=lambda a: 0 if a.role is None else _RANK[a.role])


def app_routes(app: FastAPI) -> list[tuple[str, APIRoute]]:
    """(served path, route) of every API route of an app, included routers walked through
    (FastAPI keeps an included router as one entry of ``app.routes``)."""
    found = []
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, APIRoute):
            found.append((context.path or route.path, route))
    return found


_DECLARED: dict[int, bool] = {}


async def authorize(request: Request) -> None:
    """App-wide dependency: a route that declares no ``Access`` is admin-only (fail closed)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    declared = _DECLARED.get(id(route))
    if declared is None:
        declared = _DECLARED[id(route)] = declared_access(route) is not None
    if not declared:
        (await caller(request)).require("admin")


# ---- before the body ---------------------------------------------------------------------------


class AuthenticateFirst:
    """ASGI middleware: authenticate a request that carries a key or a body before anything
    else of it is read, within a limit of failed attempts per client address.

    FastAPI reads and parses a route's body before it runs the route's dependencies (where
    ``READ``/``WRITE`` authenticate), so an unauthenticated 100 MB body used to be parsed
    before its 401. The principal found here is kept in the request state, where ``caller``
    finds it: one lookup per request still.

    Each refused key takes a token of the address's ``FailureBuckets``; an address with none
    left gets 429 and ``Retry-After`` instead of a Postgres lookup, unless its key is one the
    cache already knows good. Probes (``/healthz``...) are never looked at.
    """

    def __init__(self, app: ASGIApp, burst: int = 20, per_s: float = 1.0) -> None:
        self.app = app
        self.failures = FailureBuckets(burst, per_s)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in PROBE_PATHS:
            await self.app(scope, receive, send)
            return
        authorization = None
        has_body = False
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value.decode("latin-1")
            elif name == b"transfer-encoding" or (
                name == b"content-length" and value.strip() not in (b"", b"0")
            ):
                has_body = True
        if authorization is None and not has_body:
            await self.app(scope, receive, send)  # the route's own Access decides
            return
        auth = getattr(scope["app"].state, "auth", None)
        if not isinstance(auth, Authenticator):  # not started (no lifespan): the route decides
            await self.app(scope, receive, send)
            return
        address = client_address(scope)
        if authorization is not None and not auth.known(authorization):
            wait = self.failures.wait(address)
            if wait is not None and address is not None:
                await send_too_many(send, address, wait)
                return
        try:
            principal = await auth.principal(authorization)
        except ApiError as exc:
            if exc.status == 401:
                self.failures.charge(address)
            headers = [(k.lower().encode(), v.encode()) for k, v in (exc.headers or {}).items()]
            await send_error(send, exc.status, exc.code, exc.message, exc.field, headers)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)


def install_http_guards(
    app: FastAPI, settings: CommonSettings, *, max_body_bytes: int | None = None
) -> None:
    """The request guards of an HTTP service, outermost first (add ``HttpMetrics`` after):
    the Host allowlist and browser rules (``CrossOriginGuard``), authentication (with its
    limit of failures per address) of a request that carries a key or a body, then the body
    limit. One function, so that every service has all of them in this order: a request is
    refused before it costs anything. ``app.state.auth`` must hold the ``Authenticator``."""
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes or settings.max_body_bytes)
    app.add_middleware(
        AuthenticateFirst, burst=settings.auth_fail_burst, per_s=settings.auth_fail_per_s
    )
    app.add_middleware(
        CrossOriginGuard,
        allowed_origins=settings.allowed_origins,
        allowed_hosts=settings.host_allowlist,
    )
