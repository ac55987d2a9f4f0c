"""How well the verifier tells supported sentences from wrong ones, on documents it was not fitted on.

The labelled set (`bench/grounding_set.py`: generated from the dev PDFs, plus the hand-written
`bench/grounding/`) is split into folds by document. For each held-out fold, the score's
logistic weights, the decision threshold (best balanced accuracy) and the contradiction coverage
are fitted on the other folds only; the held-out items are then judged. Two configurations are
fitted and judged the same way: with the word vectors of the default embedder (wordllama), which
measure how close a replaced word is to the window's word, and lexical only (embeddings off).
Reported over all held-out items, with 95 % bootstrap intervals that resample documents: AUROC
(every item, generated, hand-written), the share of each kind judged supported, the verdicts,
and time per sentence. "before" is the previous overlap score at its shipped threshold
(`bench/grounding_baseline.py`).

    python -m bench.verify [--write-fit]   ->  bench/results/verify.json
    (--write-fit also refits on every document and writes shared/text/grounding_fit.json)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import time
from collections import defaultdict
from typing import Any

import numpy as np

from bench.common import configure_bench_logging, shared_data, write_result
from bench.grounding_baseline import GROUNDED_AT, baseline_score
from bench.grounding_set import GENERATED_KINDS, HANDWRITTEN_KINDS, KINDS, Item, generate, handwritten
from shared.adapters.embeddings.wordllama_backend import WordLlamaEmbedder
from shared.app.verification import SourcePage, answer_confidence, check_sentence
from shared.text.grounding import FEATURES, FIT_FILE, LEXICAL, GroundingFit, ground, prepared_page
from shared.text.numbers import number_mentions
from shared.text.polarity import read_polarity
from shared.text.substitution import WordVectors, aligned_words

logger = logging.getLogger("bench.verify")

FOLDS = 5
BOOTSTRAP = 1000
L2 = 1e-2
CONTRADICTION_KINDS = frozenset({"number", "name", "negation", "direction", "word", "hand_changed"})
VETOES = ("number_missing", "name_missing", "polarity_conflict")


def folds_by_document(items: list[Item], k: int = FOLDS) -> list[int]:
    docs = sorted({i.doc for i in items})
    random.Random(12).shuffle(docs)
    fold_of = {doc: n % k for n, doc in enumerate(docs)}
    return [fold_of[i.doc] for i in items]


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Probability that a supported item outscores an unsupported one (ties count half)."""
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):  # average ranks over ties
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    positives = labels.sum()
    negatives = len(labels) - positives
    if not positives or not negatives:
        return float("nan")
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    """Weights and bias by Newton's method with a small ridge (features are 0..1)."""
    design = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(design.shape[1])
    penalty = l2 * np.eye(design.shape[1])
    penalty[-1, -1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(design @ w, -40, 40)))
        gradient = design.T @ (p - y) + penalty @ w
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


# Signs the evidence fixes: more of the sentence found on the page never lowers the score, a
# failed check or a replaced word never raises it. A weight fitted with the wrong sign (two
# coverages measure nearly the same thing) is set to zero and the rest refitted.
SIGNS = {"coverage": 1, "bigram_coverage": 1, "char_coverage": 1, "number_missing": -1, "name_missing": -1,
         "polarity_conflict": -1, "substitution_distance": -1}


