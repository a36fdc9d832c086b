"""The Space's Analysis tab and two-run comparison, on the recorded real SmolLM2 run."""

from __future__ import annotations

import shutil
from pathlib import Path

import gradio as gr
import pytest
from bla_space import analysis_tab
from bla_space.config import SpaceConfig

RUN = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "runs" / "smollm2"


@pytest.fixture(scope="module")
def space_config(built_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> SpaceConfig:
    results = tmp_path_factory.mktemp("space_runs")
    for name in ("smollm2-a", "smollm2-b"):
        shutil.copytree(RUN, results / name)
    return SpaceConfig(dataset=str(built_dataset), results_dir=results)


def test_analysis_view_gives_the_cli_tables(space_config: SpaceConfig) -> None:
    report, figures, tables, first = analysis_tab.analysis_outputs(space_config, "smollm2-a")
    assert "## Pairwise preferences" in report and "](" not in report.split("## Regression")[0]
    assert {caption for _, caption in figures} >= {"pairwise_active_passive", "verbs"}
    pairwise = tables["pairwise_active_passive"].set_index("pair (X>Y)")
    assert pairwise.loc["TP>FA"].iloc[0] > 99
    assert first is not None and "regression_data_active_passive" not in tables
    with pytest.raises(gr.Error, match="no finished BLA run"):
        analysis_tab.analysis_outputs(space_config, "missing")


def test_comparison_of_two_runs(space_config: SpaceConfig) -> None:
    report, frame = analysis_tab.compare_outputs(space_config, "smollm2-a", "smollm2-b")
    assert "Exact McNemar" in report
    # two identical runs: every difference is 0 and no resample varies, so no p-value is given
    assert (frame["A-B"] == "0.00").all() and (frame["p (bootstrap)"] == "").all()
    assert "no variation" in report


def test_the_views_lay_out(space_config: SpaceConfig) -> None:
    with gr.Blocks() as demo:
        tab = analysis_tab.build(space_config)
        analysis_tab.build_compare(space_config)
    assert {name for _, name in tab.run.choices} == {"smollm2-a", "smollm2-b"}
    assert demo is not None


def test_analyse_without_a_run_says_so_once(space_config: SpaceConfig, tmp_path: Path) -> None:
    report, figures, tables, first = analysis_tab.analysis_outputs(space_config, None)
    assert report == analysis_tab.NO_RUN_MESSAGE and figures == [] and tables == {}
    assert list(first.columns) == analysis_tab.TABLE_HEADERS
    empty = SpaceConfig(dataset=space_config.dataset, results_dir=tmp_path)
    assert analysis_tab.analysis_outputs(empty, "")[0] == analysis_tab.NO_RUNS_MESSAGE


def test_leaderboard_statistics_of_the_space_runs(space_config: SpaceConfig) -> None:
    from bla_space import leaderboard_tab

    text, frame, plot = leaderboard_tab.statistics(space_config)
    assert list(frame.columns) == leaderboard_tab.STATS_HEADERS
    assert len(frame) == 2 * 3  # two identical runs, three tasks: tied, both first
    assert (frame["rank"] == "1").all() and (frame["not separated"] == "a").all()
    assert "smallest detectable difference" in text and plot.size[0] > 100
    text, frame, _ = leaderboard_tab.statistics(space_config, "set_accuracy")
    assert list(frame.columns) == leaderboard_tab.table_columns("set_accuracy")
    assert frame.columns[2] == "set accuracy" and "--metric set_accuracy" in text
    assert len(frame) == 2 * 3 and (frame["not separated"] == "a").all()
