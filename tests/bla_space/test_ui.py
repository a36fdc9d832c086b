"""The Space end to end: headless Chromium drives a real run of a tiny random-weight CLIP, and
gradio_client gets the same numbers as the ``bla-eval`` CLI.

The screenshot of the page after the run is kept at ``test-artifacts/space.png``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

REPO_ROOT = Path(__file__).resolve().parents[2]

from bla_space.config import SpaceConfig  # noqa: E402
from bla_space.ui import build_demo, launch_kwargs  # noqa: E402

ARTIFACTS = REPO_ROOT / "test-artifacts"
SCREENSHOT = ARTIFACTS / "space.png"
TASKS = ["active_passive", "coordination", "relative_clause"]
LIMIT = 10  # enough datapoints that the Explore filter has set errors to show
MAX_PARAMS = 1e6


@pytest.fixture(scope="module")
def space(built_dataset, tmp_path_factory):
    """The app served in-process on a free local port: (url, config)."""
    config = SpaceConfig(
        dataset=str(built_dataset),
        results_dir=tmp_path_factory.mktemp("space-runs"),
        allow_local_models=True,
        max_params=MAX_PARAMS,
        default_limit=LIMIT,
    )
    demo = build_demo(config)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    demo.launch(
        prevent_thread_lock=True,
        server_name="127.0.0.1",
        server_port=port,
        quiet=True,
        **launch_kwargs(config),
    )
    yield f"http://127.0.0.1:{port}/", config
    demo.close()


def _run_in_page(page, model: str) -> None:
    page.fill("#model-id textarea", model)
    page.click("#run-button")


def _task_metrics(results: dict) -> dict:
    return {
        task: {k: v for k, v in m.items() if k in ("n", "ranking", "binary", "pairwise")}
        for task, m in results["tasks"].items()
    }


@pytest.mark.slow
def test_browser_runs_a_tiny_clip_and_shows_table_plots_and_examples(space, browser, tiny_clip):
    from playwright.sync_api import expect

    url, config = space
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.wait_for_selector("#run-button", timeout=60_000)
    assert page.locator("#limit input[type=number]").input_value() == str(LIMIT)

    _run_in_page(page, "not a model!!")  # a bad id: a readable error, and the app keeps serving
    page.get_by_text("is not a valid Hub model id").first.wait_for(timeout=30_000)

    _run_in_page(page, str(tiny_clip))
    status = page.locator("#run-status h3")
    status.wait_for(timeout=120_000)
    assert status.inner_text() == tiny_clip.name  # the folder, no path of the machine
    expect(page.locator("#detected-kind")).to_contain_text("Detected kind: contrastive")
    expect(page.locator("#run-status")).to_contain_text("Kind contrastive (auto-detected)")
    run = next(p for p in config.results_dir.iterdir() if not p.name.startswith("."))
    results = json.loads((run / "results.json").read_text())
    assert results["kind"] == "contrastive" and results["tasks"]["active_passive"]["n"] == LIMIT

    first_row = page.locator("#metrics-table [role=row]").nth(1).inner_text()  # 0 = header
    ap = results["tasks"]["active_passive"]["ranking"]
    for value in (ap["sentence_accuracy"], ap["set_accuracy"], ap["set_error"]):
        assert f"{round(100 * value, 2):g}" in first_row.split()
    table_text = page.locator("#metrics-table").inner_text()
    assert "Chance" in table_text and "thesis Table 6.3" in table_text
    for task in TASKS:
        plot = page.locator(f"#plot-{task}")
        plot.locator("canvas, svg").first.wait_for(timeout=30_000)
        assert "this run" in plot.inner_text()
    href = page.locator("#results-file a").first.get_attribute("href")
    assert href.endswith("results.json")
    assert page.request.get(href if "://" in href else url + href.lstrip("/")).json() == results
    for close in page.locator(".toast-close").all():  # the error of the bad id, still shown
        close.click()
    page.screenshot(path=str(_artifact(SCREENSHOT)), full_page=True)

    page.get_by_role("tab", name="Explore").click()
    header = page.locator("#explore-header")
    page.wait_for_function(
        "() => document.querySelector('#explore-sentences').innerText.includes('yes') ||"
        " document.querySelector('#explore-sentences').innerText.includes('no')",
        timeout=30_000,
    )
    first_id = json.loads((run / "scores.jsonl").read_text().splitlines()[0])["id"]
    assert header.inner_text().startswith(first_id)
    assert page.locator("#explore-image img").count() == 1
    sentences = page.locator("#explore-sentences").inner_text()
    assert "ranked correctly" in sentences and "true" in sentences and "false" in sentences

    errors = {t: round(m["ranking"]["set_error"] * m["n"]) for t, m in results["tasks"].items()}
    task = max(errors, key=errors.get)  # the task with most set errors, to filter to them
    page.locator("#explore-task label").nth(TASKS.index(task)).click()
    page.locator("#explore-failures input").check()
    assert errors[task] > 0, f"the run has no set error to filter to: {errors}"
    page.get_by_text(f"Datapoint (of {errors[task]})").wait_for(timeout=30_000)
    expect(header).to_contain_text("set error")
    page.screenshot(path=str(_artifact(ARTIFACTS / "space-explore.png")), full_page=True)

    page.get_by_role("tab", name="Leaderboard").click()
    board = page.locator("#leaderboard-table")
    expect(board).to_contain_text(tiny_clip.name, timeout=30_000)
    assert str(tiny_clip) not in board.inner_text()  # no path of the machine
    assert "Experts" in board.inner_text()
    page.close()


@pytest.mark.slow
def test_gradio_client_gives_the_cli_numbers(space, tiny_clip, built_dataset, tmp_path):
    import torch
    from bla_eval.cli import main
    from gradio_client import Client
    from gradio_client.exceptions import AppError
    from safetensors.torch import save_file

    url, _ = space
    client = Client(url, verbose=False)
    outputs = client.predict(str(tiny_clip), "auto", TASKS, LIMIT, "ranking", api_name="/evaluate")
    space_results = json.loads(Path(outputs[5]).read_text())

    cli_out = tmp_path / "cli"
    argv = [
        "--model",
        str(tiny_clip),
        "--output",
        str(cli_out),
        "--data",
        str(built_dataset),
        "--limit",
        str(LIMIT),
    ]
    assert main(argv) == 0
    cli_results = json.loads((cli_out / "results.json").read_text())
    assert _task_metrics(space_results) == _task_metrics(cli_results)
    assert space_results["kind"] == cli_results["kind"] == "contrastive"

    too_big = tmp_path / "too-big"
    too_big.mkdir()
    save_file({"w": torch.zeros(2000, 1000)}, too_big / "model.safetensors")
    with pytest.raises(AppError, match="accepts models up to 1.0M"):
        client.predict(str(too_big), "auto", TASKS, LIMIT, "ranking", api_name="/evaluate")

    not_scorable = tmp_path / "resnet"
    not_scorable.mkdir()
    save_file({"w": torch.zeros(10)}, not_scorable / "model.safetensors")
    config = {"model_type": "resnet", "architectures": ["ResNetForImageClassification"]}
    (not_scorable / "config.json").write_text(json.dumps(config))
    with pytest.raises(AppError, match="unknown model kind .* 'Model kind' menu"):
        client.predict(str(not_scorable), "auto", TASKS, LIMIT, "ranking", api_name="/evaluate")
    assert not any(p.name.startswith(".") for p in space[1].results_dir.iterdir())


def test_engine_progress_reaches_the_page_callback(tiny_clip, built_dataset, tmp_path):
    from bla_eval.config import RunConfig
    from bla_space.gpu import evaluate_on_gpu

    calls = []

    def progress(fraction, desc=None, unit="steps"):  # the call signature of gr.Progress
        calls.append((fraction, desc))

    config = RunConfig(
        str(tiny_clip),
        tmp_path / "run",
        data=str(built_dataset),
        tasks=("coordination",),
        limit=3,
        kind="contrastive",
        batch_size=2,
        images_per_batch=2,
        device="cpu",
        trust_remote_code=True,
    )
    results = evaluate_on_gpu(config, 3, progress)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["kind"] == "contrastive"
    assert results["tasks"]["coordination"]["n"] == 3
    assert calls and calls[-1][0] == (3, 3) and all(isinstance(d, str) for _, d in calls)
    assert [done for (done, _), _ in calls] == sorted(done for (done, _), _ in calls)


@pytest.mark.slow
def test_the_space_runs_without_builders(built_dataset):
    """The deployed Space has app.py, bla_space/, bla_eval/ and bla_metric/ only."""
    code = f"""
