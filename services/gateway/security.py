"""What every gateway response carries and every request must pass, whatever the route:
the Host allow-list (against DNS rebinding), CORS (off unless origins are configured), the
security headers, and which client a request comes from (the proxies it trusts)."""

from __future__ import annotations

import ipaddress
import logging

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from services.gateway.errors import error_response
from shared.settings import Settings

# The API returns JSON, PDFs and images: nothing of it may run scripts or be framed. The web app's
# pages and the API docs (services/gateway/web) send their own policy: this origin only.
API_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}

logger = logging.getLogger(__name__)

def split_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def host_name(host_header: str) -> str:
    """The host of a Host header, without its port (`[::1]:8000` -> `::1`)."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _in_network(host: str, pattern: str) -> bool:
    """`pattern` a network such as 172.16.0.0/12 (a scraper addressing replicas by IP)."""
    if "/" not in pattern:
        return False
    try:
        return ipaddress.ip_address(host) in ipaddress.ip_network(pattern, strict=False)
    except ValueError:
        return False


def host_allowed(host: str, allowed: list[str]) -> bool:
    """`allowed` entries: a host name or address, `*.domain`, a network (`10.0.0.0/8`) or `*`."""
    for pattern in allowed:
        pattern = pattern.lower()
        if pattern == "*" or host == pattern or (pattern.startswith("*.") and host.endswith(pattern[1:])):
            return True
        if _in_network(host, pattern):
            return True
    return False


def install_client_address(app: FastAPI, settings: Settings) -> None:
    """Behind TREERAG_TRUSTED_PROXIES, a request from one of them names its client in
    X-Forwarded-For (the right-most address no trusted proxy added) and its scheme in
    X-Forwarded-Proto; from anyone else those headers are ignored, so a client cannot choose the
    address its budget is kept under. The server itself reads no such header (__main__.py)."""
    proxies = split_list(settings.trusted_proxies)
    if proxies:
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=proxies)


def install_security(app: FastAPI, settings: Settings) -> None:
    """Added last, so it wraps every other middleware and route (also their error responses)."""
    origins = split_list(settings.cors_origins)
    if origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"], max_age=600,
        )
    app.add_middleware(Guard, allowed_hosts=split_list(settings.allowed_hosts))


class Guard:
    """The Host check and the security headers, as a plain ASGI middleware (Starlette's
    `BaseHTTPMiddleware` ran every request through an extra task and memory stream)."""

    def __init__(self, app: ASGIApp, allowed_hosts: list[str]) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = host_name(Headers(scope=scope).get("host", ""))
        if not host_allowed(host, self.allowed_hosts):
            refused = error_response(400, f"host {host!r} is not served here; add it to TREERAG_ALLOWED_HOSTS to allow it")
            await refused(scope, receive, self._secured(send))
            return
        started = False

        async def send_secured(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await self._secured(send)(message)

        try:
            await self.app(scope, receive, send_secured)
        except Exception:
            if started:  # the response is on its way: nothing else can be sent
                raise
            # Answered here rather than by the server's bare 500, so it carries the headers too.
            logger.exception("unhandled error", extra={"fields": {"path": scope.get("path", "")}})
            await error_response(500, "internal error; the gateway log has the details")(scope, receive, self._secured(send))

    @staticmethod
    def _secured(send: Send) -> Send:
        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", API_POLICY)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        return secured
