"""The Hugging Face Hub names the project publishes under.

The benchmark specs, the dataset card, the Space and ``bla-eval export`` read them from here, and
``tests/test_docs.py`` checks that the README, the docs and the cards name these ids and no
other. A copy published under another organisation passes its own ids to the commands that take
them (``--repo-id``, ``--dataset``, ``BLA_DATASET``).
"""

from __future__ import annotations

ORG = "bla-benchmark"
"""The Hub organisation of the project."""

DATASET = f"{ORG}/bla"
"""The BLA dataset repo: ``load_dataset(DATASET, "coordination")``."""

METRIC = f"{ORG}/bla"
"""The metric's Space (a Space repo, beside the dataset repo of the same name):
``evaluate.load(METRIC)``."""

SPACE = f"{ORG}/bla-space"
"""The Gradio Space that scores a Hub model on BLA."""

RESULTS = f"{ORG}/bla-runs"
"""The dataset repo the Space keeps its finished runs in (its ``BLA_RESULTS_REPO``)."""

NEIGHBOUR_DATASETS = {
    "valse": f"{ORG}/valse",
    "vl-checklist": f"{ORG}/vl-checklist",
    "winoground": f"{ORG}/winoground",
}
"""The neighbouring benchmarks' dataset repos as the builders convert them, by benchmark name
(Winoground's original, gated, is ``facebook/winoground``)."""

ALL_IDS = frozenset({DATASET, METRIC, SPACE, RESULTS, *NEIGHBOUR_DATASETS.values()})
"""Every id above."""
