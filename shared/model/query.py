"""Query-side models: settings, passages, and what each query stage hands to the next."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

NavigationMode = Literal["dfs", "beam", "auto"]

# What a query may carry. Every stage stores and forwards what it receives, so a value outside
# these bounds (an integer past int64, an infinite weight, a megabyte of question) is refused
# at the gateway with 422 and, when published by anything else, dead-lettered by the first
# stage that decodes it instead of failing a database write further on.
QUESTION_MAX_CHARS = 4000
DOC_KEY_MAX_CHARS = 256
DOC_IDS_MAX = 100
QUERY_ID_MAX_CHARS = 128

QuestionText = Annotated[str, StringConstraints(max_length=QUESTION_MAX_CHARS)]
DocKey = Annotated[str, StringConstraints(min_length=1, max_length=DOC_KEY_MAX_CHARS)]
QueryId = Annotated[str, StringConstraints(min_length=1, max_length=QUERY_ID_MAX_CHARS)]


def _share(default: float, description: str = "") -> Any:
    """A field holding a finite fraction in [0, 1] (the model refuses inf and NaN)."""
    return Field(default=default, ge=0.0, le=1.0, description=description)


class QuerySettings(BaseModel):
    """Every knob that changes an answer. All of them enter the answer cache key.

    Unknown names are refused rather than ignored: a setting that is accepted is applied. Types
    are strict (`"5"` or `true` is not a count) and every value is bounded to what the product
    can use, so no accepted setting can fail a stage later.
    """

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    mode: NavigationMode = "auto"
    max_depth: int = Field(default=5, ge=1, le=50)
    max_branches: int = Field(default=3, ge=1, le=50)
    beam_width: int = Field(default=5, ge=1, le=100)
    score_threshold: float = _share(0.2)
    pages_per_node: int = Field(default=2, ge=1, le=50, description="Evidence pages kept per node.")
    max_documents: int = Field(default=5, ge=1, le=DOC_IDS_MAX, description="Documents shortlisted by routing.")
    semantic_weight: float = _share(0.7, "Weight of the question's match with the node itself.")
    structural_weight: float = _share(0.2, "Weight of the node's depth in the tree.")
    contextual_weight: float = _share(0.1, "Weight of the question's match with the node's ancestors.")
    token_budget: int = Field(default=2000, ge=1, le=200_000)
    relevance_floor: float = _share(0.2)
    dedup_threshold: float = _share(0.7)
    max_answer_sentences: int = Field(default=3, ge=1, le=50)
    llm_scoring: bool = False
    ranking: Literal["fused", "tree"] = Field(
        default="fused",
        description="fused: the fitted model orders the tree's and BM25's pages; tree: the walk's own order.",
    )
    context_pages: int = Field(
        default=16, ge=1, le=100,
        description="Pages the fused ranking hands to the compressor, which fits them to token_budget.",
    )
    contradicted: Literal["drop", "flag"] = Field(
        default="drop",
        description="A model answer's sentences its cited pages contradict: dropped, or kept and flagged.",
    )


class Passage(BaseModel):
    """A piece of evidence: text from specific pages of one node of one document."""

    doc_id: str
    file_name: str = ""
    node_id: str
    title: str = ""
    pages: list[int] = Field(description="1-based physical pages the text comes from.")
    text: str
    score: float = 0.0
    section_path: list[str] = Field(
        default_factory=list, description="Titles of the sections enclosing the passage's section, outermost first."
    )
    whole_page: bool = Field(
        default=False,
        description="`text` is the whole stored text of its one page: on the bus it travels empty, as a "
        "reference the next stage reads back from the store (shared/app/page_texts.py).",
    )

    def as_reference(self) -> Passage:
        """The passage as the bus carries it: a whole page's text left for the store to give."""
        return self.model_copy(update={"text": ""}) if self.whole_page else self


class SourceNote(BaseModel):
    """What a model writing an answer is told about one source beside its text."""

    document: str = Field(default="", description="The document's card in one line: issuer, form, period.")
    table: str = Field(default="", description="The table row the question names, with the table's columns and scale.")


class TraversalStats(BaseModel):
    nodes_visited: int = 0
    nodes_selected: int = 0
    documents_considered: int = 0
    documents_shortlisted: int = 0
    references_resolved: int = 0
    scorer_fallbacks: int = Field(default=0, description="Model scoring calls that fell back to lexical.")
    answer_probability: float | None = Field(
        default=None, description="The fitted model's probability that the documents answer the question."
    )
    elapsed_ms: float = 0.0


# The navigation path is bounded so a huge tree cannot bloat the query's events.
PATH_MAX_ENTRIES = 200
SECTION_TITLE_MAX_CHARS = 300
NODE_ID_MAX_CHARS = 256
FILE_LABEL_MAX_CHARS = 256

