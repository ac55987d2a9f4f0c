"""Held-out evaluation: fit the ranking model on K-1 folds of documents, answer the questions
of the remaining fold, for every fold; every question is judged by a model that never saw its
document.

Metrics, per system (over answerable questions unless said otherwise):

- hit@1: the system's first page is a gold page;
- hit@3: a gold page is among its first three pages;
- recall@5: share of the gold pages among its first five pages;
- context recall: share of the gold pages among the pages of the context handed to the
  answerer (after compression), with that context's tokens (mean, all questions);
- cited hit@1: the answer's first citation is a gold page;
- abstention (unanswerable): share of unanswerable items the answer abstains on;
- abstention (off-topic): share of off-topic pairs (a question asked of another collection's
  document; `--corpus`: of all of another collection's documents at once) the answer abstains on;
- abstention (missing name): share of missing-name pairs (a question asked of another document
  of its own collection that never mentions a name the question uses; not with `--corpus`,
  where the question's own document is on the shelf) the answer abstains on;
- abstention (evidence removed): share of evidence-removed pairs (a question asked of its own
  document with its evidence pages blanked; not with `--corpus`) the answer abstains on. A page
  the annotators did not list may still answer, so this is a lower bound of what refusing well
  would score, not a figure that should reach 1;
- false abstention: share of answerable questions the answer abstains on;
- routing accuracy (`--corpus`): the first page is in the question's document;
- document recall@3 (`--corpus`): the question's document is among the first three documents
  of the ranked pages;
- CI: paired bootstrap 95 % interval (2,000 resamples of the questions, seed 0) of the
  system's hit@1 minus a baseline's hit@1 on the same questions.
An abstention on an answerable question scores 0 on every page metric.
"""

from __future__ import annotations

import functools
import logging
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from services.compressor.tokens import count_tokens
from services.navigator.index import DocumentIndex
from services.navigator.models import NavigatorModels, configured_models
from services.navigator.ranking.model import RankingModel
from services.navigator.ranking.rerank import Reranking
from shared.adapters.reranker import configured_scorer
from shared.model.query import CompressedContext, Passage, QuerySettings, VerifiedAnswer
from shared.settings import get_settings
from treerag.evaluation.answer_scores import AnswerScore, figure_printed, score_answer
from treerag.evaluation.asking import Asker
from treerag.evaluation.baselines import TOP_K, FlatIndex, PooledIndex, chunk_index, dense_search, page_index
from treerag.evaluation.dataset import QAItem
from treerag.evaluation.embedding import harness_embedder
from treerag.evaluation.fitting import (
    SHIPPED_RECIPE,
    Example,
    Recipe,
    corpus_questions,
    document_collections,
    explore_examples,
    fit_model,
    negative_pairs,
)
from treerag.evaluation.folds import Folds, NegativePair, Split, fold_assignment
from treerag.evaluation.removal import AskedDocuments
from treerag.evaluation.rerank_fit import fit_rerank
from treerag.evaluation.self_pairs import PAGES_PER_DOCUMENT
from treerag.pipeline import ask_result

logger = logging.getLogger(__name__)

TREE_SYSTEMS = ("treerag-auto", "treerag-dfs", "treerag-beam", "treerag-tree")
CV_SYSTEMS = (*TREE_SYSTEMS, "bm25-pages", "bm25-chunks", "dense-pages")
BASELINES = ("bm25-pages", "bm25-chunks")
RANKED_PAGES = 10
BOOTSTRAP_SAMPLES = 2000


class Outcome(BaseModel):
    """One system's answer to one question (or off-topic pair)."""

    system: str
    item_id: str
    collection: str
    type: str
    fold: int
    answerable: bool
    off_topic: bool = False
    missing_name: bool = False
    evidence_removed: bool = False
    abstained: bool
    ranked: list[tuple[str, int]]  # (file name, page), best first
    context: list[tuple[str, int]]
    cited: list[tuple[str, int]]
    gold: list[tuple[str, int]]
    context_tokens: int
    latency_ms: float
    answer: str = ""  # the answer as the answerer wrote it ("" when it refused)
    gold_answer: str = ""
    question: str = ""  # as asked: it may name the scale of a gold amount ("in USD millions")
    figure_printed: bool = False  # the gold answer is a figure a gold page prints
    confidence: float = 0.0  # the answer's confidence as the answerer gave it
    signals: dict[str, float] = Field(default_factory=dict)  # what the confidence was computed from

    @property
    def negative_pair(self) -> bool:
        """A question asked of a document that cannot answer it (not one of the question set's
        own items)."""
        return self.off_topic or self.missing_name or self.evidence_removed


