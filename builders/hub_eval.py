"""``eval.yaml``: the dataset repo declared as a Hub benchmark, one task per construction.

The Hub reads ``eval.yaml`` at the root of a dataset repo (docs: hub/eval-results) and accepts
only an ``evaluation_framework`` of its list (huggingface.js, ``packages/tasks/src/eval.ts``,
``EVALUATION_FRAMEWORKS``); ``inspect-ai`` is the one whose runs in HF Jobs the Hub marks as
verified. Each task is one that stock ``inspect eval hf/<dataset>`` runs (inspect-ai's
``_eval/task/hf.py`` reads it): the task's per-sentence config (``builders/sentences.py``), a
``field_spec`` naming its columns (``question`` as input, ``target`` yes/no, ``image`` a data
URI as ``input_image``), greedy generation of a short answer, and inspect's built-in ``match``
scorer at the beginning of the answer (per-sentence accuracy, a proportion in [0, 1]). Model
repos then report scores in ``.eval_results/*.yaml`` entries whose ``task_id`` is one of these
ids; ``bla-eval export`` writes under each id exactly that metric on that scale
(``bla_eval.harnesses.answer_match``), from a bla-eval run's generated answers or an inspect
log. BLA's own metrics over the four sentences of a datapoint are computed by the inspect tasks
shipped with the engine (``inspect eval bla_eval/<task>``, ``bla_eval.harnesses.inspect_tasks``)
and by ``bla-eval``; the export puts its headline in the notes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import yaml
from bla_eval.benchmarks.bla import BENCHMARK

from bla_metric.schema import sentence_config
from bla_metric.tasks import TASKS

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
            "the answers per sentence as a proportion between 0 and 1 (inspect's match scorer; "
            "every value under a task id is this metric on this scale). BLA's own metrics over "
            f"the four sentences of a datapoint (the {headline_words()}, binary and per-group "
            "accuracies) come from `inspect eval bla_eval/<task>` (pip install "
            "bla-benchmark[engine]) or bla-eval, and appear in a result's notes."
        ),
        "evaluation_framework": EVALUATION_FRAMEWORK,
        "tasks": [hub_task(t.config) for t in TASKS.values()],
    }


def check_eval_file(folder: Path, configs: Iterable[str]) -> None:
    """A built folder's ``eval.yaml`` is one the Hub accepts and every task's config is built
    (``configs``: those of the manifest); a ValueError names what is wrong in one line."""
    path = Path(folder) / EVAL_FILE
    if not path.is_file():
        return
    rebuild = "rebuild the folder with `python -m builders release`"
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as err:
        reason = " ".join(str(err).split())[:120]
        raise ValueError(f"{path} is not YAML ({reason}): {rebuild}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path} is a YAML {type(doc).__name__}, not a mapping: {rebuild}")
    framework = doc.get("evaluation_framework")
    if framework != EVALUATION_FRAMEWORK:
        raise ValueError(
            f"{path} declares evaluation_framework {framework!r}, which the Hub refuses: {rebuild}"
        )
    tasks = doc.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise ValueError(f"{path}: 'tasks' must be a non-empty list of tasks: {rebuild}")
    built = set(configs)
    for k, task in enumerate(tasks):
        if not isinstance(task, dict) or not isinstance(task.get("id"), str):
            raise ValueError(f"{path}: task {k + 1} is not a mapping with an 'id': {rebuild}")
        config = task.get("config")
        if not isinstance(config, str) or config not in built:
            raise ValueError(
                f"{path}: task {task['id']!r} runs on config {config!r}, which this build "
                f"lacks: {rebuild}"
            )


def render_eval_yaml() -> str:
    """``eval.yaml`` as text (keys in the Hub docs' order)."""
    return yaml.safe_dump(eval_config(), sort_keys=False, allow_unicode=True, width=100)
