"""Evaluation harness: datasets, metrics, baselines and the side-by-side runner."""
