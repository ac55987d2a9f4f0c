"""The indexer stage: `document.uploaded` -> pages, tree and record stored -> `tree.built`."""

from __future__ import annotations

from services.indexer.bootstrap import build
from services.indexer.handlers import STAGE as NAME
from services.indexer.handlers import IndexerHandlers
from shared.model.events import DocumentFailed, DocumentUploaded, TreeBuilt
from shared.stage import Route, Stage


def routes(handlers: IndexerHandlers) -> list[Route]:
    return [
        Route(
            DocumentUploaded, handlers.on_uploaded, give_up=handlers.give_up,
            max_poll_interval_ms=int(handlers.max_poll_interval_s * 1000),
            # A PDF takes seconds to minutes: counting each attempt in the store costs nothing by
            # comparison and lets a PDF that kills the process end in the DLQ instead of
            # crash-looping the stage.
            durable_attempts=True,
        )
    ]


STAGE = Stage(name=NAME, build=build, routes=routes, produces=(TreeBuilt, DocumentFailed))
