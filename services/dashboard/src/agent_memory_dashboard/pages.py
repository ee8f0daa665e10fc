"""The pages: each is rendered on the server from one or a few API calls, then kept live (or
made interactive) by ``static/app.js``. A page whose API is not deployed on this server (topics,
retention, erasure, keys) says so instead of failing."""

from __future__ import annotations

from importlib.resources import files
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from agent_memory_dashboard.api import key_of, query_api, signed_in
from agent_memory_dashboard.security import safe_next
from agent_memory_dashboard.upstream import Answer

router = APIRouter(default_response_class=HTMLResponse)
templates = Jinja2Templates(directory=str(files("agent_memory_dashboard") / "templates"))
templates.env.add_extension("jinja2.ext.loopcontrols")
templates.env.filters["q"] = lambda value: quote(str(value), safe="")
templates.env.filters["when"] = lambda ts: str(ts or "")[:19].replace("T", " ")
templates.env.filters["pct"] = lambda value: f"{float(value or 0):.2f}"

MEMORY_KINDS = ("constraint", "definition", "procedure", "preference", "observation", "episode")
INTENTS = ("auto", "explore", "answer", "locate", "time-boxed")
Text = Annotated[str | None, Query(max_length=4000)]


def render(request: Request, name: str, page: str, **context: Any) -> HTMLResponse:
    settings = request.app.state.settings
    return templates.TemplateResponse(
        request,
        name,
        {
            "page": page,
            "signed_in": signed_in(request),
            "refresh_ms": settings.dashboard.refresh_ms,
            **context,
        },
    )


async def get(request: Request, path: str, **params: Any) -> Answer:
    return await query_api(request).get(path, key_of(request), **params)


def _id(value: str) -> str:
    return quote(value, safe="")


@router.get("/login")
async def login_page(request: Request, next: str = "/") -> HTMLResponse:
    return render(request, "login.html", "login", next=safe_next(next))


@router.get("/")
async def projects_page(request: Request) -> HTMLResponse:
    projects = await get(request, "/v1/projects")
    agents = await get(request, "/v1/agents")
    return render(request, "projects.html", "projects", projects=projects, agents=agents)


@router.get("/projects/{project_id}")
async def sessions_page(
    request: Request, project_id: Annotated[str, Path(max_length=200)]
) -> HTMLResponse:
    sessions = await get(request, f"/v1/projects/{_id(project_id)}/sessions")
    recall = await get(request, f"/v1/projects/{_id(project_id)}/recall", sessions=5)
    return render(
        request,
        "sessions.html",
        "projects",
        project_id=project_id,
        sessions=sessions,
        recall=recall,
    )


@router.get("/toc")
async def toc_page(request: Request, project_id: Text = None) -> HTMLResponse:
    years = await get(request, "/v1/toc", project_id=project_id)
    projects = await get(request, "/v1/projects")
    return render(request, "toc.html", "toc", project_id=project_id, years=years, projects=projects)


@router.get("/toc/nodes/{node_id}")
async def node_page(
    request: Request,
    node_id: Annotated[str, Path(max_length=300)],
    version: Annotated[int | None, Query(ge=1)] = None,
) -> HTMLResponse:
    node = await get(request, f"/v1/toc/nodes/{_id(node_id)}", version=version)
    children = await get(request, f"/v1/toc/nodes/{_id(node_id)}/children", version=version)
    path: list[dict[str, Any]] = []
    parent = node.body.get("parent_id") if node.ok else None
    while parent and len(path) < 5:  # year > month > week > day: at most four ancestors
        up = await get(request, f"/v1/toc/nodes/{_id(parent)}")
        if not up.ok:
            break
        path.insert(0, up.body)
        parent = up.body.get("parent_id")
    return render(request, "node.html", "toc", node=node, children=children, path=path)


@router.get("/search")
async def search_page(
    request: Request,
    q: Text = None,
    project_id: Text = None,
    agent_id: Text = None,
    kind: Text = None,
    intent: Text = None,
    since: Text = None,
    until: Text = None,
) -> HTMLResponse:
    answer = None
    if q and q.strip():
        body: dict[str, Any] = {"query": q, "limit": 20}
        for name, value in (
            ("project_id", project_id),
            ("agent_id", agent_id),
            ("since", since),
            ("until", until),
        ):
            if value:
                body[name] = value
        if kind:
            body["kinds"] = [kind]
        if intent and intent != "auto":
            body["intent"] = intent
        answer = await query_api(request).call("POST", "/v1/search", key_of(request), json=body)
    projects = await get(request, "/v1/projects")
    return render(
        request,
        "search.html",
        "search",
        form={
            "q": q or "",
            "project_id": project_id or "",
            "agent_id": agent_id or "",
            "kind": kind or "",
            "intent": intent or "auto",
            "since": since or "",
            "until": until or "",
        },
        kinds=MEMORY_KINDS,
        intents=INTENTS,
        answer=answer,
        projects=projects,
    )


@router.get("/pipeline")
async def pipeline_page(request: Request) -> HTMLResponse:
    status = await get(request, "/v1/status")
    return render(request, "pipeline.html", "pipeline", status=status)


@router.get("/topics")
async def topics_page(request: Request, project_id: Text = None) -> HTMLResponse:
    topics = await get(request, "/v1/topics", project_id=project_id, limit=40)
    projects = await get(request, "/v1/projects")
    return render(
        request,
        "topics.html",
        "topics",
        topics=topics,
        project_id=project_id or "",
        projects=projects,
    )


@router.get("/retention")
async def retention_page(request: Request, project_id: Text = None) -> HTMLResponse:
    projects = await get(request, "/v1/projects")
    if not project_id and projects.ok and projects.body["projects"]:
        project_id = projects.body["projects"][0]["project_id"]
    retention = await get(request, f"/v1/projects/{_id(project_id or '-')}/retention")
    return render(
        request,
        "retention.html",
        "retention",
        retention=retention,
        project_id=project_id or "",
        projects=projects,
    )


@router.get("/erasures")
async def erasures_page(request: Request) -> HTMLResponse:
    erasures = await get(request, "/v1/erasures")
    projects = await get(request, "/v1/projects")
    return render(request, "erasures.html", "erasures", erasures=erasures, projects=projects)


@router.get("/keys")
async def keys_page(request: Request) -> HTMLResponse:
    await get(request, "/v1/projects", limit=1)  # signs in first where keys are not served
    keys = await get(request, "/v1/keys")
    return render(request, "keys.html", "keys", keys=keys)
