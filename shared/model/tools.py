"""What the tools for agents (the MCP server) return: verified sentences with their evidence,
ranked pages, checks of any text, pages, trees and document cards."""

from __future__ import annotations

from pydantic import BaseModel, Field

from shared.model.card import DocumentCard
from shared.model.query import Citation, SentenceCheck, Verdict


class CitedSentence(BaseModel):
    text: str
    verdict: Verdict
    reason: str = ""
    doc_id: str | None = None
    file_name: str | None = None
    page: int | None = Field(default=None, description="1-based physical page.")
    page_label: str | None = Field(default=None, description="The page's printed number, when it has one.")
    section: str | None = Field(default=None, description="The tree node the sentence comes from.")
    evidence: str | None = Field(default=None, description="The text on the page that supports the sentence.")
    evidence_start: int | None = Field(default=None, description="Character offset of `evidence` in the page text.")
    evidence_end: int | None = None
    page_image: str | None = Field(default=None, description="Where the page is rendered as PNG (the HTTP API).")


class AskResult(BaseModel):
    question: str
    answer: str = Field(description="The answer, each sentence followed by its [file, p. N] citation.")
    abstained: bool
    confidence: float
    sentences: list[CitedSentence]
    citations: list[Citation]
    warnings: list[str] = Field(default_factory=list)


class PageHit(BaseModel):
    doc_id: str
    file_name: str
    page: int
    page_label: str | None = None
    section: str = ""
    snippet: str


class PageSearch(BaseModel):
    question: str
    pages: list[PageHit] = Field(description="The pages the navigator kept as evidence, best first.")


class TextCheck(BaseModel):
    sentences: list[SentenceCheck]
    supported: int
    contradicted: int
    unsupported: int
    confidence: float


class PageText(BaseModel):
    doc_id: str
    file_name: str
    page: int
    page_label: str | None = None
    text: str


class TreeNodeOut(BaseModel):
    node_id: str
    title: str
    level: int
    page_start: int
    page_end: int
    summary: str = ""


class DocumentTreeOut(BaseModel):
    doc_id: str
    file_name: str
    nodes: list[TreeNodeOut]


class DocumentSummary(BaseModel):
    doc_id: str
    file_name: str
    status: str
    page_count: int
    card: DocumentCard | None = None


class DocumentList(BaseModel):
    documents: list[DocumentSummary]
