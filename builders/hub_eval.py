"""``eval.yaml``: the dataset repo declared as a Hub benchmark (one task per construction).

The Hub reads ``eval.yaml`` at the root of a dataset repo (docs: hub/eval-results): ``name``,
``description``, ``evaluation_framework`` and ``tasks``, each task an ``id`` with the dataset
``config`` and ``split`` it is scored on. Model repos then report scores in
``.eval_results/*.yaml`` entries whose ``task_id`` is one of these ids; ``bla-eval export``
writes them. BLA's headline metric (its benchmark spec's main view, ``bla_eval.benchmarks.bla``)
is named in the description: the Hub's format has no metric field (a leaderboard value is one
number per task).
"""

from __future__ import annotations

import yaml
from bla_eval.benchmarks.bla import BENCHMARK

from bla_metric.tasks import TASKS

EVAL_FILE = "eval.yaml"
EVALUATION_FRAMEWORK = "bla-eval"
"""The harness that produces the scores (``bla-eval``, this project's scoring engine)."""
SPLIT = "test"


def headline_words() -> str:
    """The exported value in words: ``sentence accuracy of the ranking view``."""
    view = BENCHMARK.main_view
    return f"{BENCHMARK.headline[view].replace('_', ' ')} of the {view} view"


def eval_config() -> dict:
    """The eval.yaml document: every registered task, split ``test`` (the whole benchmark)."""
    titles = ", ".join(f"{t.label}: config {t.config}" for t in TASKS.values())
    return {
        "name": BENCHMARK.title,
        "description": (
            "BLA tests whether vision-and-language models understand basic constructions: "
            f"{titles}. Each datapoint is one image with two true and two false sentences made "
            f"of the same words. The value reported per task is the {headline_words()} in percent "
            "(a sentence is correct when a true one ranks in the top two or a false one in the "
            "bottom two; chance 50), scored with bla-eval."
        ),
        "evaluation_framework": EVALUATION_FRAMEWORK,
        "tasks": [{"id": t.config, "config": t.config, "split": SPLIT} for t in TASKS.values()],
    }


def render_eval_yaml() -> str:
    """``eval.yaml`` as text (keys in the Hub docs' order)."""
    return yaml.safe_dump(eval_config(), sort_keys=False, allow_unicode=True, width=100)