@dataclass
class Documents:
    """What a system may read for one question: document indexes and flat BM25 indexes."""

    indexes: list[DocumentIndex]
    pages: FlatIndex | PooledIndex
    chunks: FlatIndex | PooledIndex


def trained_in(folds: Folds, fold: int, doc: str) -> bool:
    """Whether `doc` is in the training side of `fold`."""
    return bool(folds.trains(doc, fold))


def _pages_of(passages: Sequence[Passage], label: Callable[[str], str]) -> list[tuple[str, int]]:
    return list(dict.fromkeys((label(p.doc_id), page) for p in passages for page in p.pages))


def _cited(answer: VerifiedAnswer, label: Callable[[str], str]) -> list[tuple[str, int]]:
    if answer.abstained:
        return []
    return list(dict.fromkeys((label(c.doc_id), page) for c in answer.citations for page in c.pages))


@dataclass
class SystemRun:
    answer: VerifiedAnswer
    ranked: list[tuple[str, int]]  # pages the retrieval stage returned, best first
    context: list[tuple[str, int]]  # pages of the context handed to the answerer
    cited: list[tuple[str, int]]
    context_tokens: int


def run_system(
    system: str, question: str, documents: Documents, settings: QuerySettings, model: RankingModel,
    reranking: Reranking | None = None, asker: Asker | None = None,
) -> SystemRun:
    """One system's retrieval, context and answer for one question, through the query path."""
    asker = asker or Asker()
    by_id = {ix.doc_id: ix for ix in documents.indexes}

    def label(doc_id: str) -> str:
        index = by_id.get(doc_id)
        return index.label if index else doc_id

    if system in TREE_SYSTEMS:
        mode = "auto" if system in ("treerag-auto", "treerag-tree") else system.removeprefix("treerag-")
        local = settings.model_copy(update={"mode": mode, "ranking": "tree" if system == "treerag-tree" else "fused"})
        run = asker.ask(question, documents.indexes, local, NavigatorModels(model, reranking, asker.models.navigator.embedder))
        answer = ask_result(run).answer
        navigated = run.navigation.passages if run.navigation else []
        handed = run.context.passages if run.context else []
        tokens = run.context.tokens_after if run.context else 0
        return SystemRun(answer, _pages_of(navigated, label), _pages_of(handed, label), _cited(answer, label), tokens)
    if system == "dense-pages":
        found = dense_search(question, documents.indexes, k=RANKED_PAGES)
    else:
        found = (documents.pages if system == "bm25-pages" else documents.chunks).search(question, k=RANKED_PAGES)
    top = found[:TOP_K]
    tokens = sum(count_tokens(p.text) for p in top)
    context = CompressedContext(question=question, passages=top, tokens_before=tokens, tokens_after=tokens)
    answer = asker.verify(context, documents.indexes, settings)
    return SystemRun(answer, _pages_of(found, label), _pages_of(top, label), _cited(answer, label), tokens)


class CrossValidation(BaseModel):
    folds: int
    # What a fold holds ("document", "collection", "company"), or "shipped": no fold fitted.
    split: str = "document"
    # Documents beside the questions' own on every corpus-wide shelf (a shared store).
    pool: int = 0
    # Pages of each training document turned into routing questions (`self_pairs`; 0: none).
    self_pairs: int = 0
    fold_of_document: dict[str, int]
    model_hashes: list[str]
    # What each fold's nested selection chose (ranker, false-abstention budget); empty when the
    # recipe offers no choice.
    fold_choices: list[dict[str, str | float]] = []
    # The embedder whose similarities the fold models were fitted on ("off": none).
    embeddings: str = "off"
    # The cross-encoder that reordered the fused ranking's best pages ("off": none), and each
    # fold's fitted weight for it.
    reranker: str = "off"
    rerank_weights: list[float] = []
    outcomes: list[Outcome]


