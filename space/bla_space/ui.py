"""The whole page: header, the Evaluate / Explore / Leaderboard tabs, and how they talk."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
from bla_eval.hub_auth import require_token

from . import analysis_tab, evaluate_tab, explore_tab, leaderboard_tab, neighbours, results_store
from .config import RUNS_VARIABLE, SpaceConfig
from .runner import preload_engine

log = logging.getLogger(__name__)

HEADER = """
# BLA: does your vision-and-language model understand *who does what*?
**BLA** (Basic Language Abilities, [Chen, Fernández & Pezzelle, EMNLP 2023](https://aclanthology.org/2023.emnlp-main.356/))
pairs each image with four sentences made of the same words: two are true, two are false.
Three constructions: **active-passive** (*the woman feeds the man* / *the man is fed by the
woman*), **coordination** and **relative clauses**. People get about 90% right; the models in
the paper stay near chance.

Paste a model id, press **Evaluate**, and compare it with chance, humans and the paper's models.
"""

CSS = """
#run-button {min-height: 3rem; font-size: 1.05rem;}
#run-status h3 {margin-bottom: 0.2rem;}
footer {display: none !important;}
"""


def build_demo(config: SpaceConfig | None = None) -> gr.Blocks:
    """The Space's Blocks, queued so that one evaluation runs at a time."""
    config = config or SpaceConfig.from_env()
    if config.results_repo:  # every run is pushed there: no token, no start
        require_token(f"{results_store.RESULTS_REPO_VARIABLE}={config.results_repo}")
    if config.runs_dir != config.results_dir:  # a ValueError for a folder another owns
        log.info("runs of this Space go to %s (%s)", config.runs_dir, RUNS_VARIABLE)
    preload_engine()
    if config.results_repo:
        try:
            results_store.pull_from_hub(config.results_repo, config.runs_dir)
        except Exception as err:  # the Space still serves without the synced runs
            log.warning("could not pull runs from %s: %s", config.results_repo, err)
    with gr.Blocks(title="BLA benchmark") as demo:
        gr.Markdown(HEADER, elem_id="header")
        gr.Markdown(dataset_line(config.dataset), elem_id="dataset-line")
        with gr.Tabs():
            with gr.Tab("Evaluate", id="evaluate"):
                evaluate = evaluate_tab.build(config)
            with gr.Tab("Explore", id="explore"):
                explore = explore_tab.build(config, demo)
            with gr.Tab("Leaderboard", id="leaderboard") as board_tab:
                board = leaderboard_tab.build(config)
            with gr.Tab("Analysis", id="analysis"):
                analysis = analysis_tab.build(config)
            with gr.Tab("VALSE · VL-CheckList · Winoground", id="neighbours"):
                neighbours.build(config, demo)
        demo.load(analysis.select_run, None, analysis.run, api_name=False)
        for run_event in (evaluate.run_event, evaluate.provider_event):  # the new run picked
            finished = run_event.success(
                explore.select_run, evaluate.run_name, explore.run, api_name=False
            )
            finished.then(analysis.select_run, evaluate.run_name, analysis.run, api_name=False)
            finished.then(board.refresh, board.inputs, board.table, api_name=False)
        board_tab.select(board.refresh, board.inputs, board.table, api_name=False).then(
            board.refresh_statistics,
            board.stats_inputs,
            board.statistics,
            api_name=False,
        )
    guard_handlers(demo)
    demo.queue(default_concurrency_limit=1)
    return demo


def guard_handlers(demo: gr.Blocks) -> None:
    """Every handler of the page answers with a message: an exception other than ``gr.Error``
    (a value an API caller sent that no menu offers, a bug) is logged and shown as one
    ``gr.Error`` line, with every known secret masked, and the page keeps serving. Gradio's
    own functions (examples) are left as they are."""
    for block_fn in demo.fns.values():
        fn = block_fn.fn
        if fn is None or str(getattr(fn, "__module__", "")).startswith("gradio"):
            continue
        block_fn.fn = answered(fn)


def answered(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` raising nothing but ``gr.Error`` (:func:`guard_handlers`)."""
    from bla_eval.redact import shown

    @functools.wraps(fn)
    def handler(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as err:  # the page says it in one line and keeps serving
            log.exception("%s failed", getattr(fn, "__qualname__", fn))
            text = " ".join(shown(str(err)).split())[:300] or type(err).__name__
            raise gr.Error(f"Could not do that: {text}", title="Not possible") from None

    return handler


def dataset_line(dataset: str) -> str:
    """Where the datapoints come from: a link for a Hub id, the folder for a local build."""
    if Path(dataset).is_dir():
        return f"Dataset: local build `{dataset}`"
    return f"Dataset: [{dataset}](https://huggingface.co/datasets/{dataset}) on the Hub"


def launch_kwargs(config: SpaceConfig) -> dict[str, Any]:
    """Keyword arguments of ``demo.launch``: theme, CSS, and the folders of runs as file
    paths (the Space's own runs folder made)."""
    config.runs_dir.mkdir(parents=True, exist_ok=True)
    return {
        "theme": gr.themes.Soft(primary_hue="indigo", secondary_hue="sky"),
        "css": CSS,
        "allowed_paths": [str(folder.resolve()) for folder in config.folders],
    }
