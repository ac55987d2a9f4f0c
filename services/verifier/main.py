"""The verifier stage: `context.compressed` -> answer stored -> `answer.verified`;
`document.deleted` drops the document's page texts and cached answers."""

from __future__ import annotations

from services.verifier.bootstrap import build
from services.verifier.handlers import STAGE as NAME
from services.verifier.handlers import VerifierHandlers
from shared.model.events import AnswerVerified, ContextCompressed, DocumentDeleted, QueryFailed
from shared.stage import Route, Stage


def routes(handlers: VerifierHandlers) -> list[Route]:
    return [
        Route(ContextCompressed, handlers.on_context_compressed, give_up=handlers.give_up),
        Route(DocumentDeleted, handlers.on_document_deleted, broadcast=True),
    ]


STAGE = Stage(name=NAME, build=build, routes=routes, produces=(AnswerVerified, QueryFailed))