def cross_validate(
    collections: Mapping[str, Sequence[QAItem]],
    indexes: Mapping[str, DocumentIndex],
    flat_pages: Mapping[str, FlatIndex],
    flat_chunks: Mapping[str, FlatIndex],
    k: int,
    settings: QuerySettings | None = None,
    systems: Sequence[str] = CV_SYSTEMS,
    corpus: bool = False,
    recipe: Recipe = SHIPPED_RECIPE,
    split: Split = "document",
    pool: Sequence[str] = (),
    self_pairs: int = PAGES_PER_DOCUMENT,
) -> CrossValidation:
    """Fit on K-1 folds (with `recipe`), answer the held-out fold, for each fold; `split` says
    what a fold holds (`fold_assignment`). `k == 0`: no fitting, every question answered by the
    shipped models. With `corpus`, every held-out question is asked of all the documents of its
    collection at once, with the `pool` documents beside them (a shared store), and, as an
    off-topic question, of all the documents of each other collection at once; without it, of
    its own document and as the negative pairs of `negative_pairs`."""
    settings = settings or QuerySettings()
    items = [item for name in sorted(collections) for item in collections[name]]
    collection_of = {item.id: name for name in sorted(collections) for item in collections[name]}
    shipped = k == 0
    folds = fold_assignment(collections, k, split).with_pool(indexes, pool)
    k = folds.k
    pairs = negative_pairs(collections, indexes)
    asked = AskedDocuments(indexes)
    labelled, negatives = ([], []) if shipped else explore_examples(
        items, pairs, indexes, settings, asked, document_collections(collections))

    def documents_of(pair: NegativePair) -> Documents:
        if not pair.without_pages:
            return Documents([indexes[pair.doc]], flat_pages[pair.doc], flat_chunks[pair.doc])
        index = asked.of(pair)
        return Documents([index], page_index(index.record, index.pages), chunk_index(index.record, index.pages))

    pooled: dict[str, Documents] = {}
    # Corpus-wide off-topic: (question's collection, other collection) -> the other collection's
    # documents, less any the question's collection also asks about.
    shelves: dict[tuple[str, str], Documents] = {}
    if corpus:
        docs_of = {name: sorted({i.doc for i in collections[name]}) for name in collections}

        def shelf(docs: list[str]) -> Documents:
            return Documents([indexes[d] for d in docs], PooledIndex.of([flat_pages[d] for d in docs]),
                             PooledIndex.of([flat_chunks[d] for d in docs]))

        for name in sorted(collections):
            pooled[name] = shelf(sorted({*docs_of[name], *pool}))
            for other in sorted(collections):
                foreign = [d for d in docs_of[other] if d not in set(docs_of[name])]
                if other != name and foreign:
                    shelves[(name, other)] = shelf(foreign)
    outcomes: list[Outcome] = []
    hashes: list[str] = []
    choices: list[dict[str, str | float]] = []
    embedder = harness_embedder()
    embeddings = embedder.name if embedder is not None else "off"
    scorer = configured_scorer(get_settings().reranker)
    rerank_weights: list[float] = []
    asker = Asker()
    for fold in range(k):
        if shipped:
            configured = configured_models(get_settings())
            model, reranking = configured.ranking, configured.reranking
            train: list[Example] = []
        else:
            train = [e for e in labelled if folds.trains(e.group, fold)]
            train += [e for e, p in zip(negatives, pairs, strict=True)
                      if folds.trains(p.doc, fold) and folds.trains(p.question_doc, fold)]
            corpus_train = corpus_questions(collections, indexes, functools.partial(trained_in, folds, fold), pool,
                                            self_pairs)
            model = fit_model(train, {"fold": fold, "folds": k, "embeddings": embeddings}, recipe, corpus_train)
            if "ranker" in model.fitted_on:
                choices.append({key: model.fitted_on[key] for key in ("ranker", "false_abstention_budget")})
            reranking = None
            if scorer is not None:
                reranking = Reranking(scorer, fit_rerank(train, model, scorer, {"fold": fold}))
        hashes.append(model.digest())
        if reranking is not None:
            rerank_weights.append(reranking.model.weight)
        logger.info("fold %d: trained on %d examples, model %s", fold, len(train), hashes[-1])
        for item in items:
            if folds.of_item[item.id] != fold:
                continue
            if corpus:
                documents = pooled[collection_of[item.id]]
            else:
                documents = Documents([indexes[item.doc]], flat_pages[item.doc], flat_chunks[item.doc])
            gold = [(item.doc, p) for p in item.evidence_pages] if item.answerable else []
            printed = item.answerable and figure_printed(
                item.answer, indexes[item.doc].pages, item.evidence_pages, item.question)
            for system in systems:
                started = time.perf_counter()
                run = run_system(system, item.question, documents, settings, model, reranking, asker)
                outcomes.append(Outcome(
                    system=system, item_id=item.id, collection=collection_of[item.id], type=item.type, fold=fold,
                    answerable=item.answerable, abstained=run.answer.abstained, ranked=run.ranked[:RANKED_PAGES],
                    context=run.context, cited=run.cited, gold=gold, context_tokens=run.context_tokens,
                    latency_ms=round((time.perf_counter() - started) * 1000, 3),
                    answer="" if run.answer.abstained else run.answer.answer, gold_answer=item.answer,
                    question=item.question, figure_printed=printed, confidence=run.answer.confidence, signals=run.answer.signals,
                ))
        if corpus:
            for item in items:
                if folds.of_item[item.id] != fold:
                    continue
                for (source, target), documents in shelves.items():
                    if source != collection_of[item.id]:
                        continue
                    for system in systems:
                        started = time.perf_counter()
                        run = run_system(system, item.question, documents, settings, model, reranking, asker)
                        outcomes.append(Outcome(
                            system=system, item_id=f"{item.id}@{target}", collection=source, type="off-topic",
                            fold=fold, answerable=False, off_topic=True, abstained=run.answer.abstained,
                            ranked=run.ranked[:RANKED_PAGES], context=run.context, cited=[], gold=[],
                            context_tokens=run.context_tokens,
                            latency_ms=round((time.perf_counter() - started) * 1000, 3),
                        ))
            continue
        for pair in pairs:
            if folds.judges(pair) != fold:
                continue
            documents = documents_of(pair)
            for system in systems:
                started = time.perf_counter()
                run = run_system(system, pair.question, documents, settings, model, reranking, asker)
                outcomes.append(Outcome(
                    system=system, item_id=f"{pair.item_id}@{pair.doc}", collection=pair.collection,
                    type=pair.kind, fold=fold, answerable=False, off_topic=pair.kind == "off-topic",
                    missing_name=pair.kind == "missing-name", evidence_removed=pair.kind == "evidence-removed",
                    abstained=run.answer.abstained,
                    ranked=run.ranked[:RANKED_PAGES], context=run.context, cited=[], gold=[],
                    context_tokens=run.context_tokens,
                    latency_ms=round((time.perf_counter() - started) * 1000, 3),
                    confidence=run.answer.confidence, signals=run.answer.signals,
                ))
    return CrossValidation(folds=0 if shipped else k, split="shipped" if shipped else split,
                           pool=len(pool), self_pairs=0 if shipped else self_pairs, fold_of_document=folds.of_document, model_hashes=hashes, fold_choices=choices,
                           embeddings=embeddings, reranker=scorer.name if scorer else "off",
                           rerank_weights=rerank_weights, outcomes=outcomes)


