"""A results.json document of a run of BLA's active-passive task, for the Space's tests."""

from __future__ import annotations


def results_document(model: str, n: int, created: str, set_accuracy: float = 0.25) -> dict:
    """``model``'s results on ``n`` active-passive datapoints, written at ``created``."""
    metrics = {"sentence_accuracy": 0.5, "set_accuracy": set_accuracy, "set_error": 0.25, "n": n}
    return {
        "model": model,
        "kind": "contrastive",
        "protocol": {"binary_view": "top-k", "similarity": "cosine"},
        "created": created,
        "tasks": {"active_passive": {"n": n, "ranking": metrics, "binary": {"accuracy": 0.5}}},
    }
