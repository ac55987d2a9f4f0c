"""Vectors computed at indexing are stored with the pages, read back by the query side and
ranked by cosine; with embeddings off nothing is stored and everything else still works."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from services.indexer.pipeline import index_pdf
from services.navigator.index import DocumentIndex
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.embeddings import embed_document, make_embedder
from shared.model.documents import (
    DocumentEmbeddings,
    DocumentRecord,
    DocumentStatus,
    DocumentTree,
    IndexedDocument,
)
from shared.model.query import QuerySettings
from shared.model.tree import TreeNode, walk_tree
from shared.ports.model_roles import Embedder
from shared.settings import Settings
from tests.support import pdfs
from treerag.cli import main
from treerag.engine import QueryEngine

PAGES = [
    "Installing packages: install.packages() fetches a package from a repository and installs it.",
    "Plotting: plot() draws a scatter plot; hist() draws a histogram of the values.",
    "Regular expressions: grep() and sub() search and replace patterns in strings.",
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    loaded = make_embedder(Settings(embeddings="wordllama"))
    assert loaded is not None
    return loaded


def _indexed(embedder: Embedder | None) -> IndexedDocument:
    nodes = [
        TreeNode(id="0001", title="Packages", summary="Installing and loading packages.", page_start=1, page_end=1, level=1),
        TreeNode(id="0002", title="Graphics", summary="Plots and histograms.", page_start=2, page_end=2, level=1),
        TreeNode(id="0003", title="Text", summary="Pattern matching in strings.", page_start=3, page_end=3, level=1),
    ]
    record = DocumentRecord(doc_id="doc1", file_name="guide.pdf", page_count=3, status=DocumentStatus.READY)
    vectors = embed_document("doc1", PAGES, nodes, embedder) if embedder else None
    return IndexedDocument(record=record, pages=PAGES, tree=DocumentTree(doc_id="doc1", nodes=nodes), embeddings=vectors)


async def test_vectors_survive_a_new_process_compactly(tmp_path: Path, embedder: Embedder) -> None:
    indexed = _indexed(embedder)
    await EmbeddedRepository(tmp_path).put_indexed(indexed)

    stored = await EmbeddedRepository(tmp_path).get_embeddings("doc1")
    assert stored == indexed.embeddings
    assert stored is not None and stored.model == embedder.name and stored.node_ids == ["0001", "0002", "0003"]
    original = embedder.embed(PAGES)
    assert np.allclose(stored.page_matrix(), original, atol=2e-3)  # float16 on disk
    assert len(stored.page_vectors) == len(PAGES) * embedder.dimension * 2
    file_size = (tmp_path / "embeddings" / "doc1.vec").stat().st_size
    assert file_size < 2 * len(stored.page_vectors + stored.node_vectors)


async def test_reindexing_without_vectors_removes_the_old_ones(tmp_path: Path, embedder: Embedder) -> None:
    repo = EmbeddedRepository(tmp_path)
    await repo.put_indexed(_indexed(embedder))
    await repo.put_indexed(_indexed(None))
    assert await repo.get_embeddings("doc1") is None
    assert await repo.get_pages("doc1") == PAGES


async def test_query_engine_exposes_dense_page_and_node_scores(tmp_path: Path, embedder: Embedder) -> None:
    repo = EmbeddedRepository(tmp_path)
    await repo.put_indexed(_indexed(embedder))
    engine = QueryEngine(repo, embedder=embedder)
    [index] = await engine.indexes(None)
    question = engine.question_vector("how do I draw a histogram of my data?")
    assert question is not None
    pages = index.dense_page_scores(question)
    nodes = index.dense_node_scores(question)
    assert pages is not None and pages.shape == (3,) and int(np.argmax(pages)) == 1
    assert nodes is not None and index.nodes[int(np.argmax(nodes))].node.title == "Graphics"
    assert np.all(pages <= 1.0 + 1e-5)
    # A question vector of another model's dimension gives no scores rather than wrong ones.
    assert index.dense_page_scores(np.ones(7, dtype=np.float32)) is None


async def test_dense_vectors_do_not_change_the_answer(tmp_path: Path, embedder: Embedder) -> None:
    repo = EmbeddedRepository(tmp_path)
    await repo.put_indexed(_indexed(embedder))
    question = "Which function draws a histogram?"
    with_vectors = await QueryEngine(repo, embedder=embedder).ask(question, None, QuerySettings())
    without = await QueryEngine(repo).ask(question, None, QuerySettings())
    assert with_vectors.answer.citations == without.answer.citations
    assert with_vectors.answer.answer == without.answer.answer and with_vectors.answer.citations


async def test_vectors_of_another_model_are_ignored(tmp_path: Path, embedder: Embedder) -> None:
    repo = EmbeddedRepository(tmp_path)
    indexed = _indexed(embedder)
    assert indexed.embeddings is not None
    other = indexed.model_copy(update={"embeddings": indexed.embeddings.model_copy(update={"model": "other:model"})})
    await repo.put_indexed(other)
    [index] = await QueryEngine(repo, embedder=embedder).indexes(None)
    assert index.dense is None and index.dense_page_scores(np.ones(embedder.dimension)) is None


def test_index_aligns_node_vectors_by_node_id(embedder: Embedder) -> None:
    indexed = _indexed(embedder)
    vectors = indexed.embeddings
    assert vectors is not None
    reordered = DocumentEmbeddings.from_arrays(
        "doc1", vectors.model, vectors.page_matrix(), vectors.node_ids[::-1], vectors.node_matrix()[::-1]
    )
    index = DocumentIndex.build(indexed.record, indexed.tree, PAGES, embeddings=reordered)
    assert index.dense is not None
    for flat in index.nodes:
        row = vectors.node_ids.index(flat.node.id)
        assert np.allclose(index.dense.nodes[flat.index], vectors.node_matrix()[row])


def test_indexing_with_an_embedder_gives_every_page_and_node_a_vector(embedder: Embedder) -> None:
    data, _ = pdfs.manual_pdf()
    indexed = index_pdf(data, "manual.pdf", embedder=embedder)
    vectors = indexed.embeddings
    assert vectors is not None and vectors.page_count == len(indexed.pages)
    assert vectors.node_ids == [n.id for n in walk_tree(indexed.tree.nodes)]
    norms = np.linalg.norm(vectors.node_matrix(), axis=1)
    assert np.allclose(norms, 1.0, atol=2e-3)
    assert index_pdf(data, "manual.pdf").embeddings is None


def test_cli_with_embeddings_off_stores_no_vectors_and_still_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = pdfs.manual_pdf()
    path = pdfs.write(tmp_path, "manual.pdf", data)
    monkeypatch.setenv("TREERAG_EMBEDDINGS", "off")
    store = tmp_path / "off"
    assert main(["index", str(path), "--store", str(store)]) == 0
    assert not (store / "embeddings").exists()
    assert main(["ask", "What does chapter 1 explain?", "--store", str(store)]) == 0
    assert "[manual.pdf, p." in capsys.readouterr().out

    monkeypatch.setenv("TREERAG_EMBEDDINGS", "wordllama")
    store = tmp_path / "on"
    assert main(["index", str(path), "--store", str(store)]) == 0
    assert len(list((store / "embeddings").glob("*.vec"))) == 1
