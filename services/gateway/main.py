"""Gateway wiring: `python -m services.gateway` or `uvicorn services.gateway.main:app`."""

from __future__ import annotations

import logging
import os

from services.gateway.app import create_app
from shared.adapters.logs import configure_logging

# uvicorn worker processes import this module afresh: give them the same JSON logs.
if not logging.getLogger().handlers:
    configure_logging(os.environ.get("TREERAG_LOG_LEVEL", "INFO"))
    logging.getLogger("aiokafka").setLevel(logging.WARNING)

app = create_app()