class Summary(BaseModel):
    n: int
    hit_at_1: float
    hit_at_3: float
    recall_at_5: float
    context_recall: float
    context_tokens: float
    cited_hit_at_1: float
    false_abstention: float
    routing_accuracy: float
    document_recall_at_3: float = 0.0
    unanswerable: int
    abstention_unanswerable: float | None
    off_topic: int
    abstention_off_topic: float | None
    missing_name: int = 0
    abstention_missing_name: float | None = None
    evidence_removed: int = 0
    abstention_evidence_removed: float | None = None
    latency_ms_p50: float
    # Answers against the gold answer (`answer_scores`): figure questions and the share whose
    # answer states the value; token F1 of the others; right answer on a cited gold page.
    figure_questions: int = 0
    value_in_answer: float | None = None
    printed_figures: int = 0  # figure questions whose value a gold page prints
    value_in_answer_printed: float | None = None
    answer_f1: float = 0.0
    right_answer_right_page: float = 0.0


def _right_on_gold_page(outcome: Outcome, score: AnswerScore) -> float:
    return float(score.right and bool(outcome.cited) and outcome.cited[0] in set(outcome.gold))


def _hits(outcome: Outcome) -> tuple[float, float, float, float, float, float, float]:
    gold = set(outcome.gold)
    ranked = [] if outcome.abstained else outcome.ranked
    context = [] if outcome.abstained else outcome.context
    first_doc = ranked[0][0] if ranked else None
    first_documents = list(dict.fromkeys(doc for doc, _ in ranked))[:3]
    return (
        float(bool(ranked) and ranked[0] in gold),
        float(any(p in gold for p in ranked[:3])),
        sum(p in gold for p in ranked[:5]) / len(gold),
        sum(p in set(context) for p in gold) / len(gold),
        float(bool(outcome.cited) and outcome.cited[0] in gold),
        float(first_doc is not None and first_doc == outcome.gold[0][0]),
        float(outcome.gold[0][0] in first_documents),
    )


