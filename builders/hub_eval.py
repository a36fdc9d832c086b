"""``eval.yaml``: the dataset repo declared as a Hub benchmark, one task per construction.

The Hub reads ``eval.yaml`` at the root of a dataset repo (docs: hub/eval-results) and accepts
only an ``evaluation_framework`` of its list (huggingface.js, ``packages/tasks/src/eval.ts``,
``EVALUATION_FRAMEWORKS``); ``inspect-ai`` is the one whose runs in HF Jobs the Hub marks as
verified. Each task is one that stock ``inspect eval hf/<dataset>`` runs (inspect-ai's
``_eval/task/hf.py`` reads it): the task's per-sentence config (``builders/sentences.py``), a
``field_spec`` naming its columns (``question`` as input, ``target`` yes/no, ``image`` a data
URI as ``input_image``), greedy generation of a short answer, and inspect's built-in ``match``
scorer at the beginning of the answer (per-sentence accuracy). Model repos then report scores
in ``.eval_results/*.yaml`` entries whose ``task_id`` is one of these ids (``bla-eval export``
writes them from a bla-eval run or an inspect log). BLA's own metrics over the four sentences of
a datapoint are computed by the inspect task shipped with the engine (``inspect eval
bla/<task>``, ``bla_eval.harnesses.inspect_tasks``) and by ``bla-eval``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import yaml
from bla_eval.benchmarks.bla import BENCHMARK

from bla_metric.tasks import TASKS
from builders.schema import sentence_config

EVAL_FILE = "eval.yaml"
EVALUATION_FRAMEWORK = "inspect-ai"
"""The harness the Hub runs the tasks with (one of the Hub's ``EVALUATION_FRAMEWORKS``)."""
SPLIT = "test"
ANSWER_TOKENS = 8
"""Tokens of the generated answer (greedy): room for ``Yes.`` or ``No, it is not.``."""
METADATA = ("id", "datapoint_id", "position", "sentence", "caption_type", "label")
"""Columns kept on each inspect sample (its ``metadata``), to join answers back to datapoints."""


def headline_words() -> str:
    """BLA's headline metric in words: ``sentence accuracy of the ranking view``."""
    view = BENCHMARK.main_view
    return f"{BENCHMARK.headline[view].replace('_', ' ')} of the {view} view"


def hub_task(config: str) -> dict:
    """One task of ``eval.yaml``: the per-sentence config of ``config``, as inspect reads it."""
    return {
        "id": config,
        "config": sentence_config(config),
        "split": SPLIT,
        "field_spec": {
            "input": "question",
            "target": "target",
            "input_image": "image",
            "metadata": list(METADATA),
        },
        "solvers": [{"name": "generate", "args": {"temperature": 0, "max_tokens": ANSWER_TOKENS}}],
        "scorers": [{"name": "match", "args": {"location": "begin", "ignore_case": True}}],
    }


def eval_config() -> dict:
    """The eval.yaml document: every registered task, split ``test`` (the whole benchmark)."""
    titles = ", ".join(f"{t.label}: task {t.config}" for t in TASKS.values())
    return {
        "name": BENCHMARK.title,
        "description": (
            "BLA tests whether vision-and-language models understand basic constructions: "
            f"{titles}. Each datapoint is one image with two true and two false sentences made "
            "of the same words; each task asks the model, for every (image, sentence), whether "
            "the sentence is appropriate for the image (yes or no) and reports the accuracy of "
            "the answers. BLA's own metrics over the four sentences of a datapoint (the "
            f"{headline_words()}, binary and per-group accuracies) come from `inspect eval "
            "bla/<task>` (pip install bla-benchmark[engine]) or bla-eval."
        ),
        "evaluation_framework": EVALUATION_FRAMEWORK,
        "tasks": [hub_task(t.config) for t in TASKS.values()],
    }


def check_eval_file(folder: Path, configs: Iterable[str]) -> None:
    """A built folder's ``eval.yaml`` is one the Hub accepts and every task's config is built
    (``configs``: those of the manifest); a ValueError names what is wrong."""
    path = Path(folder) / EVAL_FILE
    if not path.is_file():
        return
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    framework = doc.get("evaluation_framework")
    if framework != EVALUATION_FRAMEWORK:
        raise ValueError(
            f"{path} declares evaluation_framework {framework!r}, which the Hub refuses: rebuild "
            "the folder with `python -m builders release`"
        )
    built = set(configs)
    for task in doc.get("tasks") or []:
        if task.get("config") not in built:
            raise ValueError(
                f"{path}: task {task.get('id')!r} runs on config {task.get('config')!r}, which "
                "this build lacks: rebuild the folder with `python -m builders release`"
            )


def render_eval_yaml() -> str:
    """``eval.yaml`` as text (keys in the Hub docs' order)."""
    return yaml.safe_dump(eval_config(), sort_keys=False, allow_unicode=True, width=100)
