"""Leaderboards of every benchmark: the per-item values a benchmark's spec gives (the default
from ``summarise``, VL-CheckList's weighted items), ``bla-eval compare`` over VALSE runs (values
and intervals against a count by hand and statsmodels), and a control's leaderboard ranking the
image gain."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from bla_eval.analysis.cli import compare_main
from bla_eval.analysis.compare import compare_many
from bla_eval.benchmarks import get_benchmark, register_benchmark, unregister_benchmark
from bla_eval.conditions import results_fields
from statsmodels.stats.proportion import proportion_confint

from bla_metric import formulas
from bla_metric.neighbours import vl_checklist

from ..commands import refused

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"
FIXTURE_RUN = Path(__file__).resolve().parents[2] / "fixtures" / "runs" / "smollm2"


# ----------------------------------------------------------------------------- per-item values


def _pairs(rng: np.random.Generator, n: int) -> list[dict]:
    """Caption / foil records with random scores, some tied."""
    scores = rng.integers(0, 4, (n, 2)).astype(float).tolist()
    return [
        {"task": "t", "id": f"i{k}", "scores": s, "labels": [1, 0], "caption_types": ["c", "f"]}
        for k, s in enumerate(scores)
    ]


def test_the_default_item_values_are_each_items_own_outcome() -> None:
    records = _pairs(np.random.default_rng(0), 40)
    mode, stats = get_benchmark("valse").paired_stats(records, False)
    by_hand = [float(r["scores"][0] > r["scores"][1]) for r in records]  # ties fail
    assert mode == "mean" and stats["acc_r"].tolist() == by_hand
    assert 0 < sum(by_hand) < 40

    rng = np.random.default_rng(1)
    wino = [{"task": "w", "id": str(k), "scores": rng.random((2, 2)).tolist()} for k in range(50)]
    _, stats = get_benchmark("winoground").paired_stats(wino, False)
    group = [
        float(s[0][0] > s[0][1] and s[1][1] > s[1][0] and s[0][0] > s[1][0] and s[1][1] > s[0][1])
        for s in (r["scores"] for r in wino)
    ]
    assert stats["group_score"].tolist() == group and sum(group) > 0


def test_a_headline_that_is_no_mean_over_items_asks_for_item_stats() -> None:
    valse = get_benchmark("valse")
    spec = register_benchmark(
        replace(valse, name="valse-auroc", headline={"pairwise": "auroc"}, item_stats=None)
    )
    try:
        with pytest.raises(ValueError, match="auroc is not a mean over items.*item_stats"):
            spec.paired_stats(_pairs(np.random.default_rng(2), 30), False)
    finally:
        unregister_benchmark("valse-auroc")


def test_vl_checklist_items_average_as_upstream_does() -> None:
    """Two sources: vg with two corpora of 3 and 1 items, hake with one corpus of 4."""
    corpora = ["Object_Size_large_vg_obj"] * 3 + ["Object_Size_large_vg_subj"]
    corpora += ["Object_Size_large_hake"] * 4
    right = [1, 0, 1, 0, 1, 1, 0, 0]
    records = [
        {"id": f"{c}-{k}", "scores": [1.0, 0.0] if y else [0.0, 1.0], "labels": [1, 0]}
        for k, (c, y) in enumerate(zip(corpora, right, strict=True))
    ]
    mode, stats = get_benchmark("vl-checklist").paired_stats(records, False)
    by_hand = ((2 / 3 + 0) / 2 + 2 / 4) / 2  # mean over vg's corpora, then over the sources
    assert mode == "mean" and stats["accuracy"].mean() == pytest.approx(by_hand)
    assert stats["pooled_accuracy"].tolist() == [float(y) for y in right]
    leaf = vl_checklist.vl_checklist_leaf(
        [r["scores"] for r in records], [r["labels"] for r in records], corpora
    )
    assert leaf["accuracy"] == pytest.approx(by_hand)
    # one level: a macro average over classes (ARO's per-relation accuracy, say)
    classes = ["on", "on", "on", "under", "near", "near", "near", "near"]
    macro = formulas.nested_mean_values(right, classes)
    assert macro.mean() == pytest.approx((2 / 3 + 0 + 2 / 4) / 3)


# ----------------------------------------------------------------------------- VALSE runs


@pytest.fixture(scope="module")
def valse_run(tiny_model, tmp_path_factory) -> Path:
    """A tiny CLIP's run of VALSE existence and counting_hard with a shuffled control."""
    import pyarrow.parquet as pq
    from bla_eval.cli import main as bla_eval
    from bla_eval.testing.dual_encoders import save_random_clip, tiny_clip_config

    from builders import valse

    root = tmp_path_factory.mktemp("valse")
    valse.build_valse(SHARED / "valse", [SHARED / "BLA_Benchmark" / "images"], root / "repo")
    texts = {
        c
        for path in (root / "repo").glob("data/*/test-*.parquet")
        for row in pq.read_table(path, columns=["captions"]).column("captions").to_pylist()
        for c in row
    }
    model = tiny_model(
        "clip-valse",
        sorted(texts),
        lambda folder, texts: save_random_clip(folder, texts, tiny_clip_config()),
    )
    argv = ["--benchmark", "valse", "--data", root / "repo", "--model", model, "--device", "cpu"]
    argv += ["--tasks", "existence", "counting_hard", "--control", "shuffled"]
    assert bla_eval([str(a) for a in [*argv, "--output", root / "run"]]) == 0
    return root / "run"


