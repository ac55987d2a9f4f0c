"""The precomputed, vectorised paths of the navigator find exactly what a direct computation
finds: the fuzzy vocabulary look-up, the per-page evidence fields, the node probabilities and
the candidate pages of each node."""

from __future__ import annotations

import difflib
import random

import numpy as np
import pytest

from services.navigator.evidence import coverage, page_fields, proximity, term_weights
from services.navigator.passages import candidate_pages
from services.navigator.scoring import DocumentScores, Normaliser, structural_prior
from shared.model.query import QuerySettings
from shared.text.lexical import query_terms
from shared.text.names import NAME_SIMILARITY, SPELLING_SIMILARITY, WordGroup
from tests.support.navigation import navigate
from tests.support.query.documents import FILLER, indexed, node
from tests.support.query.indexes import build


def _close_by_full_scan(term: str, words: list[str], cutoff: float) -> list[str]:
    close = [w for w in words if abs(len(w) - len(term)) <= 2]
    return difflib.get_close_matches(term, close, n=1, cutoff=cutoff)


@pytest.mark.parametrize("cutoff", [NAME_SIMILARITY, SPELLING_SIMILARITY])
def test_fuzzy_prefilter_finds_the_same_word_as_a_full_scan(cutoff: float) -> None:
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789éü가"
    words = sorted({"s" + "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 11))) for _ in range(3000)})
    group = WordGroup(words)
    probes = [w[:-1] for w in words[:200:7]] + [w + "x" for w in words[1:200:9]] + [
        w[0] + w[2] + w[1] + w[3:] for w in words[2:300:5] if len(w) > 3
    ] + ["sqzzzzzz", "s", "snothinglikeanyword"]
    for term in probes:
        assert difflib.get_close_matches(term, group.candidates(term, cutoff), n=1, cutoff=cutoff) == (
            _close_by_full_scan(term, words, cutoff)
        ), term


def test_fuzzy_prefilter_discards_most_words() -> None:
    words = sorted({f"s{a}{b}{c}" for a in "abcdefgh" for b in "ijklmnop" for c in "qrstuvwx"})
    assert len(WordGroup(words).candidates("sair", SPELLING_SIMILARITY)) < len(words) // 10


def _manual(pages: int = 40) -> tuple:
    rng = random.Random(3)
    vocabulary = "pump valve seal bearing pressure gauge filter coolant relief schedule inspect drain".split()
    texts = [
        " ".join(
            f"The {rng.choice(vocabulary)} and the {rng.choice(vocabulary)} are checked." for _ in range(rng.randint(0, 6))
        ) + f" {FILLER}"
        for _ in range(pages)
    ]
    texts = [("The turbine governor is described here. " if n % 20 == 0 else "") + t for n, t in enumerate(texts)]
    chapters = [
        node(f"c{c}", f"{c + 1} {vocabulary[c]} care", c * 10 + 1, c * 10 + 10, children=[
            # Each chapter's first page is its own text, before its first section.
            node(f"c{c}s{k}", f"{c + 1}.{k + 1} {vocabulary[(c + k) % 12]} notes", c * 10 + 2 + 3 * k,
                 min(c * 10 + 4 + 3 * k, c * 10 + 10), level=2)
            for k in range(3)
        ])
        for c in range(pages // 10)
    ]
    return build(indexed("c" * 16, "manual.pdf", texts, chapters)), texts


def test_page_fields_for_all_pages_match_the_per_page_definitions() -> None:
    index, texts = _manual()
    fields = page_fields(index)
    for question in ["When is the coolant pump inspected?", "relief valve pressure gauge", "drain filter seal"]:
        weights = term_weights(index, query_terms(question), None)
        near, titled = fields.question_fields(weights)
        support = fields.question_support(weights)
        for page in range(1, len(texts) + 1):
            assert near[page - 1] == proximity(fields, page, weights)
            assert titled[page - 1] == coverage(weights, fields.section(page))
            assert support[page - 1] == coverage(weights, fields.page_terms(page) | fields.section(page))


def test_probability_vector_matches_node_by_node_probability() -> None:
    index, _ = _manual()
    scores = DocumentScores.compute(index, query_terms("coolant pump bearing"), None)
    scores.normalise(Normaliser(page=float(scores.page_raw.max()), title=float(scores.title_raw.max()),
                                summary=1.0, node_text=float(scores.node_text_raw.max())))
    settings = QuerySettings()
    vector = scores.probabilities(settings)
    assert vector is not None
    for i, flat in enumerate(index.nodes):
        expected = (settings.semantic_weight * scores.lexical(i)
                    + settings.structural_weight * structural_prior(flat.depth)
                    + settings.contextual_weight * float(scores._context[i]))
        assert vector[i] == expected
    scores.model_scores[0] = 0.9  # a model's scores are blended node by node
    assert scores.probabilities(settings) is None


def test_candidate_pages_are_each_nodes_strongest_pages_in_page_order_on_ties() -> None:
    index, _ = _manual()
    scores = DocumentScores.compute(index, query_terms("valve pressure"), None)
    scores.normalise(Normaliser(page=float(scores.page_raw.max()), title=1.0, summary=1.0, node_text=1.0))
    found = candidate_pages(scores, list(range(len(index.nodes))))
    for i, flat in enumerate(index.nodes):
        window = scores.page[flat.node.page_start - 1 : flat.node.page_end]
        order = np.argsort(-window, kind="stable")[:6]
        expected = [flat.node.page_start + int(k) for k in order if window[k] > 0] or [flat.node.page_start]
        assert found[i] == expected


def test_navigation_results_do_not_depend_on_warm_caches() -> None:
    cold_index, _ = _manual()
    warm_index, _ = _manual()
    questions = ["When is the coolant pump inspected?", "Which gauge shows the relief pressure?", "Kestrel rule?"]
    for q in questions:
        navigate(q, [warm_index], QuerySettings())
    for q in reversed(questions):
        for mode in ("dfs", "beam", "auto"):
            settings = QuerySettings(mode=mode)
            assert navigate(q, [cold_index], settings).passages == navigate(q, [warm_index], settings).passages


def test_field_scores_equal_each_fields_own_bm25() -> None:
    index, _ = _manual()
    qterms = query_terms("coolant pump bearing pressure notes")
    shared = {"coolant": 2.5, "notes": 0.25}  # a corpus-wide IDF for some terms, the field's own for the rest
    for idf in (None, shared):
        combined = index.field_scores(qterms, idf)
        for field_index, scores in zip(index.bm25_fields, combined, strict=True):
            assert np.array_equal(scores, field_index.scores(qterms, idf))


def test_own_pages_beat_children_matches_its_definition() -> None:
    index, _ = _manual()
    outcomes: set[bool] = set()
    for question in ("coolant pump bearing", "relief valve", "drain notes", "seal gauge filter", "turbine governor"):
        scores = DocumentScores.compute(index, query_terms(question), None)
        scores.normalise(Normaliser(page=float(scores.page_raw.max()), title=1.0, summary=1.0, node_text=1.0))
        for flat in index.nodes:
            expected = False
            if flat.children:
                first_child = index.nodes[flat.children[0]].node.page_start
                own = scores.page[flat.node.page_start - 1 : min(first_child - 1, len(index.pages))]
                expected = own.size > 0 and float(own.max()) > max(scores.page_best(c) for c in flat.children)
            assert scores.own_pages_beat_children(flat.index) == expected
            outcomes.add(expected)
    assert outcomes == {True, False}  # both cases occur


def _deepest_one_node_at_a_time(nodes: list, n_pages: int) -> list[int]:
    owner, depth_seen = [-1] * n_pages, [0] * n_pages
    for flat in nodes:
        for page in range(flat.node.page_start - 1, min(flat.node.page_end, n_pages)):
            if depth_seen[page] <= flat.depth:
                owner[page], depth_seen[page] = flat.index, flat.depth
    return owner


def _random_tree(rng: random.Random, start: int, end: int, depth: int) -> list:
    children, page = [], start
    while page <= end and rng.random() < 0.8:
        last = min(end + rng.randint(0, 2), page + rng.randint(0, 6))  # may reach past the pages
        kids = _random_tree(rng, page, last, depth + 1) if depth < 4 and rng.random() < 0.5 else []
        children.append(node(f"{depth}.{page}.{len(children)}", f"Part {page}", page, last, level=depth, children=kids))
        page = last + rng.choice([0, 1, 1, 2])  # siblings may share a page, or leave one out
    return children


def test_each_page_belongs_to_its_deepest_section_as_a_walk_of_the_nodes_finds() -> None:
    from services.navigator.index import DocumentIndex, deepest_nodes

    rng = random.Random(11)
    for trial in range(40):
        n_pages = rng.randint(1, 30)
        doc = indexed("d", "d.pdf", [f"page {k} {FILLER}" for k in range(n_pages)],
                      _random_tree(rng, 1, n_pages, 1) or [node("only", "Only", 1, n_pages)])
        index = DocumentIndex.build(doc.record, doc.tree, doc.pages)
        expected = _deepest_one_node_at_a_time(index.nodes, n_pages)
        assert deepest_nodes(index.nodes, n_pages).tolist() == expected, trial
        assert index.page_to_deepest.tolist() == expected, trial
