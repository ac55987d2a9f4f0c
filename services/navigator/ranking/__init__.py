"""Fused page ranking: the tree and the page index both propose candidate pages; a small
fitted model (`model.json`, written by `bench/fit_ranker.py`) orders them and decides whether
the documents answer the question at all."""
