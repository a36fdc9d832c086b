"""One evaluation from the Space: validate, size-check, detect the kind, score on the GPU, publish.

No Gradio here: the Evaluate tab calls ``run_evaluation`` and turns its errors into page messages.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bla_eval.config import MAX_LIMIT, RunConfig
from bla_eval.outputs import staged
from bla_eval.protocols import DEFAULT_PROTOCOL, get_protocol
from bla_eval.scorers import KIND_INFO, detect_kind

from . import results_store
from .config import SpaceConfig
from .explore_data import load_task
from .gpu import evaluate_on_gpu
from .safety import check_model_size, validate_model_id

log = logging.getLogger(__name__)

AUTO = "auto"


def space_kinds() -> list[str]:
    """The kinds the Space's GPU runs: every registered kind except those whose models run
    behind an API endpoint (those run on Inference Providers with the signed-in visitor's
    token: ``providers.py``) and those that read region features (scored with ``bla-eval
    --regions``: :data:`CLI_ONLY_NOTE`)."""
    return [k for k, c in KIND_INFO.items() if not c.remote and not c.reads_regions]


CLI_ONLY_NOTE = (
    "LXMERT and VOLTA's ViLBERT / LXMERT (kind region-itm) read region features: score them with "
    "`bla-eval --model MODEL --regions FEATURES.tsv`; their runs are listed here."
)
"""What the Evaluate tab says of the kinds it lists but does not score."""


def kind_menu() -> list[tuple[str, str]]:
    """The kind menu: auto-detect, then every kind the Space offers with its help line."""
    return [("auto-detect", AUTO)] + [(f"{k}: {KIND_INFO[k].help}", k) for k in space_kinds()]


def kind_examples(max_params: float | None = None) -> list[list[str]]:
    """Example model ids of every offered kind (its main example, then models of its other
    architecture families), the kind filled in with each, leaving out an example known to be
    larger than ``max_params``."""
    rows = []
    for kind in space_kinds():
        info = KIND_INFO[kind]
        named = [(info.example, info.example_params)] if info.example else []
        for model, params in [*named, *info.more_examples]:
            if max_params is None or params is None or params <= max_params:
                rows.append([model, kind])
    return rows


def kind_help(kind: str) -> str:
    """The help line of a registered kind ('' for an unknown one)."""
    cls = KIND_INFO.get(kind)
    return cls.help if cls is not None else ""


def preload_engine() -> None:
    """Import what kind detection needs once, in the main thread.

    ``transformers`` imports lazily; two Gradio worker threads importing it at the same moment
    (a kind detection and a run) can fail with "cannot import name ...".
    """
    from transformers import AutoConfig  # noqa: F401
    from transformers.models.auto import modeling_auto  # noqa: F401


def resolve_model(config: SpaceConfig, text: str, kind_choice: str | None) -> tuple[str, str, int]:
    """The validated model id, its kind (detected unless chosen) and its parameter count.

    Raises ``ModelRejected`` or ``ValueError`` with a message that names the model.
    """
    model = validate_model_id(text, allow_local=config.allow_local_models)
    n_params = check_model_size(model, config.max_params)
    if kind_choice and kind_choice != AUTO:
        if kind_choice not in space_kinds():
            offered = ", ".join(space_kinds())
            raise ValueError(f"unknown model kind {kind_choice!r}: use one of {offered}")
        return model, kind_choice, n_params
    kind = detect_kind(model, trust_remote_code=False)
    if KIND_INFO[kind].reads_regions:
        raise ValueError(f"{model} is of kind {kind}. {CLI_ONLY_NOTE}")
    return model, kind, n_params


def datapoint_limit(value: Any) -> int | None:
    """The page's "Datapoints per task" (0 or empty: all) as a run's ``limit``: a whole number
    from 0 to ``MAX_LIMIT`` (a slider's float of one included); anything else (negative, NaN,
    a fraction, text) is a ValueError that says so, as the run itself refuses it."""
    if value is None or value == "":
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LIMIT:
        raise ValueError(
            f"Datapoints per task must be a whole number from 0 (all) to {MAX_LIMIT:,}, "
            f"got {repr(value)[:40]}"
        )
    return value or None


def count_datapoints(config: SpaceConfig, tasks: Sequence[str], limit: int | None) -> int:
    """How many datapoints a run of ``tasks`` with ``limit`` will score."""
    sizes = [len(load_task(config.dataset, task)) for task in tasks]
    return sum(sizes if not limit else [min(limit, s) for s in sizes])


@dataclass(frozen=True)
class EvaluationRequest:
    """A run the Evaluate tab asks for, as the page gives it: the model as typed, the kind menu's
    choice (:data:`AUTO`: detected), the tasks, the datapoints per task (0 or empty: all; checked
    by :func:`datapoint_limit` when the run starts), the protocol (in-context ones score the
    learning test splits) and what a generative model is asked (``--score``)."""

    model: str
    kind: str | None = AUTO
    tasks: Sequence[str] = ()
    limit: Any = None
    protocol: str = DEFAULT_PROTOCOL
    score: str = "yes-no"

    def run_config(self, config: SpaceConfig, output: Path) -> RunConfig:
        """The run of this request (its model and kind resolved, its tasks those the protocol
        runs, its limit checked) on the Space's dataset, device and batch size, into ``output``."""
        return RunConfig(
            self.model,
            output,
            data=config.dataset,
            tasks=tuple(self.tasks),
            limit=self.limit or None,
            kind=self.kind,
            batch_size=config.batch_size,
            images_per_batch=config.batch_size,
            device=config.device,
            trust_remote_code=False,
            protocol=self.protocol,
            score=self.score,
        )


def run_evaluation(
    config: SpaceConfig, request: EvaluationRequest, progress: Any = None
) -> results_store.Run:
    """Score ``request``'s model (resolved: :func:`resolve_model`) on its tasks and publish the
    run folder (results.json + scores.jsonl).

    The run is written into a hidden staging folder and renamed when complete, so a crash leaves
    no half-written run in the results folder.
    """
    limit = datapoint_limit(request.limit)
    if not request.tasks:
        raise ValueError("Select at least one task.")
    tasks = get_protocol(request.protocol).run_tasks("bla", request.tasks, explicit=False)
    if not tasks:  # icl-dd with active-passive only
        raise ValueError("ICL DD runs on coordination and relative clauses only: select one.")
    request = replace(request, tasks=tuple(tasks), limit=limit)
    n_points = count_datapoints(config, tasks, limit or None)
    target = results_store.new_run_path(config.runs_dir, request.model)
    with staged(target) as staging:
        results = evaluate_on_gpu(request.run_config(config, staging), n_points, progress)
    return publish(config, results_store.Run(target, results))


def publish(config: SpaceConfig, run: results_store.Run) -> results_store.Run:
    """Push a finished run to ``BLA_RESULTS_REPO`` when set (best effort: the run is kept
    locally whatever happens)."""
    if config.results_repo:
        try:
            results_store.push_to_hub(config.results_repo, run.path)
        except Exception as err:  # the run is kept locally; syncing is best effort
            log.warning("could not push %s to %s: %s", run.path.name, config.results_repo, err)
    return run