import sys
class NoBuilders:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "builders":
            raise ImportError("builders is not deployed with the Space")
sys.meta_path.insert(0, NoBuilders())
from bla_space import explore_data
from bla_space.config import SpaceConfig
from bla_space.ui import build_demo
build_demo(SpaceConfig(dataset={str(built_dataset)!r}))
row = explore_data.datapoint({str(built_dataset)!r}, "active_passive", "ap-0000")
assert len(row["captions"]) == 4 and "builders" not in sys.modules
"""
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT / "space",
    )
    assert result.returncode == 0, result.stderr[-3000:]


APP_CONFIG = """
import runpy, sys
sys.path.insert(0, {folder!r})  # the script's folder, which `python SCRIPT` puts first
print(runpy.run_path({script!r}, run_name="app")["config"].dataset)
"""


def _served_dataset(cwd: Path, script: str) -> str:
    """The dataset of the Space's settings when ``python SCRIPT`` starts it in ``cwd``."""
    env = {k: v for k, v in os.environ.items() if k != "BLA_DATASET"}
    code = APP_CONFIG.format(folder=str(Path(script).parent), script=script)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=180, cwd=cwd, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_the_space_started_from_the_clone_root_finds_the_local_build(built_dataset, tmp_path):
    """`python space/app.py` from the root of a clone serves ./bla_dataset; `python app.py` in
    space/ would not see that build and falls back to the Hub id."""
    from bla_metric import hub_ids

    (tmp_path / "bla_dataset").symlink_to(built_dataset, target_is_directory=True)
    (tmp_path / "space").symlink_to(REPO_ROOT / "space", target_is_directory=True)
    assert _served_dataset(tmp_path, "space/app.py") == str(built_dataset.resolve())
    assert _served_dataset(tmp_path / "space", "app.py") == hub_ids.DATASET


