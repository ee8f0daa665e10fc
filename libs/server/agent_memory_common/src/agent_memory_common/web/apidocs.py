"""``/docs`` and ``/redoc`` that work without the internet.

FastAPI's own pages load Swagger UI and ReDoc from a CDN (and a favicon from FastAPI's site),
so on a machine offline, an air-gapped deployment or a laptop on a train, ``/docs`` was a blank
page. The same files come here from a PyPI package, ``fastapi-offline`` (MIT; its copy of
Swagger UI 5 and ReDoc 2), installed with the service, and each service serves them itself
under ``/docs-assets``. The online validator badge is switched off too: Swagger UI would
otherwise send the API description to validator.swagger.io.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request
from starlette.responses import HTMLResponse

ASSETS = "/docs-assets"


def install_api_docs(app: FastAPI) -> None:
    """Serve ``/docs`` (Swagger UI) and ``/redoc`` from the service's own files.

    The app must be made with ``docs_url=None, redoc_url=None`` (FastAPI's CDN pages would
    answer first). Like FastAPI's, these are plain routes outside the API: no role, no key,
    not in ``/openapi.json``, because they show only what ``/openapi.json`` already shows.
    """
    if app.docs_url is not None or app.redoc_url is not None:
        raise ValueError("make the app with docs_url=None, redoc_url=None")
    openapi_url = app.openapi_url or "/openapi.json"
    directory = files("fastapi_offline") / "static"
    app.mount(ASSETS, StaticFiles(directory=str(directory)), name="docs-assets")

    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
            swagger_ui_parameters={**(app.swagger_ui_parameters or {}), "validatorUrl": None},
        )

    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
            with_google_fonts=False,
        )

    app.add_route("/docs", swagger_ui, include_in_schema=False)
    app.add_route("/redoc", redoc, include_in_schema=False)
