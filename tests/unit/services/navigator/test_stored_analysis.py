"""The page analysis the indexer stores: read back exactly, used instead of tokenising the pages
again, and never used for other page text or under other text rules."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import shared.text.page_analysis as page_analysis
from services.navigator.evidence import page_fields, term_weights, window_postings
from services.navigator.index import DocumentIndex
from services.navigator.index_cache import IndexCache
from services.navigator.ranking.features import question_pairs
from services.navigator.ranking.profile import bigrams, page_profile, pair_shares
from services.navigator.stored_vectors import DenseVectors
from shared.app.indexing import store_indexed
from shared.model.documents import SECTION_TEXT, DocumentEmbeddings
from shared.text.lexical import query_terms, terms
from shared.text.page_analysis import AnalysisFormatError, PageAnalysis, analyse_pages
from shared.text.term_ids import Ragged
from tests.support.fakes import FakeRepository
from tests.support.query.documents import plant_manual

QUESTIONS = ["How often is the pump serviced?", "relief valve pressure", "boiler start-up checklist"]


def _same_ranking_data(a: DocumentIndex, b: DocumentIndex) -> None:
    assert a.vocabulary == b.vocabulary
    for question in QUESTIONS:
        qterms = query_terms(question)
        for x, y in zip(a.field_scores(qterms), b.field_scores(qterms), strict=True):
            assert np.array_equal(x, y)
        weights = term_weights(a, qterms, None)
        for x, y in zip(page_fields(a).question_fields(weights), page_fields(b).question_fields(weights), strict=True):
            assert np.array_equal(x, y)
    pa, pb = page_profile(a), page_profile(b)
    assert pa.printed_offset == pb.printed_offset
    assert np.array_equal(pa.listing, pb.listing) and np.array_equal(pa.numeric, pb.numeric)
    every = np.arange(len(a.pages))
    for question in QUESTIONS:
        pairs = question_pairs(question)
        assert np.array_equal(pair_shares(pa.pages, pa.vocabulary, pairs, every),
                              pair_shares(pb.pages, pb.vocabulary, pairs, every))
    for page in range(len(a.pages)):
        assert pa.header_terms[page] == pb.header_terms[page]


def test_an_analysis_reads_back_as_it_was_stored() -> None:
    doc = plant_manual()
    analysis = analyse_pages(doc.pages)
    again = PageAnalysis.from_bytes(analysis.to_bytes())
    assert again.vocabulary.words == analysis.vocabulary.words
    for name in ("pages", "sentences", "headers"):
        assert np.array_equal(getattr(again, name).ids, getattr(analysis, name).ids)
        assert np.array_equal(getattr(again, name).offsets, getattr(analysis, name).offsets)
    assert np.array_equal(again.printed, analysis.printed)
    assert again.describes(doc.pages)
    assert not again.describes([*doc.pages[:-1], doc.pages[-1] + " changed"])


def test_an_index_from_the_stored_analysis_ranks_as_one_from_the_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = plant_manual()
    from_pages = DocumentIndex.build(doc.record, doc.tree, doc.pages)
    stored = PageAnalysis.from_bytes(analyse_pages(doc.pages).to_bytes())

    def no_tokenising(pages: list[str]) -> PageAnalysis:
        raise AssertionError("the pages were analysed again")

    monkeypatch.setattr("services.navigator.index.analyse_pages", no_tokenising)
    _same_ranking_data(from_pages, DocumentIndex.build(doc.record, doc.tree, doc.pages, analysis=stored))


def test_term_pairs_read_off_the_term_ids_are_the_pairs_of_the_page_text() -> None:
    doc = plant_manual()
    index = DocumentIndex.build(doc.record, doc.tree, doc.pages)
    profile = page_profile(index)
    every = np.arange(len(doc.pages))
    for question in [*QUESTIONS, "pump serviced pump serviced crew", "manual"]:
        wanted = question_pairs(question)
        expected = [len(wanted & bigrams(terms(page))) / len(wanted) if wanted else 0.0 for page in doc.pages]
        assert pair_shares(profile.pages, profile.vocabulary, wanted, every).tolist() == expected


def test_bytes_of_other_text_rules_or_no_analysis_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    data = analyse_pages(["Pumps are serviced every 400 hours."]).to_bytes()
    with pytest.raises(AnalysisFormatError):
        PageAnalysis.from_bytes(b"not arrays")
    # Cut, altered or hostile bytes are refused, never read past their end or as objects.
    header_end = data.index(b"]]}") + 3
    for damaged in (data[:header_end - 5], data[:-9], data.replace(b'"<i', b'"|O', 1), data[:8] + b"[]" + data[10:]):
        with pytest.raises(AnalysisFormatError, match="not a page analysis"):
            PageAnalysis.from_bytes(damaged)
    monkeypatch.setattr(page_analysis, "fingerprint", lambda: "other rules")
    with pytest.raises(AnalysisFormatError, match="other text rules"):
        PageAnalysis.from_bytes(data)


@pytest.mark.parametrize("sentences", [0, 1, 2, 3, 6])
def test_windows_from_the_analysis_are_the_windows_of_the_text(sentences: int) -> None:
    page = " ".join(f"Sentence {k} names valve{k} and pump{k}." for k in range(sentences))
    pages = ["Cover page with no full stop", page, "", page]
    doc = plant_manual()
    index = DocumentIndex.build(doc.record, doc.tree, [*doc.pages, *pages])
    fields = page_fields(index)
    offsets, postings = window_postings(index.analysis)
    for number in range(1, len(index.pages) + 1):
        first, last = int(offsets[number - 1]), int(offsets[number])
        found = [{t for t in postings.terms() if first + k in set(postings[t][0].tolist())} for k in range(last - first)]
        assert found == [set(w) for w in fields.windows(number)], number


def test_the_index_cache_uses_the_stored_analysis_and_recomputes_a_stale_one(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = plant_manual()
    calls: list[int] = []
    analyse = page_analysis.analyse_pages

    def counted(pages: list[str]) -> PageAnalysis:
        calls.append(len(pages))
        return analyse(pages)

    async def run() -> None:
        repository = FakeRepository()
        await store_indexed(repository, doc.model_copy(update={"analysis": analyse(doc.pages).to_bytes()}))
        monkeypatch.setattr("services.navigator.index.analyse_pages", counted)
        index = await IndexCache(repository).index(doc.record)
        assert calls == [] and index.analysis.describes(doc.pages)
        # The same number of pages, other text: the stored analysis is not theirs.
        await repository.put_pages(doc.record.doc_id, [p + " revised" for p in doc.pages])
        index = await IndexCache(repository).index(doc.record)
        assert calls == [len(doc.pages)] and "revis" in index.vocabulary

    asyncio.run(run())


def test_stored_section_vectors_stand_for_the_sections_only_when_made_of_section_text() -> None:
    doc = plant_manual()
    index = DocumentIndex.build(doc.record, doc.tree, doc.pages)
    ids = [f.node.id for f in index.nodes]
    pages = np.ones((len(doc.pages), 3), dtype=np.float32)
    nodes = np.eye(len(ids), 3, dtype=np.float32)

    def stored(node_text: str, node_ids: list[str]) -> DenseVectors | None:
        embeddings = DocumentEmbeddings.from_arrays(doc.record.doc_id, "m", pages, node_ids, nodes[: len(node_ids)],
                                                    node_text=node_text)
        return DenseVectors.aligned(embeddings, ids, len(doc.pages))

    made = stored(SECTION_TEXT, ids)
    assert made is not None and made.sections
    older = stored(DocumentEmbeddings.model_fields["node_text"].default, ids)
    assert older is not None and not older.sections
    partial = stored(SECTION_TEXT, ids[:-1])
    assert partial is not None and not partial.sections


def test_section_vectors_are_read_from_the_store_not_embedded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = plant_manual()
    plain = DocumentIndex.build(doc.record, doc.tree, doc.pages)
    ids = [f.node.id for f in plain.nodes]
    nodes = np.eye(len(ids), 4, dtype=np.float32)
    embeddings = DocumentEmbeddings.from_arrays(doc.record.doc_id, "stand-in", np.ones((len(doc.pages), 4), dtype=np.float32),
                                                ids, nodes, node_text=SECTION_TEXT)

    class StandIn:
        name, dimension = "stand-in", 4

        def embed(self, texts: list[str]) -> np.ndarray:
            raise AssertionError("the sections were embedded again")

    from services.navigator.ranking.dense import section_vectors

    index = DocumentIndex.build(doc.record, doc.tree, doc.pages, embeddings=embeddings)
    assert np.array_equal(section_vectors(index, StandIn()), nodes)


def _tree_texts(index: DocumentIndex) -> list[tuple[str, str]]:
    return [(f.node.title, f.node.summary) for f in index.nodes]


def test_stored_node_terms_index_the_tree_as_tokenising_it_does(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = plant_manual()
    from_pages = DocumentIndex.build(doc.record, doc.tree, doc.pages)
    stored = PageAnalysis.from_bytes(analyse_pages(doc.pages, _tree_texts(from_pages)).to_bytes())
    assert stored.nodes is not None

    def no_tokenising(text: str) -> list[str]:
        raise AssertionError("the tree was tokenised again")

    monkeypatch.setattr("services.navigator.index.terms", no_tokenising)
    from_store = DocumentIndex.build(doc.record, doc.tree, doc.pages, analysis=stored)
    assert from_store.term_vocabulary.words == from_pages.term_vocabulary.words
    assert from_store.has_summaries == from_pages.has_summaries
    _same_ranking_data(from_pages, from_store)


def test_node_terms_of_another_tree_or_of_an_older_analysis_are_computed_again() -> None:
    doc = plant_manual()
    from_pages = DocumentIndex.build(doc.record, doc.tree, doc.pages)
    texts = _tree_texts(from_pages)
    other_tree = [(title + " revised", summary) for title, summary in texts]
    for analysis in (analyse_pages(doc.pages, other_tree), analyse_pages(doc.pages)):
        stored = PageAnalysis.from_bytes(analysis.to_bytes())
        assert stored.node_terms(texts) is None
        _same_ranking_data(from_pages, DocumentIndex.build(doc.record, doc.tree, doc.pages, analysis=stored))


def test_joined_rows_are_each_row_of_the_first_then_of_the_second() -> None:
    first, second = [[1, 2], [], [3], []], [[4], [5, 6], [], []]
    joined = Ragged.of(first).joined(Ragged.of(second))
    assert [joined.row(i).tolist() for i in range(len(joined))] == [a + b for a, b in zip(first, second, strict=True)]


def test_an_indexed_document_is_loaded_without_tokenising_its_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    from services.indexer.pipeline import index_document
    from tests.support import pdfs

    indexed = index_document(pdfs.manual_pdf()[0], "manual.pdf")
    assert indexed.analysis is not None
    from_pages = DocumentIndex.build(indexed.record, indexed.tree, indexed.pages)
    stored = PageAnalysis.from_bytes(indexed.analysis)

    def no_tokenising(text: str) -> list[str]:
        raise AssertionError("the tree was tokenised again")

    monkeypatch.setattr("services.navigator.index.terms", no_tokenising)
    _same_ranking_data(from_pages, DocumentIndex.build(indexed.record, indexed.tree, indexed.pages, analysis=stored))