def _artifact(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


TABS = ARTIFACTS / "tabs"


def _better_copy(run: Path, target: Path) -> Path:
    """A copy of ``run`` whose model ranks both true sentences on top of every datapoint, the
    newest run of the Space."""
    from datetime import datetime, timedelta, timezone

    from bla_eval.benchmarks.bla import summarise

    shutil.copytree(run, target)
    path = target / "scores.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        record["scores"] = [float(y) for y in record["labels"]]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    results = json.loads((target / "results.json").read_text())
    for task in results["tasks"]:
        results["tasks"][task] = summarise([r for r in records if r["task"] == task], False)
    results["model"] = "oracle"
    later = datetime.now(timezone.utc) + timedelta(minutes=1)
    results["created"] = later.isoformat(timespec="seconds")
    (target / "results.json").write_text(json.dumps(results))
    return target


def _shot(page, name: str) -> None:
    TABS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(500)
    page.screenshot(path=str(TABS / f"{name}.png"), full_page=True)


def _no_placeholder_headers(page) -> None:
    for table in page.locator("table").all():
        headers = [h.strip() for h in table.locator("thead th").all_inner_texts()]
        if headers:
            assert headers[:3] != ["1", "2", "3"], headers


LINES = """el => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const tops = new Set();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (!node.textContent.trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
    }
    return tops.size;
}"""


def _header_lines(page, table: str, name: str) -> int:
    """The lines the header ``name`` of ``table`` takes in the page."""
    header = next(h for h in page.locator(f"{table} thead th").all() if h.inner_text() == name)
    return header.evaluate(LINES)


@pytest.mark.slow
def test_each_tab_in_a_browser(space, browser, tiny_clip, built_dataset) -> None:
    """Every tab with two runs on the same datapoints (a screenshot each in
    ``test-artifacts/tabs/``): the newest run is picked in Explore, the Leaderboard shows rank
    intervals and tied groups, empty tables carry real headers, the neighbours' tab counts no
    item it cannot load, and its leaderboard columns are wide enough to read."""
    from bla_eval.config import RunConfig
    from bla_eval.run import evaluate
    from playwright.sync_api import expect

    url, config = space
    runs = [p for p in config.results_dir.iterdir() if (p / "results.json").is_file()]
    if not runs:  # run alone: the browser test above left no run
        first = config.results_dir / "tiny-clip"
        evaluate(RunConfig(str(tiny_clip), first, data=str(built_dataset), limit=LIMIT))
        runs = [first]
    _better_copy(runs[0], config.results_dir / "oracle")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.wait_for_selector("#run-button", timeout=60_000)

    _shot(page, "evaluate")
    _no_placeholder_headers(page)

    page.get_by_role("tab", name="Explore").click()
    expect(page.locator("#explore-run input")).to_have_value(re.compile("^oracle"), timeout=30_000)
    expect(page.locator("#explore-sentences")).to_contain_text("ranked correctly", timeout=30_000)
    _shot(page, "explore")

    page.get_by_role("tab", name="Leaderboard").click()
    stats = page.locator("#leaderboard-stats")
    expect(stats).to_contain_text("rank low", timeout=30_000)
    expect(stats).to_contain_text("not separated")
    assert _header_lines(page, "#leaderboard-table", "datapoints") == 1
    page.locator("#leaderboard-stats-metric").get_by_text("set accuracy").click()
    expect(page.locator("#leaderboard-stats-table")).to_contain_text("set accuracy", timeout=30_000)
    _shot(page, "leaderboard")

    board_text = page.locator("#leaderboard-table").inner_text()
    assert "oracle" in board_text and "clip" in board_text  # runs finished after the build

    page.get_by_role("tab", name="Analysis").click()
    _no_placeholder_headers(page)
    expect(page.locator("#analysis-run input")).to_have_value(re.compile("^oracle"))  # newest
    page.click("#analysis-button")
    expect(page.locator("#analysis-report")).to_contain_text("BLA analysis", timeout=60_000)
    page.wait_for_timeout(500)
    assert "None" not in page.locator("body").inner_text()
    assert page.locator(".toast-body").count() == 0
    _shot(page, "analysis")

    page.get_by_role("tab", name="VALSE · VL-CheckList · Winoground").click()
    page.wait_for_timeout(1500)
    body = page.locator("body").inner_text()
    assert "(of 0)" not in body
    _no_placeholder_headers(page)
    for header in page.locator("#neighbours-board-0 thead th").all():
        assert header.bounding_box()["width"] >= 60, header.inner_text()
    assert _header_lines(page, "#neighbours-board-0", "datapoints") == 1
    _shot(page, "neighbours")
    page.close()
