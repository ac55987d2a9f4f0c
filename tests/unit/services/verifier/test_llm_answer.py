"""What a model writing an answer reads: for each source, its document's card, its section path
and, on the page a figure is read from, the table row the question names with the table's
columns and scale; the verifier hands all of it to the generator."""

from __future__ import annotations

from services.verifier.answer import answer_question
from services.verifier.llm_answer import LLMAnswerGenerator, answer_prompt
from shared.model.card import DocType, DocumentCard, DocumentPeriod
from shared.model.query import CompressedContext, Passage, QuerySettings, SourceNote

CASH_FLOWS = "\n".join([
    "Consolidated Statement of Cash Flows",
    "(Dollars in millions) 2018 2017 2016",
    "Net income 5,363 4,869 5,058",
    "Depreciation and amortization 1,488 1,544 1,474",
    "Purchases of property, plant and equipment (1,577) (1,373) (1,420)",
    "Proceeds from sale of businesses 846 1,065 142",
])
PROSE = "The company invests in plants and equipment to support growth. Capital spending is reviewed yearly."
CARD = DocumentCard(issuer="Acme Industries", doc_type=DocType.FORM_10K, period=DocumentPeriod(fiscal_year=2018))
QUESTION = "What were the purchases of property, plant and equipment in 2018?"


def _passages() -> list[Passage]:
    return [
        Passage(doc_id="d1", file_name="acme-10k.pdf", node_id="0007", title="Cash flows", pages=[60],
                text=CASH_FLOWS, score=1.0, section_path=["Item 8. Financial Statements"]),
        Passage(doc_id="d1", file_name="acme-10k.pdf", node_id="0003", title="Liquidity", pages=[31], text=PROSE,
                score=0.5),
    ]


class _Recording:
    name = "llm:recording"

    def __init__(self) -> None:
        self.notes: list[SourceNote] | None = None

    def generate(self, question: str, passages: list[Passage], notes: list[SourceNote] | None = None) -> str:
        self.notes = notes
        return "Purchases of property, plant and equipment were $1,577 million in 2018 [acme-10k.pdf, p. 60]."


def test_the_verifier_tells_the_generator_each_sources_document_and_the_table_row_asked_about() -> None:
    passages = _passages()
    pages = {("d1", 60): CASH_FLOWS, ("d1", 31): PROSE}
    generator = _Recording()
    context = CompressedContext(question=QUESTION, passages=passages, tokens_before=100, tokens_after=100)
    answer = answer_question(context, QuerySettings(), "dfs", generator, lambda d, p: pages.get((d, p)),
                             cards={"d1": CARD})
    assert generator.notes is not None and len(generator.notes) == 2
    first, second = generator.notes
    assert first.document == second.document == "Acme Industries — 10-K — FY2018"
    # The row, under the statement's title, scale and columns; the prose page has no table row.
    assert first.table.startswith("p. 60: Consolidated Statement of Cash Flows (in millions); columns 2018 | 2017 | 2016")
    assert "row: Purchases of property, plant and equipment (1,577) (1,373) (1,420)" in first.table
    assert second.table == ""
    # What the model wrote is checked against the page as before.
    assert answer.sentences and answer.sentences[0].grounded


def test_the_prompt_shows_the_card_the_section_path_and_the_row_beside_each_sources_text() -> None:
    passages = _passages()
    notes = [SourceNote(document="Acme Industries — 10-K — FY2018", table="p. 60: Cash flows; row: Purchases 1,577"),
             SourceNote(document="Acme Industries — 10-K — FY2018")]
    prompt = answer_prompt(QUESTION, passages, max_sentences=3, max_chars_per_source=2000, notes=notes)
    first = prompt[prompt.index("Source 1."):prompt.index("Source 2.")]
    assert "Cite as: [acme-10k.pdf, p. 60]" in first
    assert "Document: Acme Industries — 10-K — FY2018" in first
    assert "Section: Item 8. Financial Statements > Cash flows" in first
    assert "Table row the question names, p. 60: Cash flows; row: Purchases 1,577" in first
    assert first.rstrip().endswith("Proceeds from sale of businesses 846 1,065 142")
    second = prompt[prompt.index("Source 2."):]
    assert "Section: Liquidity" in second and "Table row" not in second
    # Without notes (a caller that has none) the sources still carry their text and citations.
    bare = answer_prompt(QUESTION, passages, max_sentences=3, max_chars_per_source=2000)
    assert "Document:" not in bare and "Cite as: [acme-10k.pdf, p. 31]" in bare


class _Model:
    model = "stand-in"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def generate_text(self, prompt: str, *, purpose: str, on_text: object = None) -> str:
        self.prompts.append(prompt)
        return "Not found in the documents."


def test_the_generator_sends_the_notes_to_the_model() -> None:
    model = _Model()
    generator = LLMAnswerGenerator(model)  # type: ignore[arg-type]
    generator.generate(QUESTION, _passages(), [SourceNote(document="Acme Industries — 10-K — FY2018"), SourceNote()])
    assert "Document: Acme Industries — 10-K — FY2018" in model.prompts[0]
