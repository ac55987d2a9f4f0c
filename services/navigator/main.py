"""The navigator stage: `query.received` -> `nodes.selected`; `tree.built` warms its indexes;
`document.deleted` drops what it keeps of the document."""

from __future__ import annotations

from services.navigator.bootstrap import build
from services.navigator.handlers import STAGE as NAME
from services.navigator.handlers import NavigatorHandlers
from shared.model.events import (
    AnswerVerified,
    DocumentDeleted,
    NodesSelected,
    QueryFailed,
    QueryReceived,
    TreeBuilt,
)
from shared.stage import Route, Stage


def routes(handlers: NavigatorHandlers) -> list[Route]:
    return [
        Route(QueryReceived, handlers.on_query_received, give_up=handlers.give_up),
        Route(TreeBuilt, handlers.on_tree_built, broadcast=True),
        Route(DocumentDeleted, handlers.on_document_deleted, broadcast=True),
    ]


STAGE = Stage(name=NAME, build=build, routes=routes, produces=(NodesSelected, AnswerVerified, QueryFailed))
