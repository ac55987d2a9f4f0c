"""`python -m services.gateway [--host H] [--port P] [--workers N]`: the HTTP gateway (port 8000)."""

from __future__ import annotations

import argparse

import uvicorn

from shared.adapters.logs import configure_service_logging
from shared.settings import get_settings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    settings = get_settings()
    parser = argparse.ArgumentParser(prog="python -m services.gateway", description=__doc__)
    parser.add_argument("--host", default=settings.gateway_host, help="Interface (TREERAG_GATEWAY_HOST, loopback).")
    parser.add_argument("--port", type=int, default=settings.gateway_port)
    parser.add_argument("--workers", type=int, default=1, help="Worker processes (each is a replica).")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    configure_service_logging(get_settings())
    uvicorn.run(
        "services.gateway.main:app",
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_config=None,  # keep the JSON logs configured above
        access_log=False,  # HTTP latency is in /metrics; one line per request is noise
        # uvicorn would believe X-Forwarded-For from loopback by default: a local client could then
        # pick the address its budget is kept under. The app reads it from TREERAG_TRUSTED_PROXIES only.
        proxy_headers=False,
    )


if __name__ == "__main__":
    main()
