"""Gateway wiring: `python -m services.gateway`, or `uvicorn services.gateway.main:app
--no-proxy-headers` (without it uvicorn believes X-Forwarded-For from loopback; the gateway reads
it from TREERAG_TRUSTED_PROXIES only)."""

from __future__ import annotations

import logging

from services.gateway.app import create_app
from shared.adapters.logs import configure_service_logging
from shared.settings import get_settings

# uvicorn worker processes import this module afresh: give them the same JSON logs.
if not logging.getLogger().handlers:
    configure_service_logging(get_settings())

app = create_app()
