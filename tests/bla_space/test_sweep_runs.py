"""The Space on a real sweep folder (``bla-eval sweep``: BLA and VALSE cells, four cells of each
model): every tab lists the runs of its benchmark by their key (the cell's path) and shows each
of them; labels name the display name, benchmark, protocol and control; the comparison opens on
two different runs and its header names them by display name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bla_space import analysis_tab, explore_tab, leaderboard_tab, neighbours, results_store
from bla_space.config import SpaceConfig
from bla_space.explore_data import ALL_VERBS
from bla_space.runner import EvaluationRequest

from tests.bla_eval.conftest import one_thread  # noqa: F401  (the fixture, used by pytestmark)
from tests.bla_space.sweep_folder import cell_ids, make_sweep

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.slow]


@pytest.fixture(scope="module")
def sweep(tiny_clip, tiny_model, built_dataset, tmp_path_factory) -> Path:
    return make_sweep(tiny_clip, tiny_model, built_dataset, tmp_path_factory.mktemp("space-sweep"))


def scored(run: Path) -> dict[str, list[float]]:
    """Datapoint id -> scores of a run's scores.jsonl."""
    lines = (run / "scores.jsonl").read_text().splitlines()
    return {str(r["id"]): r["scores"] for r in map(json.loads, lines)}


@pytest.mark.parametrize("holder", [False, True], ids=["sweep-folder", "folder-holding-it"])
def test_every_tab_shows_every_run_it_lists(sweep, built_dataset, holder):
    results_dir = sweep.parent if holder else sweep
    prefix = "sweep/" if holder else ""
    own = sweep.parent / "space-runs"  # the Space's own runs: none (not the working folder's)
    config = SpaceConfig(dataset=str(built_dataset), results_dir=results_dir, space_runs=own)
    runs = results_store.list_runs(results_dir)
    assert {run.name for run in runs} == {prefix + c for c in cell_ids()}
    labels = [label for label, _ in results_store.menu(runs)]
    assert len(set(labels)) == len(labels)
    shuffled = results_store.find_run(results_dir, prefix + "bla/shuffled/tiny-clip")
    assert shuffled.label.startswith("tiny-clip · bla · zero-shot, top-k, cosine, control ")

    explore = [key for _, key in explore_tab.run_choices(config)][1:]
    assert set(explore) == {prefix + c for c in cell_ids("bla")}  # BLA's runs only
    for key in explore:
        _, ids, _ = explore_tab.select_datapoints(config, "active_passive", key, ALL_VERBS, False)
        _, header, table = explore_tab.show_datapoint(config, "active_passive", key, ids, 1)
        point = header.split("**")[1]
        assert "not scored" not in header, (key, header)
        shown = [float(v) for v in table["score"]]
        assert shown == pytest.approx(scored(results_dir / key)[point], abs=1e-4), key

    valse = [key for _, key in neighbours.run_choices(config, "valse")][1:]
    assert set(valse) == {prefix + c for c in cell_ids("valse")}
    for key in valse:
        first, second, header, table = neighbours.item_view(config, "valse", key, "existence", 1)
        assert first is not None and second is None, (key, header)
        assert "not scored" not in header and table["score"].notna().all(), (key, header)
    boards = neighbours.leaderboards(config, "valse")
    shown = {s for t in boards.values() for s in t["source"]}
    assert {f"sweep cell {c}" for c in cell_ids("valse")} <= {s.split(";")[0] for s in shown}

    analysed = [key for _, key in analysis_tab.run_choices(config)]
    assert set(analysed) == set(explore)
    for key in analysed:
        report, figures, tables, _ = analysis_tab.analysis_outputs(config, key)
        assert "## Pairwise preferences" in report and figures and tables, key
        assert "**Few datapoints** (AP 3; fewer than 30 per task)" in report

    a, b = analysis_tab.compare_defaults(config)
    assert a in analysed and b in analysed and a != b
    assert a.rsplit("/", 1)[0] == b.rsplit("/", 1)[0]  # one protocol, two models
    report, frame = analysis_tab.compare_outputs(config, a, b)
    names = {results_store.find_run(results_dir, k).results["display_name"] for k in (a, b)}
    header = report.splitlines()[2]
    assert all(f"**{name}**" in header for name in names), header
    for key in (a, b):  # the model's path is no part of the header: its display name is
        assert results_store.find_run(results_dir, key).results["model"] not in header
    assert all(len(v.split(".")[-1]) == 2 for v in frame["A"] if "." in v)

    board = leaderboard_tab.leaderboard(config, "ranking")
    sources = {s.split(";")[0] for s in board["source"]}
    assert {f"sweep cell {c}" for c in cell_ids("bla")} <= sources
    assert set(board[board["source"].str.startswith("sweep")]["model"]) == {"tiny-clip", "clip2"}
    text, frame, plot = leaderboard_tab.statistics(config)
    assert "Ranked: 2 runs of **bla · zero-shot" in text and plot is not None
    for column in ("CI low", "CI high"):
        assert all(v == "no variation" or len(v.split(".")[-1]) == 2 for v in frame[column])


SCROLLED = """el => [el, ...el.querySelectorAll('*')].filter(e => {
    const style = getComputedStyle(e);
    return ['auto', 'scroll'].includes(style.overflowY) && e.scrollHeight > e.clientHeight + 2;
}).length"""
"""How many elements inside ``el`` scroll their content vertically (an inner scroll box)."""
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "sweep-tabs"


