"""VALSE, VL-CheckList and Winoground in the Space: a benchmark picker, an item browser with a
run's scores, and one leaderboard table per benchmark.

Items come from the benchmark's own reader (``bla_eval.benchmarks.<name>.read_items``) on the
dataset the chosen run was scored on (without a run: ``BLA_VALSE_DATASET``,
``BLA_VL_CHECKLIST_DATASET``, ``BLA_WINOGROUND_DATASET``, a local folder or Hub id);
scores from the run's ``scores.jsonl``; tables from ``views.leaderboard_table``. Nothing here
computes a metric: verdicts are the benchmark's own per-item outcomes from ``bla_metric``.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd
from bla_eval.benchmarks import benchmark_names, get_benchmark
from bla_eval.items import Item, decode_image
from bla_eval.outputs import read_records
from bla_eval.runs import SCORES_FILE

from bla_metric.neighbours.pairwise import pairwise_accuracy
from bla_metric.neighbours.winoground import winoground_outcomes

from . import results_store, views
from .config import SpaceConfig

NO_RUN = ""
PAIR_COLUMNS = ["text", "role", "score"]
WINOGROUND_COLUMNS = ["caption", "score with image 0", "score with image 1"]


def shown_image(image: Any, label: str = "Image 1") -> gr.Image:
    """An image box showing ``image``, hidden when there is none (no empty box in the page)."""
    return gr.Image(value=image, label=label, visible=image is not None)


def neighbour_menu() -> dict[str, str]:
    """Benchmark name -> label of the picker: every registered benchmark except BLA (which has
    tabs of its own), in registry order."""
    return {n: get_benchmark(n).label for n in benchmark_names() if n != "bla"}


def dataset_for(
    benchmark: str, results: dict | None = None, env: dict[str, str] | None = None
) -> str | None:
    """The dataset to browse: the run's, else ``BLA_<NAME>_DATASET``, else None (these
    benchmarks have no public dataset repo in our format: the user builds it)."""
    if results and results.get("dataset"):
        return str(results["dataset"])
    env = os.environ if env is None else env
    return env.get("BLA_" + benchmark.upper().replace("-", "_") + "_DATASET") or None


def runs_of(config: SpaceConfig, benchmark: str) -> list[results_store.Run]:
    """The finished runs of one benchmark, newest first."""
    return results_store.list_runs(config.folders, benchmark)


def run_choices(config: SpaceConfig, benchmark: str) -> list[tuple[str, str]]:
    """No run, then every finished run of ``benchmark`` by its key, newest first."""
    return [("none (dataset only)", NO_RUN), *results_store.menu(runs_of(config, benchmark))]


def task_choices(benchmark: str, results: dict | None = None) -> list[tuple[str, str]]:
    """(label, config) of the run's tasks, else of every task of the benchmark."""
    bench = get_benchmark(benchmark)
    tasks = list((results or {}).get("tasks") or bench.task_names())
    return [(bench.task_label(t), t) for t in tasks]


@lru_cache(maxsize=8)
def items_of(benchmark: str, data: str, task: str) -> tuple[Item, ...]:
    """Every item of one task (images left encoded until shown); cached per process."""
    return tuple(get_benchmark(benchmark).read_items(data, task, "test", None))


@lru_cache(maxsize=4)
def scores_of(run_dir: str | None) -> dict[tuple[str, str], dict]:
    """A run's score records keyed by (task, item id); empty without a run."""
    if not run_dir:
        return {}
    return {(r["task"], str(r["id"])): r for r in read_records(Path(run_dir) / SCORES_FILE)}


def verdict(item: Item, record: dict | None) -> str:
    """The item's outcome under its benchmark's rule (strict comparisons, ties fail)."""
    if record is None:
        return "not scored in this run"
    if item.benchmark == "winoground":
        out = {k: bool(v[0]) for k, v in winoground_outcomes([record["scores"]]).items()}
        return " · ".join(f"{k.split('_')[0]} {'✓' if ok else '✗'}" for k, ok in out.items())
    ok = pairwise_accuracy([record["scores"]], [record["labels"]]) == 1.0
    true_text = "caption" if item.benchmark == "valse" else "positive"
    return f"{true_text} above the other: {'✓' if ok else '✗ (or tied)'}"


