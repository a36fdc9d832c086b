"""Uncertainty to the Hub, on the stand-in: ``bla-eval export RUN --scores ORG/RESULTS --push``
opens the pull request of the entries (whose notes name the scores) and commits the run's scores
to the results repo; the Space's published-scores section pulls that repo and ranks every model
that published scores, with rank intervals and tied groups."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from bla_eval.benchmarks.bla import BENCHMARK
from bla_eval.runs import RESULTS_FILE, SCORES_FILE
from bla_eval.runs.check import is_probabilistic

from tests.bla_eval.analysis.test_export import answered_run
from tests.bla_eval.commands import lines_of, write_lines

RESULTS_REPO = "bla-org/bla-results"
MODELS = ("bla-org/model-a", "bla-org/model-b", "bla-org/model-c")
RANK = """
import json, sys
from pathlib import Path
from bla_space import published
text, table, png = published.statistics([sys.argv[1]], Path(sys.argv[2]), "sentence_accuracy", 200)
print(json.dumps({"text": text, "columns": table.columns, "rows": table.rows, "png": len(png)}))
"""


def model_run(tmp_path: Path, k: int, model: str) -> Path:
    """The answered SmolLM2 run as a run of ``model``: the scores of the first ``k`` tenths of
    each task's datapoints reversed (a worse model for larger ``k``), metrics recomputed."""
    run = answered_run(tmp_path, f"run-{k}")
    records = lines_of(run / SCORES_FILE)
    rng = random.Random(k)
    for record in records:
        if rng.random() < k / 10:
            record["scores"] = [-s for s in record["scores"]]
    write_lines(run / SCORES_FILE, records)
    results = json.loads((run / RESULTS_FILE).read_text())
    for task in results["tasks"]:
        held = [r for r in records if r["task"] == task]
        results["tasks"][task] = BENCHMARK.summarise(held, is_probabilistic(results))
    results["model"] = model
    (run / RESULTS_FILE).write_text(json.dumps(results))
    return run


@pytest.mark.slow
def test_scores_pushed_with_the_entries_are_ranked_by_the_space(
    hub, run_cli, tmp_path: Path
) -> None:
    for k, model in enumerate(MODELS):
        hub.seed("model", model, {"README.md": b"---\nlicense: mit\n---\n"}, "the model")
        run = model_run(tmp_path, 2 * k, model)
        argv = ["-m", "bla_eval", "export", str(run), "--scores", RESULTS_REPO]
        done = run_cli(*argv, "--push", "--repo-id", model)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.splitlines()[-1].startswith(f"opened pull request {hub.url}/{model}")
        entries = yaml.safe_load(hub.files("model", model, "refs/pr/1")[".eval_results/bla.yaml"])
        folder = f"{model.split('/')[1]}-20261122011248"
        location = f"hf://datasets/{RESULTS_REPO}/{folder}/{SCORES_FILE}"
        assert all(location in entry["notes"] for entry in entries)
        assert all("95% CI [" in entry["notes"] for entry in entries)
        stored = hub.files("dataset", RESULTS_REPO)
        assert stored[f"{folder}/{SCORES_FILE}"] == (run / SCORES_FILE).read_bytes()

    done = run_cli("-c", RANK, RESULTS_REPO, str(tmp_path / "published"))
    assert done.returncode == 0, done.stderr[-3000:]
    board = json.loads(done.stdout.splitlines()[-1])
    assert board["text"].startswith(f"3 published runs read from {RESULTS_REPO}; 3 ranked")
    assert board["columns"][:2] == ["task", "model"] and board["png"] > 0
    rows = [dict(zip(board["columns"], row, strict=True)) for row in board["rows"]]
    assert {row["model"] for row in rows} == {"model-a", "model-b", "model-c"}
    for task in {row["task"] for row in rows}:
        ranked = sorted((r for r in rows if r["task"] == task), key=lambda r: r["rank"])
        assert [r["rank low"] <= r["rank"] <= r["rank high"] for r in ranked] == [True] * 3
        assert all(r["not separated"] for r in ranked)
