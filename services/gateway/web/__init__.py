"""The web app the gateway serves at `/`: pages for people, over the same HTTP API."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from services.gateway.web.api import DocumentSource, page_router
from services.gateway.web.pages import mount_pages


def mount_web(app: FastAPI, source: Callable[[], DocumentSource]) -> None:
    """Adds the page image and evidence endpoints, the HTML pages, their static files and the
    offline API docs. Create the app with `docs_url=None, redoc_url=None`: `/docs` is served here."""
    app.include_router(page_router(source))
    mount_pages(app)
