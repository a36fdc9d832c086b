"""NaturalBench in lmms-eval (its own environment, ``.ci/envs/lmms-eval.txt``): the same generated
answers give the same Acc / Q-Acc / I-Acc / G-Acc through lmms-eval's ``naturalbench`` task code
(its ``extract_answer`` and ``get_scores``) as through ``bla-eval``'s NaturalBench summary.

lmms-eval's task itself cannot run on a small copy (its aggregations assert 1,900 x 4 rows and it
reads another dataset, ``docs/other-benchmarks.md`` says how it differs), so its functions are
called on the answers directly, loaded from the installed task folder."""

from __future__ import annotations

import json
import subprocess

import pytest
from bla_eval.benchmarks import get_benchmark

from tests.harness_envs import harness_python

pytestmark = pytest.mark.slow

ANSWERS = [  # per sample, [image][question]; the gold: q0 yes on image 0, q1 yes on image 1
    [["Yes.", "No"], ["no", "yes, it is"]],
    [["Yes", "Yes"], ["No", "Yes"]],
    [["I cannot tell", "no"], ["No, not yes", "YES"]],
    [["No", "Yes"], ["Yes", "No"]],
]
LABELS = [[1, 0], [0, 1]]

LMMS_SCRIPT = """
import importlib.util, json, pathlib, sys
import lmms_eval
path = pathlib.Path(lmms_eval.__file__).parent / "tasks" / "naturalbench" / "utils.py"
spec = importlib.util.spec_from_file_location("naturalbench_utils", path)
utils = importlib.util.module_from_spec(spec)
spec.loader.exec_module(utils)
samples = json.loads(sys.stdin.read())
answers = {
    k: {f"q{q}_i{i}": utils.extract_answer(s[i][q], "yes_no") for i in (0, 1) for q in (0, 1)}
    for k, s in enumerate(samples)
}
print(json.dumps(utils.get_scores(answers)))
"""


def test_lmms_eval_scores_the_same_answers_as_bla_eval() -> None:
    python = harness_python("lmms-eval")
    done = subprocess.run(
        [str(python), "-c", LMMS_SCRIPT],
        input=json.dumps(ANSWERS),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    records = [
        {"task": "yes_no", "id": str(k), "scores": [[0.5, 0.5]] * 2, "labels": LABELS, "answers": a}
        for k, a in enumerate(ANSWERS)
    ]
    ours = get_benchmark("naturalbench").summarise(records, False)["answers"]
    assert ours["acc"] == pytest.approx(theirs["Acc"])
    assert ours["q_acc"] == pytest.approx(theirs["Q_Acc"])
    assert ours["i_acc"] == pytest.approx(theirs["I_Acc"])
    assert ours["g_acc"] == pytest.approx(theirs["G_Acc"])
    assert 0 < ours["g_acc"] < 1 and ours["acc"] not in (0.0, 1.0)