FileLabel = Annotated[str, StringConstraints(max_length=FILE_LABEL_MAX_CHARS)]
SectionTitle = Annotated[str, StringConstraints(max_length=SECTION_TITLE_MAX_CHARS)]
NodeId = Annotated[str, StringConstraints(min_length=1, max_length=NODE_ID_MAX_CHARS)]


class VisitedSection(BaseModel):
    """One section the navigator looked into, and whether it kept the section as evidence."""

    doc_id: DocKey
    file_name: FileLabel = ""
    node_id: NodeId
    title: SectionTitle = ""
    page_start: int = Field(ge=0)
    page_end: int = Field(ge=0)
    selected: bool = Field(description="The section was kept as evidence.")
    via: Literal["walk", "reference", "recovery"] = Field(
        default="walk",
        description="walk: entered by the tree walk; reference: named by the question or a selected "
        "text; recovery: chosen by its best pages when no section passed the walk's threshold.",
    )


class NavigationResult(BaseModel):
    question: str
    mode: Literal["dfs", "beam", "flat"] = Field(
        description="The strategy actually used; flat: no tree was walked (an evaluation baseline's pages)."
    )
    mode_reason: str = ""
    passages: list[Passage]
    stats: TraversalStats
    warnings: list[str] = Field(default_factory=list)
    path: list[VisitedSection] = Field(
        default_factory=list, max_length=PATH_MAX_ENTRIES,
        description="The sections visited, document by document in the order the walk entered them "
        f"(at most {PATH_MAX_ENTRIES}).",
    )

    def by_reference(self) -> NavigationResult:
        """The result with its whole pages as references (their text is in the store)."""
        return self.model_copy(update={"passages": [p.as_reference() for p in self.passages]})


class NavigationSummary(BaseModel):
    """What the verifier reads of a navigation: how the pages were found, without their text.
    The compressed context already carries the passages the answer is built from."""

    mode: Literal["dfs", "beam", "flat"]
    mode_reason: str = ""
    stats: TraversalStats
    warnings: list[str] = Field(default_factory=list)
    path: list[VisitedSection] = Field(default_factory=list, max_length=PATH_MAX_ENTRIES)

    @classmethod
    def of(cls, navigation: NavigationResult) -> "NavigationSummary":
        return cls(mode=navigation.mode, mode_reason=navigation.mode_reason, stats=navigation.stats,
                   warnings=list(navigation.warnings), path=list(navigation.path))


class CompressedContext(BaseModel):
    question: str
    passages: list[Passage]
    tokens_before: int
    tokens_after: int
    dropped_irrelevant: int = 0
    merged_duplicates: int = 0


class Citation(BaseModel):
    doc_id: str
    file_name: str = ""
    node_id: str = ""
    pages: list[int]


Verdict = Literal["supported", "contradicted", "unsupported"]


class EvidenceWindow(BaseModel):
    """Where on a page the evidence for a sentence is: the text and its character offsets."""

    doc_id: str = ""
    page: int = 0
    start: int = Field(ge=0, description="Offset of the window's first character in the page text.")
    end: int = Field(ge=0, description="Offset just past the window's last character.")
    text: str


class SentenceCheck(BaseModel):
    """One answer sentence checked against the page text it cites."""

    text: str
    citation: Citation | None
    signals: dict[str, float] = Field(
        description="citation (0/1) and the grounding features: coverage, bigram_coverage, char_coverage "
        "(each 0..1) and number_missing, name_missing, polarity_conflict (0/1)."
    )
    score: float = Field(description="0..1, higher = better supported by the cited page.")
    grounded: bool = Field(description="The verdict is 'supported'.")
    verdict: Verdict = "unsupported"
    reason: str = ""
    window: EvidenceWindow | None = None


class VerifiedAnswer(BaseModel):
    question: str
    answer: str
    abstained: bool = False
    citations: list[Citation] = Field(default_factory=list)
    sentences: list[SentenceCheck] = Field(default_factory=list)
    confidence: float = Field(
        default=0.0,
        description="The probability that the answer is right, from the fitted calibration of the verifier "
        "(services/verifier/calibration.json) when it was fitted for this generator; else the share of the "
        "answer its cited pages support.",
    )
    assessment: str = Field(
        default="",
        description="The confidence in words: 'likely right', 'check the page' or 'probably not answered'; empty "
        "for a refusal or an uncalibrated confidence.",
    )
    stated: bool = Field(
        default=True,
        description="False when the question asks for a figure no passage states (none of its sentences gives "
        "one, or the figure is computed from others): the sentences are the closest passages, not the answer.",
    )
    signals: dict[str, float] = Field(
        default_factory=dict, description="What the confidence was computed from (the calibration's inputs)."
    )
    warnings: list[str] = Field(default_factory=list)
    mode: str = Field(default="", description="Navigation strategy used (dfs/beam).")
    generator: str = Field(default="extractive", description="'extractive' or 'llm:<model>'.")