Outcome = Callable[[int], bool]
"""Whether the caption is placed above the foil on the k-th datapoint of a task."""


def _variant(base: Path, out: Path, real: Outcome, control: Outcome | None) -> Path:
    """A copy of ``base`` whose scores place the caption above the foil where ``real`` (and, for
    the control image, ``control``) says, its results.json derived from them again (without
    ``control``: a run without a control image)."""
    shutil.copytree(base, out)
    bench = get_benchmark("valse")
    records = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    by_task: dict[str, list[dict]] = {}
    for record in sorted(records, key=lambda r: (r["task"], r["id"])):
        k = len(by_task.setdefault(record["task"], []))
        record["scores"] = [1.0, 0.0] if real(k) else [0.0, 1.0]
        if control is None:
            record.pop("control")
        else:
            record["control"]["scores"] = [1.0, 0.0] if control(k) else [0.0, 1.0]
        by_task[record["task"]].append(record)
    lines = "".join(json.dumps(r) + "\n" for rs in by_task.values() for r in rs)
    (out / "scores.jsonl").write_text(lines)
    results = json.loads((out / "results.json").read_text())
    results["tasks"] = {t: bench.summarise(rs, False) for t, rs in by_task.items()}
    results.pop("control")
    results.update(results_fields(bench.summarise, by_task, False, "sentence_accuracy"))
    results["display_name"] = out.name
    (out / "results.json").write_text(json.dumps(results))
    return out


SEES: Outcome = lambda k: k % 5 != 4  # noqa: E731
HALF: Outcome = lambda k: k % 2 == 0  # noqa: E731
ALL: Outcome = lambda k: True  # noqa: E731
THIRD: Outcome = lambda k: k % 3 == 0  # noqa: E731


def _share(outcome: Outcome, n: int) -> float:
    return sum(outcome(k) for k in range(n)) / n


def test_valse_runs_get_a_leaderboard_of_acc_r(valse_run: Path, tmp_path: Path, capsys) -> None:
    runs = [
        _variant(valse_run, tmp_path / name, real, None)
        for name, real in (("sees", SEES), ("half", HALF), ("third", THIRD))
    ]
    printed, document = compare_many(runs, tmp_path / "out", resamples=200)
    assert printed.startswith("# VALSE comparison of 3 runs")
    assert "## Leaderboard with simultaneous rank sets (acc r)" in printed
    for task, board in document["leaderboard"].items():
        n = board["n"]
        assert n == json.loads((runs[0] / "results.json").read_text())["tasks"][task]["n"]
        rows = {row["model"]: row for row in board["models"]}
        for name, outcome in (("sees", SEES), ("half", HALF), ("third", THIRD)):
            count = sum(outcome(k) for k in range(n))
            assert rows[name]["value"] == pytest.approx(count / n)
            low, high = proportion_confint(count, n, method="beta")
            assert rows[name]["ci"] == pytest.approx([low, high])
        assert [row["model"] for row in board["models"]][0] == "sees"
    assert (tmp_path / "out" / "leaderboard.png").stat().st_size > 1000
    two, _ = compare_many(runs[:2], resamples=50)  # two runs: the leaderboard, no A/B tables
    assert two.startswith("# VALSE comparison of 2 runs") and "McNemar" not in two
    refused(compare_main, [*runs, "--metric", "set_accuracy"], capsys, "ranks by acc_r")
    refused(compare_main, [runs[0], FIXTURE_RUN], capsys, "ranks runs of one benchmark")