def fit_signed(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """`fit_logistic` with the weights of SIGNS kept to their sign."""
    kept = list(range(x.shape[1]))
    while True:
        weights, bias = fit_logistic(x[:, kept], y)
        wrong = [column for column, w in zip(kept, weights, strict=True)
                 if SIGNS.get(FEATURES[column], 0) * w < 0]
        if not wrong:
            full = np.zeros(x.shape[1])
            full[kept] = weights
            return full, bias
        kept.remove(min(wrong, key=lambda c: SIGNS[FEATURES[c]] * weights[kept.index(c)]))


def _vetoed(x: np.ndarray) -> np.ndarray:
    return x[:, [FEATURES.index(v) for v in VETOES]].max(axis=1) > 0


def best_threshold(scores: np.ndarray, labels: np.ndarray, vetoed: np.ndarray) -> float:
    """The score threshold with the best balanced accuracy (vetoed items are never supported)."""
    best, best_value = 0.5, -1.0
    for t in np.unique(np.round(scores, 4)):
        accepted = (scores >= t) & ~vetoed
        value = accepted[labels].mean() + (~accepted[~labels]).mean()
        if value > best_value:
            best, best_value = float(t), value
    return best


def best_contradiction_coverage(coverage: np.ndarray, contradiction: np.ndarray) -> float:
    """Coverage above which a vetoed sentence reads as a contradiction (best accuracy)."""
    if not len(coverage):
        return 0.5
    candidates = np.unique(np.round(coverage, 3))
    scores = [((coverage >= c) == contradiction).mean() for c in candidates]
    return float(candidates[int(np.argmax(scores))])


def fit(x: np.ndarray, labels: np.ndarray, kinds: np.ndarray, word_vectors: str | None) -> GroundingFit:
    weights, bias = fit_signed(x, labels.astype(float))
    scores = 1 / (1 + np.exp(-np.clip(x @ weights + bias, -40, 40)))
    vetoed = _vetoed(x)
    threshold = best_threshold(scores, labels, vetoed)
    wrong = vetoed & ~labels
    contradiction = np.array([k in CONTRADICTION_KINDS for k in kinds[wrong]])
    coverage = x[wrong, FEATURES.index("coverage")]
    return GroundingFit(
        weights={name: round(float(w), 4) for name, w in zip(FEATURES, weights, strict=True)},
        bias=round(bias, 4),
        threshold=round(threshold, 4),
        contradiction_coverage=best_contradiction_coverage(coverage, contradiction),
        word_vectors=word_vectors,
    )


def _interval(values: list[float]) -> list[float]:
    finite = [v for v in values if v == v]
    if not finite:
        return [float("nan"), float("nan")]
    return [round(float(np.percentile(finite, 2.5)), 3), round(float(np.percentile(finite, 97.5)), 3)]


def summarise(scores: np.ndarray, accepted: np.ndarray, labels: np.ndarray, kinds: np.ndarray,
              docs: np.ndarray) -> dict[str, Any]:
    """Over every item, with the AUROC also over the generated and the hand-written items."""
    everything = _summary(scores, accepted, labels, kinds, docs)
    for name, group in (("generated", GENERATED_KINDS), ("handwritten", HANDWRITTEN_KINDS)):
        mask = np.isin(kinds, group)
        everything[f"auroc_{name}"] = _summary(scores[mask], accepted[mask], labels[mask], kinds[mask],
                                               docs[mask], per_kind=False)["auroc"]
    return everything


def _summary(scores: np.ndarray, accepted: np.ndarray, labels: np.ndarray, kinds: np.ndarray,
             docs: np.ndarray, per_kind: bool = True) -> dict[str, Any]:
    """AUROC and acceptance per kind, each with a 95 % interval from resampling documents."""
    by_doc: dict[str, np.ndarray] = {d: np.flatnonzero(docs == d) for d in sorted(set(docs))}
    names = list(by_doc)
    rng = np.random.default_rng(7)

    def measures(index: np.ndarray) -> dict[str, float]:
        out = {"auroc": auroc(scores[index], labels[index])}
        for kind in KINDS if per_kind else ():
            mask = kinds[index] == kind
            out[kind] = float(accepted[index][mask].mean()) if mask.any() else float("nan")
        return out

    point = measures(np.arange(len(scores)))
    samples: dict[str, list[float]] = defaultdict(list)
    for _ in range(BOOTSTRAP):
        chosen = rng.choice(len(names), size=len(names), replace=True)
        index = np.concatenate([by_doc[names[c]] for c in chosen])
        for key, value in measures(index).items():
            samples[key].append(value)
    return {
        "auroc": {"value": round(point["auroc"], 3), "ci95": _interval(samples["auroc"])},
        "judged_supported": {
            kind: {"share": round(point[kind], 3), "ci95": _interval(samples[kind]),
                   "n": int((kinds == kind).sum())}
            for kind in KINDS if per_kind and (kinds == kind).any()
        },
    }


ANSWER_SIZES = (3, 5)  # extractive answers have at most three sentences; model answers run longer


def _timing(items: list[Item], words: WordVectors | None, passes: int = 3) -> dict[str, Any]:
    """Per sentence and per whole answer on pages already prepared (the cost an answer pays once
    its pages are read: a page is prepared once per document version), each sentence met for
    the first time (its memoised readings cleared), in several passes: the 2 cores are shared,
    so the fastest pass is the cost with the least interference and the slowest shows the
    spread. An answer is consecutive sentences of the sample, each checked as the verifier
    checks an answer's sentence (`check_sentence` against its cited page) and the answer's
    confidence taken. The process's CPU time is reported too: on shared cores, wall time also
    counts the waits for a core, and the load average says how many were waiting."""
    sample = items[:: max(len(items) // 300, 1)]

    def one_pass(size: int) -> tuple[float, float, int]:
        number_mentions.cache_clear()
        read_polarity.cache_clear()
        aligned_words.cache_clear()
        prepared_page.cache_clear()
        for item in sample:
            prepared_page(item.page_text)
        answers = [sample[n : n + size] for n in range(0, len(sample) - size + 1, size)]
        started, cpu = time.perf_counter(), time.process_time()
        for answer in answers:
            answer_confidence([check_sentence(i.sentence, None, [SourcePage(i.doc, i.page, i.page_text)], None, words)
                               for i in answer])
        return (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000, len(answers)

    def measure(size: int) -> dict[str, float]:
        runs = [one_pass(size) for _ in range(passes)]
        count = runs[0][2]
        return {"ms_fastest_pass": round(min(r[0] for r in runs) / count, 3),
                "ms_slowest_pass": round(max(r[0] for r in runs) / count, 3),
                "cpu_ms_fastest_pass": round(min(r[1] for r in runs) / count, 3), "answers": count}

    load_before = os.getloadavg()[0]
    per_sentence = measure(1)
    per_answer = {f"{size}_sentences": measure(size) for size in ANSWER_SIZES}
    return {"ms_per_sentence_fastest_pass": per_sentence["ms_fastest_pass"],
            "ms_per_sentence_slowest_pass": per_sentence["ms_slowest_pass"],
            "cpu_ms_per_sentence_fastest_pass": per_sentence["cpu_ms_fastest_pass"],
            "per_answer": per_answer,
            "sentences_timed": len(sample), "passes": passes,
            "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)]}


def _judge(items: list[Item], folds: np.ndarray, labels: np.ndarray, kinds: np.ndarray,
           words: WordVectors | None) -> dict[str, Any]:
    """Features, per-fold fits and held-out verdicts for one source of word vectors."""
    source = words.name if words else None
    # Features do not depend on the fit's weights: any fit made for these vectors reads them.
    neutral = GroundingFit(dict.fromkeys(FEATURES, 0.0), 0.0, 0.5, 0.5, source)
    x = np.array([[ground(i.sentence, i.page_text, neutral, words).features[f] for f in FEATURES] for i in items])
    scores = np.zeros(len(items))
    accepted = np.zeros(len(items), dtype=bool)
    verdicts = np.empty(len(items), dtype=object)
    fits = []
    fitted = neutral
    for k in range(FOLDS):
        train, test = folds != k, folds == k
        fitted = fit(x[train], labels[train], kinds[train], source)
        fits.append(fitted.__dict__)
        for i in np.flatnonzero(test):
            g = ground(items[i].sentence, items[i].page_text, fitted, words)
            scores[i], accepted[i], verdicts[i] = g.score, g.supported, g.verdict
    return {"x": x, "scores": scores, "accepted": accepted, "verdicts": verdicts, "fits": fits}


def run(write_fit: bool) -> dict[str, Any]:
    started = time.perf_counter()
    pdfs = shared_data() / "pdfs"
    items = list(generate(pdfs)) + list(handwritten(pdfs))
    logger.info("labelled set: %d items from %d documents", len(items), len({i.doc for i in items}))
    labels = np.array([i.supported for i in items])
    kinds = np.array([i.kind for i in items])
    docs = np.array([i.doc for i in items])
    folds = np.array(folds_by_document(items))
    before = np.array([baseline_score(i.sentence, i.page_text) for i in items])
    words = WordVectors(WordLlamaEmbedder())
    judged = {words.name: _judge(items, folds, labels, kinds, words), LEXICAL: _judge(items, folds, labels, kinds, None)}
    main_run, lexical = judged[words.name], judged[LEXICAL]
    result: dict[str, Any] = {
        "set": {"items": len(items), "documents": len(set(docs)), "folds": FOLDS,
                "per_kind": {kind: int((kinds == kind).sum()) for kind in KINDS}},
        "before": {"system": f"five-signal overlap score, grounded at {GROUNDED_AT}",
                   **summarise(before, before >= GROUNDED_AT, labels, kinds, docs)},
        "after": {"system": "coverage of the best layout window + number, name and polarity checks + substituted "
                            f"words compared with {words.name} word vectors, fitted per fold",
                  **summarise(main_run["scores"], main_run["accepted"], labels, kinds, docs)},
        "after_lexical": {"system": "the same without word vectors (TREERAG_EMBEDDINGS=off), fitted per fold",
                          **summarise(lexical["scores"], lexical["accepted"], labels, kinds, docs)},
        "after_verdicts": {
            kind: {v: int(((kinds == kind) & (main_run["verdicts"] == v)).sum())
                   for v in ("supported", "contradicted", "unsupported")}
            for kind in KINDS
        },
        "fits_per_fold": {name: run["fits"] for name, run in judged.items()},
        "timing": _timing(items, words),
        "timing_lexical": _timing(items, None),
        "seconds": round(time.perf_counter() - started, 1),
    }
    final = {name: fit(run["x"], labels, kinds, None if name == LEXICAL else name)
             for name, run in judged.items()} if write_fit else None
    if final is not None:
        result["fit"] = {name: f.__dict__ for name, f in final.items()}
    payload = write_result("verify", result)  # before the fit file: the run records the code it measured
    if final is not None:
        fits = {name: {k: v for k, v in f.__dict__.items() if k != "word_vectors"} for name, f in final.items()}
        FIT_FILE.write_text(json.dumps({"fits": fits, "fitted_on": f"{len(items)} items, {len(set(docs))} documents "
                                        "(python -m bench.verify --write-fit)"}, indent=2) + "\n")
    return payload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-fit", action="store_true", help="Refit on every document and write the fit file.")
    args = parser.parse_args()
    configure_bench_logging()
    payload = run(args.write_fit)
    for system in ("before", "after", "after_lexical"):
        block = payload[system]
        shares = ", ".join(f"{k} {v['share']:.0%}" for k, v in block["judged_supported"].items())
        print(f"{system}: AUROC {block['auroc']['value']} {block['auroc']['ci95']}; supported: {shares}")
    print(f"timing: {payload['timing']}; lexical: {payload['timing_lexical']}")


if __name__ == "__main__":
    main()
