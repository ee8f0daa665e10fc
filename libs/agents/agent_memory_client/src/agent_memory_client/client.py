"""``AgentMemoryClient``: one async client for the gateway (writes) and the query service (reads).

It is the only thing the MCP server, the LangChain middleware and the CLI know about agent-memory,
so every integration speaks the public HTTP API and nothing else. Failures come back as two types
a caller can act on: ``UnavailableError`` (retry later: connection refused, timeout, 502-504) and
``ApiError`` (the request itself is wrong or names something that does not exist).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, cast
from urllib.parse import quote

import httpx

from agent_memory_api.episodes import ActionsAdded
from agent_memory_api.listing import Projects, Sessions
from agent_memory_api.recall import (
    BriefResponse,
    Injection,
    ProjectRecall,
    RecallProjects,
    RecallResponse,
)
from agent_memory_api.status import Status
from agent_memory_api.toc import PinAnswer
from agent_memory_api.topics import TopicDetail, TopicList, TopicSearchAnswer
from agent_memory_client.ids import new_id
from agent_memory_client.types import (
    Accepted,
    CurateResult,
    Episode,
    EpisodeAction,
    Event,
    EventIn,
    EventPage,
    EventType,
    LessonIn,
    Outcome,
    PlaybookEntry,
    Role,
    SearchResponse,
)

DEFAULT_GATEWAY_URL = "http://127.0.0.1:8700"
DEFAULT_QUERY_URL = "http://127.0.0.1:8701"
_RETRYABLE_STATUS = frozenset({502, 503, 504})

TimeArg = datetime | str | int | None


class AgentMemoryError(Exception):
    """Base of every error this client raises."""


class UnavailableError(AgentMemoryError):
    """The service could not be reached or asked us to come back later; safe to retry."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ApiError(AgentMemoryError):
    """The server refused the request: ``status``, its error ``code``, and the field at fault."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field


def _url_from_env(env: Mapping[str, str], name: str, default_port: int) -> str:
    """``AGENT_MEMORY_<NAME>_URL``, else the host/port the services themselves read."""
    explicit = env.get(f"AGENT_MEMORY_{name}_URL", "").strip()
    if explicit:
        return explicit.rstrip("/")
    host = env.get(f"AGENT_MEMORY_{name}__HOST", "127.0.0.1").strip()
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    port = env.get(f"AGENT_MEMORY_{name}__PORT", str(default_port)).strip()
    return f"http://{host}:{port}"


def _time_param(value: TimeArg) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _clean(params: Mapping[str, Any]) -> dict[str, Any]:
    """Query parameters without the ``None`` ones (the API reads absent as "no filter")."""
    return {k: v for k, v in params.items() if v is not None}


class AgentMemoryClient:
    """Async client; use as ``async with AgentMemoryClient(...) as client`` or call ``aclose``.

    ``token_provider`` (instead of a fixed ``token``) lets one client serve callers with
    different credentials, e.g. the MCP endpoint forwarding each request's bearer token.
    ``query_transport``/``gateway_transport`` replace the network, e.g. with
    ``httpx.ASGITransport`` to call an application in the same process.
    """

    def __init__(
        self,
        *,
        gateway_url: str = DEFAULT_GATEWAY_URL,
        query_url: str = DEFAULT_QUERY_URL,
        token: str | None = None,
        token_provider: Callable[[], str | None] | None = None,
        timeout: float = 10.0,
        query_transport: httpx.AsyncBaseTransport | None = None,
        gateway_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.gateway_url = gateway_url.rstrip("/")
        self.query_url = query_url.rstrip("/")
        self._token = token
        self._token_provider = token_provider
        self._gateway = httpx.AsyncClient(
            base_url=self.gateway_url, timeout=timeout, transport=gateway_transport
        )
        self._query = httpx.AsyncClient(
            base_url=self.query_url, timeout=timeout, transport=query_transport
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> AgentMemoryClient:
        """Addresses and token from ``AGENT_MEMORY_GATEWAY_URL`` / ``AGENT_MEMORY_QUERY_URL``
        (else ``AGENT_MEMORY_<SERVICE>__HOST``/``__PORT``) and ``AGENT_MEMORY_TOKEN``."""
        environ = os.environ if env is None else env
        kwargs: dict[str, Any] = {
            "gateway_url": _url_from_env(environ, "GATEWAY", 8700),
            "query_url": _url_from_env(environ, "QUERY", 8701),
            "token": environ.get("AGENT_MEMORY_TOKEN") or None,
        }
        kwargs.update(overrides)
        return cls(**kwargs)

    async def __aenter__(self) -> AgentMemoryClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._gateway.aclose()
        await self._query.aclose()

    # -- plumbing ---------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        token = self._token_provider() if self._token_provider else self._token
        return {"authorization": f"Bearer {token}"} if token else {}

    async def _request(
        self,
        http: httpx.AsyncClient,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> Any:
        try:
            response = await http.request(
                method,
                path,
                params=_clean(params or {}),
                json=json,
                headers=self._headers(),
            )
        except httpx.TimeoutException as exc:
            raise UnavailableError(f"{method} {path}: timed out ({exc!r})") from exc
        except httpx.TransportError as exc:
            raise UnavailableError(
                f"{method} {path}: {http.base_url} unreachable ({exc!r})"
            ) from exc
        if response.status_code in _RETRYABLE_STATUS:
            retry_after = response.headers.get("retry-after")
            raise UnavailableError(
                f"{method} {path}: {response.status_code} {response.text[:200]}",
                retry_after=float(retry_after) if retry_after and retry_after.isdigit() else None,
            )
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = {}
            if not isinstance(body, dict):
                body = {}
            raise ApiError(
                response.status_code,
                str(body.get("error", "http_error")),
                str(body.get("message", response.text[:200])),
                body.get("field"),
            )
        if not response.content:
            return None
        return response.json()

    async def _get(self, path: str, **params: Any) -> Any:
        return await self._request(self._query, "GET", path, params=params)

    async def _post(self, path: str, body: Any, **params: Any) -> Any:
        return await self._request(self._query, "POST", path, params=params, json=body)

    async def _put(self, path: str, body: Any) -> Any:
        return await self._request(self._query, "PUT", path, json=body)

    # -- events (gateway writes, query reads) -----------------------------------------------

    async def post_events(self, events: Sequence[EventIn]) -> Accepted:
        """Record a batch; events without ``event_id`` get one here so a retry is harmless.
        Events whose id was erased are not stored again: ``refused`` counts them and
        ``refusals`` names them with the reason (``erased``)."""
        batch = [dict(e) if "event_id" in e else {**e, "event_id": new_id()} for e in events]
        data = await self._request(self._gateway, "POST", "/v1/events", json={"events": batch})
        return cast(Accepted, data)

    async def record(
        self,
        *,
        project_id: str,
        agent_id: str,
        session_id: str,
        role: Role,
        text: str,
        type: EventType = "message",
        metadata: dict[str, Any] | None = None,
        event_id: str | None = None,
        ts: str | int | None = None,
        user_id: str | None = None,
    ) -> str:
        """Record one event; returns its id."""
        event: EventIn = {
            "event_id": event_id or new_id(),
            "project_id": project_id,
            "agent_id": agent_id,
            "session_id": session_id,
            "role": role,
            "type": type,
            "text": text,
            "metadata": metadata or {},
        }
        if ts is not None:
            event["ts"] = ts
        if user_id is not None:
            event["user_id"] = user_id
        await self.post_events([event])  # an erased id is refused (``refusals``), not an error
        return event["event_id"]

    async def events(
        self,
        *,
        project_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        since: TimeArg = None,
        until: TimeArg = None,
        order: str = "asc",
        limit: int = 100,
        cursor: str | None = None,
    ) -> EventPage:
        data = await self._get(
            "/v1/events",
            project_id=project_id,
            agent_id=agent_id,
            session_id=session_id,
            since=_time_param(since),
            until=_time_param(until),
            order=order,
            limit=limit,
            cursor=cursor,
        )
        return cast(EventPage, data)

    async def event(self, event_id: str) -> Event:
        return cast(Event, await self._get(f"/v1/events/{quote(event_id, safe='')}"))

    async def status(self) -> Status:
        return cast(Status, await self._get("/v1/status"))

    # -- what is stored -----------------------------------------------------------------------

    async def projects(self, *, limit: int = 100) -> Projects:
        """The projects this key may read, most recently recorded first: events, sessions,
        agents, first and last activity, segments still open."""
        return cast(Projects, await self._get("/v1/projects", limit=limit))

    async def sessions(self, project_id: str, *, limit: int = 100) -> Sessions:
        """A project's sessions, latest first (``ApiError`` 404 for a project with none this
        key may read)."""
        path = f"/v1/projects/{quote(project_id, safe='')}/sessions"
        return cast(Sessions, await self._get(path, limit=limit))

    # -- recall -----------------------------------------------------------------------------

    async def search(
        self, query: str, *, limit: int = 10, project_id: str | None = None, **filters: Any
    ) -> SearchResponse:
        body = {"query": query, "limit": limit, **_clean({"project_id": project_id, **filters})}
        return cast(SearchResponse, await self._post("/v1/search", body))

    async def brief(
        self, project_id: str, *, budget_tokens: int = 1500, session_id: str | None = None
    ) -> BriefResponse:
        """What an agent starting work on ``project_id`` should know now, within
        ``budget_tokens``: the rules in force and the last session's goal and outcome, each
        line with the id that ``memory_expand`` opens. ``session_id``: the starting session
        (its own turns are not "the last session"). ``context`` is "" for a project with
        nothing to say yet."""
        path = f"/v1/projects/{quote(project_id, safe='')}/brief"
        return cast(
            BriefResponse,
            await self._get(path, budget_tokens=budget_tokens, session_id=session_id),
        )

    async def recall(
        self,
        prompt: str,
        *,
        project_id: str,
        session_id: str | None = None,
        budget_tokens: int = 600,
        exclude_ids: Sequence[str] = (),
        min_match: float | None = None,
    ) -> RecallResponse:
        """The few memories ``prompt`` needs, within ``budget_tokens``, or nothing (``silence``
        says why) when the search is unsure; never the asking session's own events nor the
        ``exclude_ids`` already given to it."""
        body = {
            "prompt": prompt,
            "project_id": project_id,
            "budget_tokens": budget_tokens,
            "exclude_ids": list(exclude_ids),
            **_clean({"session_id": session_id, "min_match": min_match}),
        }
        return cast(RecallResponse, await self._post("/v1/recall", body))

    async def recall_settings(self, project_id: str, *, sessions: int = 10) -> ProjectRecall:
        """The project's recall injection (``on``/``off``) and what it gave agents unasked:
        tokens and answers over the last 1, 7 and 30 UTC days, per kind, and the ``sessions``
        given the most tokens."""
        path = f"/v1/projects/{quote(project_id, safe='')}/recall"
        return cast(ProjectRecall, await self._get(path, sessions=sessions))

    async def set_recall(self, project_id: str, injection: Injection) -> ProjectRecall:
        """Turn the project's recall injection ``off`` (no brief, no per-prompt recall, for
        every runtime and machine; capture goes on) or back ``on``; an admin key's call."""
        path = f"/v1/projects/{quote(project_id, safe='')}/recall"
        return cast(ProjectRecall, await self._put(path, {"injection": injection}))

    async def recall_projects(self) -> RecallProjects:
        """Every project's injection and what it gave, the most tokens over 7 days first."""
        return cast(RecallProjects, await self._get("/v1/recall/projects"))

    async def toc(self, **params: Any) -> dict[str, Any]:
        """The top of the table of contents (years), filtered by e.g. ``project_id``,
        ``user_id`` (as are ``toc_children`` and ``toc_search``)."""
        return cast(dict[str, Any], await self._get("/v1/toc", **params))

    async def toc_node(self, node_id: str, **params: Any) -> dict[str, Any]:
        return cast(
            dict[str, Any], await self._get(f"/v1/toc/nodes/{quote(node_id, safe='')}", **params)
        )

    async def toc_children(self, node_id: str, **params: Any) -> dict[str, Any]:
        path = f"/v1/toc/nodes/{quote(node_id, safe='')}/children"
        return cast(dict[str, Any], await self._get(path, **params))

    async def toc_at(self, ts: TimeArg, **params: Any) -> dict[str, Any]:
        return cast(dict[str, Any], await self._get("/v1/toc/at", ts=_time_param(ts), **params))

    async def toc_search(self, body: dict[str, Any]) -> dict[str, Any]:
        return cast(dict[str, Any], await self._post("/v1/toc/search", body))

    async def grip(self, grip_id: str, *, context: int = 3) -> dict[str, Any]:
        path = f"/v1/grips/{quote(grip_id, safe='')}"
        return cast(dict[str, Any], await self._get(path, context=context))

    async def pin(self, memory_id: str, body: dict[str, Any] | None = None) -> PinAnswer:
        path = f"/v1/memories/{quote(memory_id, safe='')}/pin"
        return cast(PinAnswer, await self._post(path, body or {}))

    # -- topics -----------------------------------------------------------------------------

    async def topics(
        self,
        *,
        project_id: str | None = None,
        since: TimeArg | None = None,
        until: TimeArg | None = None,
        limit: int = 20,
        user_id: str | None = None,
    ) -> TopicList:
        """The themes by importance; ``since``/``until``: those active in the window, ranked as
        of ``until`` ("what have I worked on this month?"); ``user_id``: those this user worked
        on (a member segment holds an event of theirs)."""
        params: dict[str, Any] = {"limit": limit}
        if project_id is not None:
            params["project_id"] = project_id
        if user_id is not None:
            params["user_id"] = user_id
        if since is not None:
            params["since"] = _time_param(since)
        if until is not None:
            params["until"] = _time_param(until)
        return cast(TopicList, await self._get("/v1/topics", **params))

    async def topic(self, topic_id: str, *, members: int = 100) -> TopicDetail:
        """A topic with its members (segments, their events) and related topics."""
        path = f"/v1/topics/{quote(topic_id, safe='')}"
        return cast(TopicDetail, await self._get(path, members=members))

    async def search_topics(
        self,
        query: str,
        *,
        project_id: str | None = None,
        limit: int = 10,
        user_id: str | None = None,
    ) -> TopicSearchAnswer:
        """Topics by meaning ("what is related to the billing work?"), of ``user_id`` if given."""
        body: dict[str, Any] = {"query": query, "limit": limit}
        if project_id is not None:
            body["project_id"] = project_id
        if user_id is not None:
            body["user_id"] = user_id
        return cast(TopicSearchAnswer, await self._post("/v1/topics/search", body))

    # -- episodes ---------------------------------------------------------------------------

    async def start_episode(
        self,
        task: str,
        *,
        project_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        episode_id: str | None = None,
    ) -> Episode:
        """Start an episode; the id is chosen here so that a retried start is not a second one."""
        body = {
            "episode_id": episode_id or new_id(),
            "task": task,
            "project_id": project_id,
            **_clean({"agent_id": agent_id, "session_id": session_id, "metadata": metadata}),
        }
        return cast(Episode, await self._post("/v1/episodes", body))

    async def add_actions(self, episode_id: str, actions: Sequence[EpisodeAction]) -> ActionsAdded:
        batch = [dict(a) if "action_id" in a else {**a, "action_id": new_id()} for a in actions]
        path = f"/v1/episodes/{quote(episode_id, safe='')}/actions"
        return cast(ActionsAdded, await self._post(path, {"actions": batch}))

    async def complete_episode(
        self,
        episode_id: str,
        outcome: Outcome,
        *,
        lessons: Sequence[str] = (),
        summary: str | None = None,
        value: float | None = None,
    ) -> Episode:
        body = {
            "outcome": outcome,
            "lessons": list(lessons),
            **_clean({"summary": summary, "value": value}),
        }
        path = f"/v1/episodes/{quote(episode_id, safe='')}/complete"
        return cast(Episode, await self._post(path, body))

    async def episode(self, episode_id: str) -> Episode:
        return cast(Episode, await self._get(f"/v1/episodes/{quote(episode_id, safe='')}"))

    async def similar_episodes(
        self,
        q: str,
        *,
        project_id: str | None = None,
        limit: int = 5,
        outcome: Outcome | None = None,
    ) -> list[Episode]:
        data = await self._get(
            "/v1/episodes/similar", q=q, project_id=project_id, limit=limit, outcome=outcome
        )
        return cast(list[Episode], data["results"])

    # -- playbook ---------------------------------------------------------------------------

    async def playbook(
        self, project_id: str, *, q: str | None = None, limit: int = 20
    ) -> list[PlaybookEntry]:
        """The project's playbook; with ``q``, the entries most relevant to it first."""
        path = f"/v1/playbooks/{quote(project_id, safe='')}/entries"
        data = await self._get(path, q=q, limit=limit)
        return cast(list[PlaybookEntry], data["entries"])

    async def curate(
        self,
        project_id: str,
        lessons: Sequence[LessonIn],
        *,
        agent_id: str | None = None,
        submission_id: str | None = None,
    ) -> list[CurateResult]:
        """Hand lessons to the server's curator, which merges them by meaning and counts marks;
        with ``submission_id`` a retried submission is counted once."""
        path = f"/v1/playbooks/{quote(project_id, safe='')}/entries"
        body = {
            "entries": [dict(x) for x in lessons],
            **_clean({"agent_id": agent_id, "submission_id": submission_id}),
        }
        data = await self._post(path, body)
        return cast(list[CurateResult], data["results"])