def test_a_control_leaderboard_ranks_the_image_gain(valse_run: Path, tmp_path: Path) -> None:
    runs = [
        _variant(valse_run, tmp_path / name, real, control)
        for name, real, control in (
            ("sees", ALL, HALF),
            ("blind", HALF, HALF),
            ("hurt", THIRD, ALL),
        )
    ]
    printed, document = compare_many(runs, resamples=2000, table_format=None)
    assert "## Leaderboard of the image gain with simultaneous rank sets" in printed
    assert "real image minus shuffled control" in printed
    assert "| image gain | gain CI low | gain CI high | rank |" in printed
    for task, board in document["leaderboard"].items():
        n, rows = board["n"], {row["model"]: row for row in board["models"]}
        assert board["control"] == "shuffled"
        for name, real, control in (
            ("sees", ALL, HALF),
            ("blind", HALF, HALF),
            ("hurt", THIRD, ALL),
        ):
            row = rows[name]
            assert row["value"] == pytest.approx(_share(real, n) - _share(control, n))
            assert row["headline"]["value"] == pytest.approx(_share(real, n))
            assert row["control"] == pytest.approx(_share(control, n))
            count = sum(real(k) for k in range(n))
            assert row["headline"]["ci"] == pytest.approx(
                proportion_confint(count, n, method="beta")
            )
        # the gain's interval is the one results.json records (the same 2000 resamples, seed 0)
        recorded = json.loads((runs[0] / "results.json").read_text())["control"]["tasks"][task]
        assert rows["sees"]["ci"] == pytest.approx(recorded["image_gain"]["ci"])
        assert rows["blind"]["ci"] == [0.0, 0.0]  # no gain anywhere: no variation
        assert [row["model"] for row in board["models"]] == ["sees", "blind", "hurt"]
    csv_text, _ = compare_many(runs, resamples=50, table_format="csv")
    assert "shuffled control,image gain,gain CI low,gain CI high" in csv_text
    assert "no variation" in csv_text


def test_the_suite_plan_reads_and_names_registered_benchmarks() -> None:
    from bla_eval.benchmarks import benchmark_names
    from bla_eval.sweep.plan import read_plan

    plan = read_plan(Path(__file__).resolve().parents[3] / "docs" / "suite-plan.yaml")
    named = {cell.settings.get("benchmark", "bla") for cell in plan.cells}
    suite = {"bla", "valse", "vl-checklist", "winoground", "sugarcrepe", "sugarcrepe-pp", "aro"}
    assert suite | {"mmvp-vlm"} <= named <= set(benchmark_names())


def test_every_benchmark_ranks_by_metrics_of_its_own_views() -> None:
    from bla_eval.benchmarks import benchmark_names

    for name in benchmark_names():
        bench = get_benchmark(name)
        assert bench.ranked_metrics, name
        for metric in bench.ranked_metrics:
            bench.view_of(metric)  # a metric of no view is a ValueError naming the benchmark


