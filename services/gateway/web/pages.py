"""The HTML pages, their static files and the API docs, all served from this origin.

The pages are templates with no inline script or style: each loads its own script from /static,
so the Content-Security-Policy can forbid everything else.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"
# Swagger UI and ReDoc bundles (their licences: fastapi-offline's package metadata).
API_DOCS_DIR = Path(fastapi_offline.__file__).parent / "static"

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# Swagger UI and ReDoc set styles in the markup they build and ReDoc searches in a worker it makes
# from a blob; their scripts stay same-origin only.
DOCS_CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY.replace(
    "style-src 'self'", "style-src 'self' 'unsafe-inline'"
) + "; worker-src 'self' blob:"

templates = Jinja2Templates(directory=str(HERE / "templates"))


def _page(request: Request, template: str, policy: str = CONTENT_SECURITY_POLICY, **context: str) -> HTMLResponse:
    response = templates.TemplateResponse(request, template, {"page": template.removesuffix(".html"), **context})
    response.headers["Content-Security-Policy"] = policy
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    return response


def page_views() -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get("/", response_class=HTMLResponse)
    async def documents(request: Request) -> HTMLResponse:
        return _page(request, "documents.html")

    @router.get("/documents/{doc_id}", response_class=HTMLResponse)
    async def document(request: Request, doc_id: str) -> HTMLResponse:
        return _page(request, "document.html", doc_id=doc_id)

    @router.get("/ask", response_class=HTMLResponse)
    async def ask(request: Request) -> HTMLResponse:
        return _page(request, "ask.html")

    @router.get("/pipeline", response_class=HTMLResponse)
    async def pipeline(request: Request) -> HTMLResponse:
        return _page(request, "pipeline.html")

    @router.get("/signin", response_class=HTMLResponse)
    async def sign_in(request: Request) -> HTMLResponse:
        return _page(request, "signin.html")

    @router.get("/docs", response_class=HTMLResponse)
    async def api_docs(request: Request) -> HTMLResponse:
        return _page(request, "docs.html", DOCS_CONTENT_SECURITY_POLICY)

    @router.get("/redoc", response_class=HTMLResponse)
    async def api_reference(request: Request) -> HTMLResponse:
        return _page(request, "redoc.html", DOCS_CONTENT_SECURITY_POLICY)

    return router


def mount_pages(app: FastAPI) -> None:
    app.include_router(page_views())
    app.mount("/static/api-docs", StaticFiles(directory=API_DOCS_DIR), name="api-docs")
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