@pytest.fixture(scope="module")
def served(sweep, built_dataset):
    """The Space on the sweep folder, served in-process on a free local port."""
    import socket

    from bla_space.ui import build_demo, launch_kwargs

    config = SpaceConfig(
        dataset=str(built_dataset), results_dir=sweep, space_runs=sweep.parent / "space-runs"
    )
    demo = build_demo(config)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    kwargs = launch_kwargs(config)
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, **kwargs)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(500)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_each_tab_on_the_sweep_folder_in_a_browser(served, browser):
    """Screenshots of every tab (``test-artifacts/sweep-tabs/``): Explore and the VALSE tab pick a
    cell of their benchmark and show its scores, no image box is empty, the leaderboards have no
    inner scroll box, the comparison opens on two different runs, the rank table's numbers have
    two decimals."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(served)
    page.wait_for_selector("#run-button", timeout=60_000)
    page.get_by_role("tab", name="Explore").click()
    expect(page.locator("#explore-run input")).to_have_value(re.compile(r" · bla · "))
    expect(page.locator("#explore-sentences")).to_contain_text("ranked correctly", timeout=30_000)
    expect(page.locator("#explore-header")).not_to_contain_text("not scored")
    shot(page, "explore")
    expect(page.locator("#explore-image img")).to_have_count(1)

    page.get_by_role("tab", name="Leaderboard").click()
    stats = page.locator("#leaderboard-stats-table")
    expect(stats).to_contain_text("not separated", timeout=30_000)
    expect(page.locator("#leaderboard-stats-plot img")).to_have_count(1)
    for name in ("#leaderboard-table", "#leaderboard-stats-table"):
        assert page.locator(name).evaluate(SCROLLED) == 0, name
    numbers = re.findall(r"\d+\.\d+", stats.inner_text())
    assert numbers and all(len(n.split(".")[1]) == 2 for n in numbers), numbers
    page.locator("#compare").get_by_text("Compare two runs").click()
    run_a, run_b = (page.locator(f"#compare-{s} input").input_value() for s in "ab")
    assert run_a and run_b and run_a != run_b
    shot(page, "leaderboard")

    page.get_by_role("tab", name="Analysis").click()
    expect(page.locator("#analysis-run input")).to_have_value(re.compile(r" · bla · "))
    page.click("#analysis-button")
    expect(page.locator("#analysis-report")).to_contain_text("Few datapoints", timeout=60_000)
    shot(page, "analysis")

    page.get_by_role("tab", name="VALSE · VL-CheckList · Winoground").click()
    expect(page.locator("#neighbours-run input")).to_have_value(re.compile(r" · valse · "))
    expect(page.locator("#neighbours-table")).to_contain_text("score", timeout=30_000)
    page.wait_for_timeout(1500)
    shot(page, "neighbours")
    assert "not scored" not in page.locator("body").inner_text()
    expect(page.locator("#neighbours-image-0 img")).to_have_count(1, timeout=30_000)
    assert not page.locator("#neighbours-image-1").is_visible()
    assert page.locator("#neighbours-board-0").evaluate(SCROLLED) == 0
    page.close()


def test_the_spaces_own_run_leaves_the_sweep_folder_to_the_sweep(
    tiny_clip, tiny_llava, built_dataset, tmp_path, monkeypatch, capsys
):
    """The Space started on a sweep folder (``BLA_RESULTS_DIR`` the sweep's, as docs/sweeps.md
    says, nothing else set) runs an evaluation through the page's own handler: the run goes
    to the Space's own folder (``runs/space`` where it started), not into the sweep, so the
    sweep's rerun on that folder still runs; the Leaderboard ranks the cells of both kinds (a
    dual encoder and a generative model) with the Space's run on the same datapoints."""
    from bla_eval.cli import main
    from bla_space import evaluate_tab

    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"""
models:
  - {{model: {tiny_clip}, name: tiny-clip}}
  - {{model: {tiny_llava}, name: llava}}
benchmarks:
  - {{benchmark: bla, data: {built_dataset}, tasks: [ap]}}
protocols:
  - zero-shot
  - {{name: shuffled, control: shuffled}}
options: {{limit: 3, device: cpu}}
""",
        encoding="utf-8",
    )
    sweep = tmp_path / "sweep"
    argv = ["sweep", str(plan), "--output", str(sweep), "--quiet", "--resamples", "50"]
    assert main(argv) == 0
    before = sorted(p.relative_to(sweep) for p in sweep.rglob("*"))
    monkeypatch.chdir(tmp_path)
    env = {"BLA_RESULTS_DIR": str(sweep), "BLA_DATASET": str(built_dataset)}
    config = SpaceConfig.from_env({**env, "BLA_ALLOW_LOCAL_MODELS": "1", "BLA_DEVICE": "cpu"})
    request = EvaluationRequest(str(tiny_clip), "auto", ["active_passive"], 3)
    outputs = evaluate_tab.evaluate_in_page(config, request, "ranking", lambda *a, **k: None)
    key = outputs[-2]
    assert (tmp_path / "runs" / "space" / key / "results.json").is_file()
    assert sorted(p.relative_to(sweep) for p in sweep.rglob("*")) == before
    capsys.readouterr()
    assert main(argv) == 0
    assert "0 run now, 4 finished before, 0 failed" in capsys.readouterr().out
    assert key in {run.name for run in results_store.list_runs(config.folders)}
    text, frame, plot = leaderboard_tab.statistics(config)
    assert "Ranked: 3 runs of **bla · zero-shot**" in text and plot is not None
    assert {"tiny-clip", "llava"} <= set(frame["model"]), frame
