"""The web app the gateway serves at `/`: pages for people, over the same HTTP API."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from services.gateway.web.api import DocumentSource, install_page_routes
from services.gateway.web.pages import mount_pages
from services.gateway.web.pipeline import PrometheusReader, pipeline_router


def mount_web(app: FastAPI, source: Callable[[], DocumentSource], prometheus_url: str | None = None) -> None:
    """Adds the page image and evidence endpoints, the pipeline figures (from Prometheus at
    `prometheus_url`), the HTML pages, their static files and the offline API docs. Create the app
    with `docs_url=None, redoc_url=None`: `/docs` and `/redoc` are served here."""
    install_page_routes(app, source)
    app.include_router(pipeline_router(PrometheusReader(prometheus_url) if prometheus_url else None))
    mount_pages(app)
