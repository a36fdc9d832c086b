"""The Analysis tab: the thesis' chapter-7 analyses of a finished run, and the two-run comparison
shown under the Leaderboard. Thin over ``bla_eval.analysis`` (the same tables and figures as
``bla-eval analyze`` / ``bla-eval compare``)."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

import gradio as gr

from . import results_store, views
from .config import SpaceConfig

INTRO = (
    "Why does a model fail BLA? Pick a finished run: pairwise preferences (thesis §7.1), AP per "
    "verb (§7.1.3), noun order (§7.1.2), a regression of the scores on sentence properties (§7.2) "
    "and the extreme cases (§7.3), beside the thesis' CLIP, ViLBERT, LXMERT and GPT-2 rows. "
    "The same report as `bla-eval analyze RUN_DIR`."
)
COMPARE_INTRO = (
    "Is a difference real? Two runs on the same datapoints: A - B per task and metric with a "
    "paired bootstrap 95% interval and p-value (2,000 resamples, seed 0) and an exact McNemar "
    "test on set accuracy. The same as `bla-eval compare RUN_A RUN_B`."
)
NO_RUN_MESSAGE = "Pick a finished run from the list above, then press **Analyse**."
NO_RUNS_MESSAGE = "No run has finished in this Space yet: evaluate a model first, then analyse it."
TABLE_HEADERS = ["pair (X>Y)", "this run", "CLIP", "ViLBERT", "LXMERT", "GPT-2", "chance"]
"""Headers of the table shown first (pairwise preferences), before a run is analysed."""
COMPARE_HEADERS = ["task", "view", "metric", "A", "B", "A-B", "CI low", "CI high", "p (bootstrap)"]
_IMAGE_LINE = re.compile(r"^!\[[^\]]*\]\([^)]*\)\s*$", re.MULTILINE)


def run_choices(config: SpaceConfig) -> list[tuple[str, str]]:
    """(label, key) of every finished BLA run (the analyses and the paired comparison are
    BLA's), newest first."""
    return results_store.menu(results_store.list_runs(config.folders, "bla"))


def compare_defaults(config: SpaceConfig) -> tuple[str | None, str | None]:
    """Runs A and B the comparison opens on: the newest BLA run and the newest other one that
    scored as many datapoints of each task under the same condition (protocol, control and
    prompts: ``views.condition_label``), else the next newest; None where there is none."""
    runs = results_store.list_runs(config.folders, "bla")
    if not runs:
        return None, None

    def like(run: results_store.Run) -> tuple:
        sizes = {t: m.get("n") for t, m in run.results.get("tasks", {}).items()}
        return views.condition_label(run.results), sizes

    others = runs[1:]
    same = [r for r in others if like(r) == like(runs[0])]
    partner = (same or others or [None])[0]
    return runs[0].name, partner.name if partner else None


def analysis_outputs(config: SpaceConfig, name: str | None) -> tuple[str, list, dict, Any]:
    """(report Markdown without image lines, [(figure, caption)], {table name: frame}, first
    table) for the run folder ``name``."""
    import pandas as pd
    from bla_eval.analysis.analyze import analyze_run
    from bla_eval.analysis.rundata import attach_rows, load_run
    from PIL import Image

    if not name:  # one message in the page, not an error on every output
        text = NO_RUN_MESSAGE if run_choices(config) else NO_RUNS_MESSAGE
        return text, [], {}, pd.DataFrame(columns=TABLE_HEADERS)
    found = results_store.find_run(config.folders, name, "bla")
    if found is None:
        raise gr.Error(f"no finished BLA run named {name!r}: pick one from the list")
    try:
        run = load_run(found.path)
        try:  # the Space's runs score the Space's dataset; else the one the run names
            attach_rows(run, config.dataset)
        except (FileNotFoundError, ValueError, ConnectionError):
            attach_rows(run, run.results.get("dataset") or config.dataset)
        analysis = analyze_run(run, examples=0)
    except (ValueError, FileNotFoundError, ConnectionError) as err:
        raise gr.Error(str(err)) from None
    report = _IMAGE_LINE.sub("", "\n\n".join(analysis.sections))
    figures = [(Image.open(io.BytesIO(png)), name) for name, png in analysis.figures.items()]
    tables = {
        name: frame.reset_index().round(2)  # as `bla-eval analyze` prints them
        for name, frame in analysis.tables.items()
        if not name.startswith("regression_data")
    }
    first = next(iter(tables.values()), None)
    return report, figures, tables, first


@dataclass
class AnalysisTab:
    run: gr.Dropdown
    refresh: object
    select_run: object
    """``select_run(key)``: the run menu with the run ``key`` picked (a run just made; none:
    the newest)."""


def build(config: SpaceConfig) -> AnalysisTab:
    """Lay out the Analysis tab (call inside ``gr.Blocks``)."""
    gr.Markdown(INTRO)
    with gr.Row():
        choices = run_choices(config)
        run = gr.Dropdown(
            choices,
            value=choices[0][1] if choices else None,
            label="Finished run",
            scale=4,
            elem_id="analysis-run",
        )
        button = gr.Button("Analyse", variant="primary", scale=1, elem_id="analysis-button")
    figures = gr.Gallery(
        label="Figures",
        columns=3,
        height=320,
        object_fit="contain",
        visible=False,
        elem_id="analysis-figures",
    )
    with gr.Row():
        table_name = gr.Dropdown([], label="Table (CSV in bla-eval analyze)", scale=1)
    table = gr.Dataframe(
        headers=TABLE_HEADERS,
        interactive=False,
        wrap=True,
        label="Table (%)",
        elem_id="analysis-table",
    )
    report = gr.Markdown(elem_id="analysis-report")
    tables_state = gr.State({})

    def analyse(name: str | None):
        text, pictures, tables, first = analysis_outputs(config, name)
        names = list(tables)
        return (
            text,
            gr.Gallery(pictures, visible=bool(pictures)),
            tables,
            gr.Dropdown(choices=names, value=names[0] if names else None),
            first,
        )

    def pick(name: str | None, tables: dict):
        return tables.get(name) if name else None

    def refresh():
        return gr.Dropdown(choices=run_choices(config))

    def select_run(key: str = ""):
        """The menu with the run ``key`` picked (none given: the newest run)."""
        choices = run_choices(config)
        keys = [k for _, k in choices]
        if not key:
            return gr.Dropdown(choices=choices, value=keys[0] if keys else None)
        return gr.Dropdown(choices=choices, value=key if key in keys else gr.skip())

    button.click(
        analyse, run, [report, figures, tables_state, table_name, table], api_name="analyse"
    )
    table_name.change(pick, [table_name, tables_state], table, api_name=False)
    run.focus(refresh, None, run, api_name=False)
    return AnalysisTab(run, refresh, select_run)


def compare_outputs(config: SpaceConfig, name_a: str | None, name_b: str | None):
    """(Markdown report, table) of the paired comparison of two run folders."""
    from bla_eval.analysis.compare import compare_runs, comparison_table, markdown_report
    from bla_eval.analysis.rundata import load_run

    runs = [results_store.find_run(config.folders, n, "bla") for n in (name_a, name_b)]
    if any(r is None for r in runs):
        raise gr.Error("pick two finished BLA runs")
    if runs[0].path == runs[1].path:
        raise gr.Error("pick two different runs: A and B are the same run")
    try:
        a, b = (load_run(r.path) for r in runs)
        result = compare_runs(a, b)
    except (ValueError, FileNotFoundError) as err:
        raise gr.Error(str(err)) from None
    return markdown_report(a, b, result, 2000, 0), views.rendered(comparison_table(result))


def build_compare(config: SpaceConfig) -> None:
    """The two-run comparison (call inside the Leaderboard tab)."""
    with gr.Accordion("Compare two runs", open=False, elem_id="compare"):
        gr.Markdown(COMPARE_INTRO)
        a, b = compare_defaults(config)
        with gr.Row():
            run_a = gr.Dropdown(run_choices(config), value=a, label="Run A", elem_id="compare-a")
            run_b = gr.Dropdown(run_choices(config), value=b, label="Run B", elem_id="compare-b")
            button = gr.Button("Compare", scale=0, elem_id="compare-button")
        report = gr.Markdown(elem_id="compare-report")
        table = gr.Dataframe(
            headers=COMPARE_HEADERS,
            interactive=False,
            wrap=True,
            label="A vs B (%)",
            max_height=views.WHOLE_TABLE,
        )

        def refresh():
            return gr.Dropdown(choices=run_choices(config))

        run_a.focus(refresh, None, run_a, api_name=False)
        run_b.focus(refresh, None, run_b, api_name=False)
        button.click(
            lambda a, b: compare_outputs(config, a, b),
            [run_a, run_b],
            [report, table],
            api_name="compare",
        )