def item_table(item: Item, record: dict | None) -> pd.DataFrame:
    """VALSE / VL-CheckList: one row per text; Winoground: one row per caption, one score
    column per image (scores rounded for display; the run keeps them exact)."""
    scores = None if record is None else record["scores"]
    if item.benchmark == "winoground":
        rows = []
        for c, caption in enumerate(item.captions):
            cells = [
                None if scores is None else round(float(scores[i][c]), 6)
                for i in range(len(item.images))
            ]
            rows.append([f"{c}: {caption}", *cells])
        return pd.DataFrame(rows, columns=WINOGROUND_COLUMNS)
    roles = item.caption_types or tuple("true" if y else "false" for y in item.labels[0])
    rows = [
        [text, role, None if scores is None else round(float(scores[j]), 6)]
        for j, (text, role) in enumerate(zip(item.captions, roles, strict=True))
    ]
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def show_item(
    benchmark: str, data: str, task: str, run_dir: str | None, position: int
) -> tuple[Any, Any, str, pd.DataFrame]:
    """(first image, second image or None, header, table) of the item at ``position`` (1-based)."""
    items = items_of(benchmark, data, task)
    if not items:
        return None, None, "This task has no item.", pd.DataFrame(columns=PAIR_COLUMNS)
    item = items[min(len(items), max(1, int(position))) - 1]
    record = scores_of(run_dir).get((task, item.id))
    images = [decode_image(item, ref) for ref in item.images]
    tags = ", ".join(
        f"{k} {v}"
        for k, v in item.meta.items()
        if v not in (None, "", False) and k in ("instrument", "corpus", "collapsed_tag", "tag")
    )
    header = (
        f"**{item.id}** ({tags}) · {verdict(item, record)}"
        if tags
        else (f"**{item.id}** · {verdict(item, record)}")
    )
    return images[0], images[1] if len(images) > 1 else None, header, item_table(item, record)


def item_view(
    config: SpaceConfig, benchmark: str, key: str, task: str, position: float
) -> tuple[Any, Any, str, pd.DataFrame]:
    """What the item browser shows for the run ``key`` of ``benchmark`` (none: the dataset of
    ``BLA_<NAME>_DATASET``): :func:`show_item`'s images, header and table, or a message."""
    run = results_store.find_run(config.folders, key, benchmark)
    data = dataset_for(benchmark, run.results if run else None)
    if not task or data is None:
        variable = "BLA_" + benchmark.upper().replace("-", "_") + "_DATASET"
        message = f"Pick a run (its dataset is shown), or set `{variable}`."
        return None, None, message, pd.DataFrame(columns=PAIR_COLUMNS)
    try:
        return show_item(benchmark, data, task, str(run.path) if run else None, int(position))
    except Exception as err:  # an unreadable dataset or run: said in the page
        return None, None, f"Cannot show this item: {err}", pd.DataFrame(columns=PAIR_COLUMNS)


ROLLUP_COLUMNS = ["Object", "Attribute", "Relation", "overall"]


def vl_checklist_overview(runs: list[dict]) -> pd.DataFrame:
    """VL-CheckList's category averages (%): the paper's Table 2 rows, then each run's
    (``bla_eval.benchmarks.vl_checklist.rollup``: the mean of the leaves up the taxonomy)."""
    from bla_eval.benchmarks.vl_checklist import rollup

    from bla_metric.neighbours.references import reference_rows

    table: dict[tuple[str, str], dict[str, float | None]] = {}
    for row in reference_rows("vl-checklist"):
        task = "overall" if row["task"] == "all" else row["task"]
        if task in ROLLUP_COLUMNS:
            table.setdefault((row["model"], row["source"]), {})[task] = views.percent(
                row["accuracy"]
            )
    for results in runs:
        averages = rollup(results)
        table[(views.display_name(results), views.run_source(results))] = {
            c: views.percent(averages.get(c)) for c in ROLLUP_COLUMNS
        }
    return pd.DataFrame(
        [
            {"model": m, "source": src, **{c: v.get(c) for c in ROLLUP_COLUMNS}}
            for (m, src), v in table.items()
        ]
    )


def leaderboards(config: SpaceConfig, benchmark: str) -> dict[str, pd.DataFrame]:
    """One table per view of ``benchmark``: published rows plus this Space's runs."""
    found = runs_of(config, benchmark)
    runs = [views.board_document(r.results, r.cell) for r in found]
    bench = get_benchmark(benchmark)
    tables = {view: views.leaderboard_table(runs, view, benchmark) for view in bench.views}
    if benchmark == "vl-checklist":
        tables["categories"] = vl_checklist_overview(runs)
    return tables