def summarise(outcomes: Sequence[Outcome]) -> Summary:
    answerable = [o for o in outcomes if o.answerable and o.gold]
    unanswerable = [o for o in outcomes if not o.answerable and not o.negative_pair]
    off_topic = [o for o in outcomes if o.off_topic]
    missing_name = [o for o in outcomes if o.missing_name]
    evidence_removed = [o for o in outcomes if o.evidence_removed]
    hits = np.array([_hits(o) for o in answerable]) if answerable else np.zeros((0, 7))

    def mean(column: int) -> float:
        return round(float(hits[:, column].mean()), 4) if len(hits) else 0.0

    def share(group: list[Outcome]) -> float | None:
        return round(sum(o.abstained for o in group) / len(group), 4) if group else None

    on_questions = [o for o in outcomes if not o.negative_pair]
    # A refused question's answer is "": no value stated, no words in common.
    scores = [(o, score_answer(o.answer, o.gold_answer, o.question)) for o in answerable]
    figures = [float(s.right) for _, s in scores if s.figure]
    printed = [float(s.right) for o, s in scores if s.figure and o.figure_printed]
    texts = [s.f1 for _, s in scores if not s.figure]
    return Summary(
        figure_questions=len(figures), value_in_answer=round(statistics.fmean(figures), 4) if figures else None,
        printed_figures=len(printed),
        value_in_answer_printed=round(statistics.fmean(printed), 4) if printed else None,
        answer_f1=round(statistics.fmean(texts), 4) if texts else 0.0,
        right_answer_right_page=round(statistics.fmean(_right_on_gold_page(o, s) for o, s in scores), 4)
        if scores else 0.0,
        n=len(answerable), hit_at_1=mean(0), hit_at_3=mean(1), recall_at_5=mean(2), context_recall=mean(3),
        cited_hit_at_1=mean(4), routing_accuracy=mean(5), document_recall_at_3=mean(6),
        context_tokens=round(statistics.fmean(o.context_tokens for o in on_questions), 1) if on_questions else 0.0,
        false_abstention=share(answerable) or 0.0,
        unanswerable=len(unanswerable), abstention_unanswerable=share(unanswerable),
        off_topic=len(off_topic), abstention_off_topic=share(off_topic),
        missing_name=len(missing_name), abstention_missing_name=share(missing_name),
        evidence_removed=len(evidence_removed), abstention_evidence_removed=share(evidence_removed),
        latency_ms_p50=round(float(np.median([o.latency_ms for o in on_questions])), 3) if on_questions else 0.0,
    )


def paired_ci(
    outcomes: Sequence[Outcome], system: str, baseline: str, samples: int = BOOTSTRAP_SAMPLES
) -> tuple[float, float, float] | None:
    """(mean difference of hit@1, 2.5th, 97.5th percentile) of `system` minus `baseline`."""
    first = {o.item_id: _hits(o)[0] for o in outcomes if o.system == system and o.answerable and o.gold}
    second = {o.item_id: _hits(o)[0] for o in outcomes if o.system == baseline and o.answerable and o.gold}
    shared = sorted(set(first) & set(second))
    if not shared:
        return None
    diff = np.array([first[i] - second[i] for i in shared])
    rng = np.random.default_rng(0)
    means = diff[rng.integers(0, len(diff), size=(samples, len(diff)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return round(float(diff.mean()), 4), round(float(lo), 4), round(float(hi), 4)