def test_the_space_ranks_the_runs_of_any_benchmark(valse_run: Path, tmp_path: Path) -> None:
    pytest.importorskip("gradio")
    from bla_eval.analysis.leaderboard import table_columns
    from bla_space import leaderboard_tab
    from bla_space.config import SpaceConfig

    results = tmp_path / "results"
    results.mkdir()
    for name, real in (("sees", SEES), ("third", THIRD)):
        _variant(valse_run, results / name, real, None)
    config = SpaceConfig(dataset=str(tmp_path), results_dir=results)
    assert ("VALSE", "valse") in leaderboard_tab.benchmark_menu()
    assert [m for _, m in leaderboard_tab.metric_menu("vl-checklist")] == [
        "accuracy",
        "pooled_accuracy",
    ]
    text, frame, plot = leaderboard_tab.statistics(config, "sentence_accuracy", "valse")
    assert "The VALSE runs of this Space" in text and "2 runs of" in text
    assert list(frame.columns) == table_columns("acc_r") and plot.size[0] > 100
    for task, rows in frame.groupby("task", sort=False):
        n = json.loads((results / "sees" / "results.json").read_text())["tasks"][task]["n"]
        assert list(rows["model"]) == ["sees", "third"]  # best first
        assert [float(v) for v in rows["acc r"]] == pytest.approx(
            [round(100 * _share(o, n), 2) for o in (SEES, THIRD)]
        )
    text, frame, _ = leaderboard_tab.statistics(config)  # BLA: no run of it here
    assert "No two runs" in text and frame.empty
    assert [v for _, v in leaderboard_tab.view_menu("valse")] == ["pairwise", "binary"]
    table = leaderboard_tab.leaderboard(config, "pairwise", "valse")
    # one row per (model, protocol): the two runs of one model are one row, named by its run
    assert "VisualBERT" in set(table["model"]) and set(table["model"]) & {"sees", "third"}


def test_a_sweeps_leaderboards_say_what_they_rank(valse_run: Path, tmp_path: Path) -> None:
    """A control protocol's group ranks the image gain, its title says so; a group that cannot
    be ranked (runs of two benchmarks) is one line, and the other groups are printed."""
    from bla_eval.sweep.folder import SweepFolder
    from bla_eval.sweep.plan import Cell
    from bla_eval.sweep.report import leaderboards

    folder = SweepFolder(tmp_path / "sweep")
    cells = [Cell(m, "valse", "shuffled", {}) for m in ("sees", "hurt")]
    _variant(valse_run, folder.cell_path(cells[0]), ALL, HALF)
    _variant(valse_run, folder.cell_path(cells[1]), THIRD, ALL)
    mixed = [Cell("bla-run", "mixed", "zero-shot", {}), Cell("valse-run", "mixed", "zero-shot", {})]
    shutil.copytree(FIXTURE_RUN, folder.cell_path(mixed[0]))
    _variant(valse_run, folder.cell_path(mixed[1]), HALF, None)
    printed = leaderboards(folder, [*cells, *mixed], resamples=50)
    gain = "image gain of acc r (real image minus shuffled control)"
    assert f"# Sweep leaderboard: valse, shuffled: {gain}\n" in printed
    assert (folder.leaderboard_path("valse", "shuffled") / "leaderboard.png").is_file()
    refusal = "# Sweep leaderboard: mixed, zero-shot\n\nNo leaderboard: "
    line = printed[printed.index(refusal) + len(refusal) :].split("\n")[0]
    assert line.endswith("a leaderboard ranks runs of one benchmark")
    assert not folder.leaderboard_path("mixed", "zero-shot").exists()


def test_a_sweep_prints_a_methods_paragraph_once(valse_run: Path, tmp_path: Path) -> None:
    """The leaderboards of a sweep describe their methods in the same words: the printed report
    gives the paragraph once and points back to it; each leaderboard's compare.md keeps it, and
    the control's leaderboard still says what it ranks."""
    from bla_eval.sweep.folder import SweepFolder
    from bla_eval.sweep.plan import Cell
    from bla_eval.sweep.report import leaderboards

    folder = SweepFolder(tmp_path / "sweep")
    plain = [Cell(m, "valse", "zero-shot", {}) for m in ("sees", "hurt")]
    control = [Cell(m, "valse", "shuffled", {}) for m in ("sees", "hurt")]
    for cells, real_control in ((plain, None), (control, HALF)):
        _variant(valse_run, folder.cell_path(cells[0]), ALL, real_control)
        _variant(valse_run, folder.cell_path(cells[1]), THIRD, real_control)
    printed = leaderboards(folder, [*plain, *control], resamples=50)
    methods = "Per task: the score with its 95% interval"
    assert printed.count(methods) == 1
    second = folder.leaderboard_path("valse", "shuffled") / "compare.md"
    assert f"Described under valse, zero-shot above (in full in {second})." in printed
    assert methods in second.read_text(encoding="utf-8")
    assert printed.count("Ranked by the image gain: per datapoint") == 1
