"""What a researcher pastes into a paper: --name, --table-format, --plot, the bootstrap intervals
and the provenance of results.json, from a real run of a tiny random CLIP."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.conditions import RESAMPLES
from bla_eval.provenance import environment_lock
from PIL import Image

from tests.bla_eval.commands import call, eval_args

pytestmark = pytest.mark.usefixtures("one_thread")
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


@pytest.fixture(scope="module")
def named_run(tiny_clip: Path, built_dataset: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("named") / "run"
    argv = eval_args(tiny_clip, built_dataset, out, "--limit", "5", "--name", "Tiny CLIP")
    argv += ["--table-format", "latex", "--plot"]
    return out, argv


def test_name_tables_plot_intervals_and_provenance(named_run, capsys) -> None:
    out, argv = named_run
    code, err = call(bla_eval, argv, capsys)
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    assert results["display_name"] == "Tiny CLIP" and results["model"] != "Tiny CLIP"
    intervals = results["confidence_intervals"]
    assert intervals["resamples"] == RESAMPLES and intervals["level"] == 0.95
    for task, views in results["tasks"].items():
        for view in ("ranking", "binary"):
            for metric, (low, high) in intervals["tasks"][task][view].items():
                assert low <= views[view][metric] <= high, (task, metric)
    provenance = results["provenance"]
    assert provenance["device"] == "cpu" and provenance["dtype"] == "float32"
    assert {"python", "numpy", "torch", "transformers"} <= set(provenance["libraries"])
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:  # the suite runs from a clone
        assert provenance["git"]["commit"] == head.stdout.strip()
    assert provenance["lock"] == environment_lock()  # .ci/setup's lock, None elsewhere
    assert Image.open(out / "results.png").format == "PNG"


def test_latex_table_has_one_number_per_cell(named_run, capsys) -> None:
    out, argv = named_run
    capsys.readouterr()
    assert bla_eval([*argv, "--resume"]) == 0
    text = capsys.readouterr().out
    rows = [line for line in text.splitlines() if line.startswith("Tiny CLIP &")]
    assert len(rows) == 2  # one per view
    cells = [c.strip(" \\") for row in rows for c in row.split("&")[1:]]
    assert len(cells) == 18 and all(NUMBER.match(c) for c in cells), cells
    assert "\\begin{tabular}" in text and "95\\% intervals (\\%)" in text
