"""The Leaderboard tab: published reference rows plus every run finished in this Space."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from . import analysis_tab, results_store, views
from .config import SpaceConfig
from .evaluate_tab import VIEW_CHOICES

INTRO = (
    "Published numbers (paper Table 2, thesis Tables 6.2-6.3, chance) and every run finished in "
    "this Space: one row per model and protocol, the most complete run kept. Click a column "
    "header to sort. Quick runs score only the first N datapoints of each task (see "
    "*datapoints*); paper rows score all of them. A run whose model and protocol are those of a "
    "published row, with every number of the row within its tolerance, says *reproduces ROW* in "
    "its source (`bla-eval reproduce ROW --run DIR` prints the comparison)."
)


@dataclass
class LeaderboardTab:
    """What other tabs wire to: the refresh handler and its inputs/outputs."""

    refresh: object
    view: gr.Radio
    table: gr.Dataframe


def build(config: SpaceConfig) -> LeaderboardTab:
    """Lay out the tab and its events (call inside ``gr.Blocks``)."""
    gr.Markdown(INTRO)
    with gr.Row():
        view = gr.Radio(
            VIEW_CHOICES, value="ranking", label="Metrics", scale=4, elem_id="leaderboard-view"
        )
        button = gr.Button("Refresh", size="sm", scale=1)
    table = gr.Dataframe(
        leaderboard(config, "ranking"),
        interactive=False,
        wrap=True,
        column_widths=views.column_widths(views.leaderboard_columns()),
        label="Leaderboard (%)",
        elem_id="leaderboard-table",
        show_search="search",
    )

    def refresh(view_choice: str):
        """The leaderboard table in ``view_choice`` (ranking or binary), as percentages."""
        return leaderboard(config, view_choice)

    view.change(refresh, view, table, api_name=False)
    button.click(refresh, view, table, api_name="leaderboard")
    analysis_tab.build_compare(config)
    return LeaderboardTab(refresh, view, table)


def leaderboard(config: SpaceConfig, view: str):
    """The leaderboard table of ``view`` from the reference rows and the results folder."""
    runs = [run.results for run in results_store.list_runs(config.results_dir)]
    return views.leaderboard_table(runs, view)
