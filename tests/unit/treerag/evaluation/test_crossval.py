"""Cross-validation harness: folds split by document, off-topic pairs, held-out metrics and
paired bootstrap intervals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from services.navigator.ranking.model import load_model
from services.navigator.stored_vectors import DenseVectors
from tests.support.query.documents import indexed, node
from tests.support.query.indexes import build
from tests.support.query.synthetic import filings_collection, kitchen_collection, plant_collection
from treerag.evaluation import fitting
from treerag.evaluation.baselines import chunk_index, page_index
from treerag.evaluation.crossval import Outcome, cross_validate, paired_ci, summarise
from treerag.evaluation.cv_report import markdown, results_json
from treerag.evaluation.embedding import embedder_name
from treerag.evaluation.fitting import BUDGET_GRID, RANKER_GRID, RECIPES, corpus_questions, negative_pairs
from treerag.evaluation.folds import assign_folds, evidence_removed_pairs, fold_assignment, off_topic_pairs
from treerag.evaluation.removal import without_pages


def _collections():  # noqa: ANN202
    plant_items, plant = plant_collection(4)
    kitchen_items, kitchen = kitchen_collection(4)
    return {"plant": plant_items, "kitchen": kitchen_items}, plant | kitchen


def _held_out(collections, indexes, **options):  # noqa: ANN001, ANN003, ANN202
    """`cross_validate` with the flat BM25 baselines built from the same documents."""
    pages = {name: page_index(index.record, index.pages) for name, index in indexes.items()}
    chunks = {name: chunk_index(index.record, index.pages) for name, index in indexes.items()}
    return cross_validate(collections, indexes, pages, chunks, **options)


def test_folds_never_split_a_document_and_are_deterministic() -> None:
    collections, _ = _collections()
    items = [i for group in collections.values() for i in group]
    folds = assign_folds(items, 3)
    assert folds == assign_folds(list(reversed(items)), 3)
    assert set(folds) == {i.doc for i in items} and set(folds.values()) == {0, 1, 2}
    sizes = [sum(1 for i in items if folds[i.doc] == f) for f in range(3)]
    assert max(sizes) - min(sizes) <= 6  # one document's questions at most


def test_off_topic_pairs_ask_another_collections_documents() -> None:
    collections, _ = _collections()
    pairs = off_topic_pairs(collections)
    assert len(pairs) == sum(len(v) for v in collections.values())
    for pair in pairs:
        assert pair.doc.split("-")[0] != pair.question_doc.split("-")[0]


def test_off_topic_pairs_skip_documents_the_question_collection_shares() -> None:
    collections, _ = _collections()
    shared = collections["plant"][0].model_copy(update={"id": "k-shared"})  # the kitchen set asks a plant manual too
    collections["kitchen"] = [*collections["kitchen"], shared]
    for pair in off_topic_pairs(collections):
        own = {i.doc for i in collections[pair.collection]}
        assert pair.doc not in own


def _filings_and_plant():  # noqa: ANN202
    filing_items, filings = filings_collection(("Kestrel", "Orlan", "Pelham", "Quill"), (2021,))
    plant_items, plant = plant_collection(2)
    return {"filings": filing_items, "plant": plant_items}, filings | plant


def test_missing_name_pairs_ask_a_document_of_the_same_kind_that_never_names_the_subject() -> None:
    collections, indexes = _filings_and_plant()
    pairs = negative_pairs(collections, indexes)
    assert pairs[:len(off_topic_pairs(collections))] == off_topic_pairs(collections)
    missing = [p for p in pairs if p.kind == "missing-name"]
    # Every filing question names its company; the plant questions name nothing, so have none.
    assert sorted(p.item_id for p in missing) == sorted(i.id for i in collections["filings"])
    for pair in missing:
        company = pair.item_id.split("-")[1]
        assert pair.collection == "filings" and pair.doc != pair.question_doc
        assert company in indexes[pair.question_doc].pages[0] and company not in " ".join(indexes[pair.doc].pages)
    assert missing == [p for p in negative_pairs(collections, indexes) if p.kind == "missing-name"]


def test_missing_name_pairs_are_judged_held_out_and_counted_apart() -> None:
    collections, indexes = _filings_and_plant()
    cv = _held_out(collections, indexes, k=2, systems=("treerag-auto",))
    auto = summarise(cv.outcomes)
    assert auto.missing_name == 4 and auto.unanswerable == 0
    assert auto.abstention_missing_name == 1.0 and auto.false_abstention == 0.0
    results = results_json(cv, ["filings", "plant"], corpus=False)
    assert "abst. missing name" in markdown(results)
    assert all(kind in ("factual",) for kind in results["types"])  # negatives are not question types


def test_evidence_removed_pairs_ask_each_question_of_its_own_document_without_its_evidence() -> None:
    collections, indexes = _filings_and_plant()
    pairs = evidence_removed_pairs(collections)
    answerable = [i for group in collections.values() for i in group if i.answerable]
    assert sorted(p.item_id for p in pairs) == sorted(i.id for i in answerable)
    by_id = {i.id: i for i in answerable}
    for pair in pairs:
        assert pair.kind == "evidence-removed" and pair.doc == pair.question_doc == by_id[pair.item_id].doc
        assert pair.without_pages == tuple(by_id[pair.item_id].evidence_pages)
    assert [p for p in negative_pairs(collections, indexes) if p.kind == "evidence-removed"] == pairs


def test_a_document_without_its_evidence_keeps_everything_else() -> None:
    pages = ["Cover of the annual report.", "Business overview and strategy.",
             "Inventory turnover was 6.2 times.", "Inventories are stated at cost."]
    statements = node("0002", "Statements", 3, 4, summary="Inventory turnover was 6.2 times.",
                      children=[node("0003", "Inventories", 4, 4, level=2, summary="Inventories are stated at cost.")])
    tree = [node("0001", "Business", 1, 2, summary="Business overview and strategy."), statements]
    original = build(indexed("d" * 16, "orlan_2021.pdf", pages, tree))
    original.dense = DenseVectors(model="stand-in", pages=np.ones((4, 3), dtype=np.float32),
                                  nodes=np.ones((3, 3), dtype=np.float32))
    blanked = without_pages(original, [3])
    assert blanked.pages == ["Cover of the annual report.", "Business overview and strategy.", "",
                             "Inventories are stated at cost."]
    assert "turnover" in original.vocabulary and "turnover" not in blanked.vocabulary
    # Titles and outline stay; only the summary of the section opening on the blanked page goes.
    assert [(f.node.title, f.node.page_start, f.node.page_end) for f in blanked.nodes] == \
        [(f.node.title, f.node.page_start, f.node.page_end) for f in original.nodes]
    assert [f.node.summary for f in blanked.nodes] == ["Business overview and strategy.", "",
                                                       "Inventories are stated at cost."]
    assert blanked.dense is not None
    assert not blanked.dense.pages[2].any() and blanked.dense.pages[[0, 1, 3]].all()
    # The stored index is untouched.
    assert original.pages[2] and original.dense.pages.all() and original.nodes[1].node.summary


def test_evidence_removed_pairs_are_judged_held_out_and_counted_apart() -> None:
    collections, indexes = _filings_and_plant()
    cv = _held_out(collections, indexes, k=2, systems=("treerag-auto", "bm25-pages"))
    removed = [o for o in cv.outcomes if o.evidence_removed]
    answerable = sum(i.answerable for group in collections.values() for i in group)
    assert len(removed) == 2 * answerable and all(o.type == "evidence-removed" for o in removed)
    # Asked of the document without its evidence: no system can put an evidence page first.
    evidence = {i.id: {(i.doc, p) for p in i.evidence_pages} for group in collections.values() for i in group}
    for o in removed:
        assert not set(o.ranked[:1]) & evidence[o.item_id.split("@")[0]] or o.abstained
    auto = summarise([o for o in cv.outcomes if o.system == "treerag-auto"])
    assert auto.evidence_removed == answerable and auto.unanswerable == 0 and auto.n == answerable
    assert auto.abstention_evidence_removed is not None
    assert "abst. evidence removed" in markdown(results_json(cv, ["filings", "plant"], corpus=False))


def test_held_out_run_reports_every_metric_and_beats_bm25_on_contents_pages() -> None:
    collections, indexes = _collections()
    cv = _held_out(collections, indexes, k=2, systems=("treerag-auto", "bm25-pages"))
    assert len(cv.model_hashes) == 2 and cv.model_hashes[0] != cv.model_hashes[1]
    auto = summarise([o for o in cv.outcomes if o.system == "treerag-auto"])
    assert auto.n == 48 and auto.hit_at_1 == 1.0 and auto.context_recall == 1.0
    assert auto.false_abstention == 0.0 and auto.abstention_off_topic is not None and auto.abstention_off_topic >= 0.8
    results = results_json(cv, ["plant", "kitchen"], corpus=False)
    assert results["fold_models"] == cv.model_hashes and results["shipped_model"] == load_model().digest()
    # Which embedder's similarities the fold models were fitted on: results of two embedders differ.
    assert results["embeddings"] == (embedder_name() or "off") and results["embeddings"] in markdown(results)
    assert "hit_at_1_minus_bm25-pages" in results["sets"]["pooled"]["treerag-auto"]
    report = markdown(results)
    assert "### pooled" in report
    # Per question type, the product's difference from BM25 over pages, with its interval.
    type_rows = report.split("### hit@1 per question type")[1]
    assert "treerag-auto − bm25-pages [95% CI]" in type_rows
    assert all(line.count("[") == 1 for line in type_rows.splitlines() if line.startswith("| ") and "---" not in line
               and not line.startswith("| type"))


def test_a_nested_run_records_what_each_fold_chose_and_still_ranks_held_out_documents() -> None:
    collections, indexes = _collections()
    cv = _held_out(collections, indexes, k=2, systems=("treerag-auto",), recipe=RECIPES["nested"])
    labels = {spec.label for spec in RANKER_GRID}
    assert len(cv.fold_choices) == 2
    assert all(c["ranker"] in labels and c["false_abstention_budget"] in BUDGET_GRID for c in cv.fold_choices)
    assert summarise(cv.outcomes).hit_at_1 >= 0.9
    assert "Fitted with nested selection (fold 0: " in markdown(results_json(cv, ["plant", "kitchen"], corpus=False))


def test_corpus_questions_ask_only_the_kept_documents() -> None:
    collections, indexes = _collections()
    held_out = {"plant-0.pdf", "kitchen-1.pdf", "kitchen-2.pdf", "kitchen-3.pdf"}
    questions = corpus_questions(collections, indexes, lambda doc: doc not in held_out)
    assert {q.doc for q in questions} == {"plant-1.pdf", "plant-2.pdf", "plant-3.pdf"}  # one kitchen left: none
    for q in questions:
        assert {ix.label for ix in q.indexes} == {"plant-1.pdf", "plant-2.pdf", "plant-3.pdf"}
        assert q.gold and all(doc == q.doc for doc, _ in q.gold)


def test_each_fold_fits_its_router_on_training_documents_only(monkeypatch: pytest.MonkeyPatch) -> None:
    plant_items, plant = plant_collection(4)
    filing_items, filings = filings_collection(("Stridewell", "Pacer", "Lumora", "Korvan"), (2016, 2017, 2018))
    collections, indexes = {"plant": plant_items, "filings": filing_items}, plant | filings
    seen: list[set[str]] = []
    real_fit = fitting.fit_router

    def recording(questions, model, settings, lexical=False):  # noqa: ANN001, ANN202
        seen.append({q.doc for q in questions} | {ix.label for q in questions for ix in q.indexes})
        return real_fit(questions, model, settings, lexical)

    monkeypatch.setattr(fitting, "fit_router", recording)
    cv = _held_out(collections, indexes, k=2, systems=("treerag-auto",), corpus=True)
    assert len(seen) == 2
    for fold, documents in enumerate(seen):
        held_out = {doc for doc, f in cv.fold_of_document.items() if f == fold}
        assert documents and not documents & held_out
    asked = [o for o in cv.outcomes if o.collection == "filings" and not o.off_topic]
    assert len(asked) == 12 and all(o.gold for o in asked)
    # Corpus-wide off-topic: every question asked of all the other collection's documents at once.
    off_topic = [o for o in cv.outcomes if o.off_topic]
    assert len(off_topic) == len(plant_items) + len(filing_items)
    assert {o.item_id.split("@")[1] for o in off_topic if o.collection == "plant"} == {"filings"}
    assert summarise(off_topic).abstention_off_topic >= 0.8


def _outcome(system: str, item: str, hit: bool) -> Outcome:
    gold = [("a.pdf", 1)]
    return Outcome(system=system, item_id=item, collection="c", type="factual", fold=0, answerable=True,
                   abstained=False, ranked=[("a.pdf", 1 if hit else 2)], context=[], cited=[], gold=gold,
                   context_tokens=0, latency_ms=1.0)


def test_paired_bootstrap_interval_brackets_the_difference() -> None:
    outcomes = [_outcome("x", f"q{i}", i % 2 == 0) for i in range(40)] + [_outcome("base", f"q{i}", i % 4 == 0) for i in range(40)]
    mean, low, high = paired_ci(outcomes, "x", "base")
    assert mean == 0.25 and low < mean < high and low > 0
    assert paired_ci(outcomes, "x", "x") == (0.0, 0.0, 0.0)


def test_eval_refuses_several_sets_without_folds(tmp_path, capsys) -> None:  # noqa: ANN001
    from treerag.cli import main

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (first, second):
        path.write_text('{"id": "q", "doc": "x.pdf", "question": "q?", "answer": "a"}\n')
    code = main(["eval", "--dataset", str(first), str(second), "--pdfs", str(tmp_path), "--out",
                 str(tmp_path / "r.json"), "--store", str(tmp_path / "store")])
    assert code == 2 and "--folds" in capsys.readouterr().err


def test_leave_one_collection_out_holds_each_set_out_whole_and_fits_on_the_others() -> None:
    collections, indexes = _collections()
    folds = fold_assignment(collections, 5, "collection")
    assert folds.k == 2
    for items in collections.values():
        assert len({folds.of_item[i.id] for i in items}) == 1  # a set is never on both sides
    assert {folds.of_item[collections["plant"][0].id], folds.of_item[collections["kitchen"][0].id]} == {0, 1}
    cv = _held_out(collections, indexes, k=5, systems=("treerag-auto", "bm25-pages"), split="collection")
    assert cv.folds == 2 and cv.split == "collection" and len(set(cv.model_hashes)) == 2
    for outcome in cv.outcomes:  # each question answered by the model fitted without its set
        asked = outcome.item_id.split("@")[1] if outcome.negative_pair else collections[outcome.collection][0].doc
        assert outcome.fold == cv.fold_of_document[asked]
    auto = summarise([o for o in cv.outcomes if o.system == "treerag-auto"])
    assert auto.n == 48
    assert "leave-one-collection-out" in markdown(results_json(cv, ["plant", "kitchen"], corpus=False))


def test_company_folds_keep_a_companys_filings_together() -> None:
    items, _ = filings_collection(("Kestrel", "Orlan", "Pelham", "Quill"), (2019, 2020, 2021))
    items = [i.model_copy(update={"company": i.id.split("-")[1]}) for i in items]
    folds = fold_assignment({"filings": items}, 2, "company")
    assert folds.k == 2 and set(folds.of_item.values()) == {0, 1}
    for company in ("Kestrel", "Orlan", "Pelham", "Quill"):
        assert len({folds.of_item[i.id] for i in items if i.company == company}) == 1


def test_a_document_two_sets_ask_about_trains_neither_of_their_held_out_folds() -> None:
    collections, _ = _collections()
    shared = collections["plant"][0].model_copy(update={"id": "k-shared"})
    collections["kitchen"] = [*collections["kitchen"], shared]
    folds = fold_assignment(collections, 0 + 2, "collection")
    assert folds.of_item["k-shared"] != folds.of_item[collections["plant"][0].id]
    assert not folds.trains(shared.doc, 0) and not folds.trains(shared.doc, 1)


def test_corpus_run_without_folds_answers_with_the_shipped_models_over_a_shared_store() -> None:
    items, filings = filings_collection(("Kestrel", "Orlan"), (2020, 2021))
    asked = [i for i in items if i.id.endswith("2021")]
    distractors = [name for name in filings if name not in {i.doc for i in asked}]
    cv = _held_out({"filings": asked}, filings, k=0, systems=("treerag-auto", "bm25-pages", "dense-pages"),
                   corpus=True, pool=distractors)
    assert cv.split == "shipped" and cv.folds == 0 and cv.pool == 2
    assert cv.model_hashes == [load_model().digest()]
    # Every question was asked of all four filings: the other years sat on the shelf beside it.
    for outcome in cv.outcomes:
        if outcome.system == "bm25-pages" and not outcome.off_topic:
            assert {doc for doc, _ in outcome.ranked} <= set(filings)
    auto = summarise([o for o in cv.outcomes if o.system == "treerag-auto"])
    assert auto.n == 2 and 0.0 <= auto.document_recall_at_3 <= 1.0 and auto.routing_accuracy <= auto.document_recall_at_3
    report = markdown(results_json(cv, ["filings"], corpus=True))
    assert report.startswith("Shipped models, no refitting, corpus-wide, 2 pooled documents on every shelf")
    assert "doc recall@3" in report and "| dense-pages |" in report


def test_eval_corpus_without_folds_runs_the_corpus_evaluation(tmp_path, capsys) -> None:  # noqa: ANN001
    from fpdf import FPDF

    from treerag.cli import main

    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    for name, pages in (("pump.pdf", ["Pump manual", "The pump is serviced every 400 hours by the crew."]),
                        ("oven.pdf", ["Oven manual", "Bread is baked at 220 degrees for forty minutes."])):
        pdf = FPDF()
        pdf.set_font("Helvetica", "", 11)
        for text in pages:
            pdf.add_page()
            pdf.multi_cell(0, 6, text)
        (pdfs / name).write_bytes(bytes(pdf.output()))
    dataset = tmp_path / "set.jsonl"
    dataset.write_text(json.dumps({"id": "q1", "doc": "pump.pdf", "question": "How often is the pump serviced?",
                                   "answer": "every 400 hours", "evidence_pages": [2]}) + "\n")
    out = tmp_path / "r.json"
    code = main(["eval", "--dataset", str(dataset), "--pdfs", str(pdfs), "--out", str(out), "--store",
                 str(tmp_path / "store"), "--corpus", "--pool", str(pdfs), "--systems", "treerag-auto,bm25-pages"])
    assert code == 0, capsys.readouterr().err
    results = json.loads(out.read_text())
    assert results["corpus"] and results["split"] == "shipped" and results["pool"] == 2
    assert results["sets"]["set"]["treerag-auto"]["routing_accuracy"] == 1.0


def test_eval_refuses_a_pool_without_corpus(tmp_path, capsys) -> None:  # noqa: ANN001
    from treerag.cli import main

    dataset = tmp_path / "a.jsonl"
    dataset.write_text('{"id": "q", "doc": "x.pdf", "question": "q?", "answer": "a"}\n')
    for extra in ([], ["--folds", "2"]):
        code = main(["eval", "--dataset", str(dataset), "--pdfs", str(tmp_path), "--out", str(tmp_path / "r.json"),
                     "--store", str(tmp_path / "store"), "--pool", str(tmp_path), *extra])
        assert code == 2 and "--pool needs --corpus" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
