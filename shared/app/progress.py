"""Progress of a query its client streams (`QueryProgress`), published best effort.

A progress event only tells the client sooner what the answer event will say in full, so a
failure to publish one (Kafka slow to acknowledge, a document being deleted) is logged and the
stage goes on: it never fails, retries or delays the query.
"""

from __future__ import annotations

import logging

from shared.model.events import QueryProgress
from shared.ports.bus import Publisher

logger = logging.getLogger(__name__)


async def report_progress(bus: Publisher, progress: QueryProgress) -> None:
    try:
        await bus.publish(progress)
    except Exception as exc:  # best effort: the answer event carries the same and more
        logger.warning("progress not published; the answer will carry it",
                       extra={"fields": {"step": progress.step, "index": progress.index, "error": type(exc).__name__}})
