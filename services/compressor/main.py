"""The compressor stage: `nodes.selected` -> `context.compressed`; `document.deleted` drops the
document's page texts."""

from __future__ import annotations

from services.compressor.bootstrap import build
from services.compressor.handlers import STAGE as NAME
from services.compressor.handlers import CompressorHandlers
from shared.model.events import ContextCompressed, DocumentDeleted, NodesSelected, QueryFailed
from shared.stage import Route, Stage


def routes(handlers: CompressorHandlers) -> list[Route]:
    return [
        Route(NodesSelected, handlers.on_nodes_selected, give_up=handlers.give_up),
        Route(DocumentDeleted, handlers.on_document_deleted, broadcast=True),
    ]


STAGE = Stage(name=NAME, build=build, routes=routes, produces=(ContextCompressed, QueryFailed))