def build(config: SpaceConfig, demo: gr.Blocks) -> None:
    """The tab's layout and events (call inside ``gr.Blocks``)."""
    menu = neighbour_menu()
    first = next(iter(menu))
    with gr.Row():
        benchmark = gr.Radio(
            [(label, name) for name, label in menu.items()],
            value=first,
            label="Benchmark",
            scale=2,
            elem_id="neighbours-benchmark",
        )
        run = gr.Dropdown(
            run_choices(config, first),
            value=NO_RUN,
            label="Scores of run",
            scale=3,
            elem_id="neighbours-run",
        )
        task = gr.Dropdown(
            task_choices(first), value=None, label="Task", scale=2, elem_id="neighbours-task"
        )
    position = gr.Slider(1, 2, value=1, step=1, label="Item", elem_id="neighbours-position")
    with gr.Row(equal_height=False):
        image_0, image_1 = (
            gr.Image(
                label=label,
                type="pil",
                height=300,
                interactive=False,
                visible=False,
                elem_id=f"neighbours-image-{k}",
            )
            for k, label in enumerate(("Image", "Image 1"))
        )
        with gr.Column(scale=2):
            header = gr.Markdown("")
            table = gr.Dataframe(
                headers=PAIR_COLUMNS, interactive=False, wrap=True, elem_id="neighbours-table"
            )
    gr.Markdown("### Leaderboard (%): published rows and this Space's runs")
    boards = [
        gr.Dataframe(
            interactive=False,
            wrap=True,
            label=f"view {i + 1}",
            elem_id=f"neighbours-board-{i}",
            max_height=views.WHOLE_TABLE,
        )
        for i in range(2)
    ]
    # VALSE has two views; VL-CheckList one view and its category averages; Winoground one

    def results_of(bench: str, key: str) -> dict | None:
        run = results_store.find_run(config.folders, key, bench)
        return run.results if run else None

    def pick_benchmark(name: str):
        tables = leaderboards(config, name)
        titles = {v: title for v, (_, title) in get_benchmark(name).views.items()}
        titles["categories"] = "VL-CheckList (%): Object / Attribute / Relation / overall"
        shown = [
            gr.Dataframe(
                value=t,
                label=titles[v],
                visible=True,
                column_widths=views.pixel_widths(t.columns),
            )
            for v, t in tables.items()
        ]
        shown += [gr.Dataframe(visible=False)] * (len(boards) - len(shown))
        runs = run_choices(config, name)
        newest = runs[1][1] if len(runs) > 1 else NO_RUN
        choices = task_choices(name, results_of(name, newest))
        return (
            gr.Dropdown(choices=runs, value=newest),
            gr.Dropdown(choices=choices, value=choices[0][1]),
            *shown,
        )

    def pick(name: str, run_name: str, task_name: str):
        results = results_of(name, run_name)
        choices = task_choices(name, results)
        task_name = task_name if task_name in [c for _, c in choices] else choices[0][1]
        data, n = dataset_for(name, results), 0
        if data is not None:
            try:
                n = len(items_of(name, data, task_name))
            except Exception as err:  # dataset unreachable: say so in the page
                gr.Warning(f"Cannot load {menu[name]} task {task_name}: {err}")
        label = f"Item (of {n})" if n else "Item (no dataset: pick a run, or set its variable)"
        return (
            gr.Dropdown(choices=choices, value=task_name),
            gr.Slider(1, max(2, n), value=1, step=1, label=label, interactive=n > 0),
        )

    def show(name: str, run_name: str, task_name: str, pos: float):
        first, second, text, frame = item_view(config, name, run_name, task_name, pos)
        return (
            shown_image(first, "Image 0" if second is not None else "Image"),
            shown_image(second),
            text,
            frame,
        )

    shown = [image_0, image_1, header, table]
    benchmark.change(pick_benchmark, benchmark, [run, task, *boards], api_name=False).then(
        pick, [benchmark, run, task], [task, position], api_name=False
    ).then(show, [benchmark, run, task, position], shown, api_name=False)
    for control in (run, task):
        control.input(pick, [benchmark, run, task], [task, position], api_name=False).then(
            show, [benchmark, run, task, position], shown, api_name=False
        )
    position.release(show, [benchmark, run, task, position], shown, api_name=False)
    demo.load(pick_benchmark, benchmark, [run, task, *boards], api_name=False).then(
        pick, [benchmark, run, task], [task, position], api_name=False
    ).then(show, [benchmark, run, task, position], shown, api_name=False)
