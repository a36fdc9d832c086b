"""The Space's results repo (``BLA_RESULTS_REPO``) on the stand-in Hub: two processes pushing runs
at the same time lose none, a pull brings every run back, and a push needs a token."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from bla_space.results_store import list_runs

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN = REPO_ROOT / "tests" / "fixtures" / "runs" / "smollm2"
RESULTS_REPO = "bla-org/bla-runs"
RUNS_PER_PROCESS = 4
PUSHER = """
import shutil, sys, time
from pathlib import Path
from bla_space.results_store import push_to_hub
source, work, prefix, count, repo = Path(sys.argv[1]), Path(sys.argv[2]), *sys.argv[3:6]
(work / f"{prefix}.ready").touch()
while not (work / "go").exists():
    time.sleep(0.01)
for number in range(int(count)):
    run = shutil.copytree(source, work / f"{prefix}-{number}")
    push_to_hub(repo, run)
"""
PULLER = """
import sys
from pathlib import Path
from bla_space.results_store import pull_from_hub
pull_from_hub(sys.argv[1], Path(sys.argv[2]))
"""


@pytest.mark.slow
def test_two_processes_pushing_at_once_lose_no_run(hub, hub_env, run_cli, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    pushers = [
        subprocess.Popen(
            [sys.executable, "-c", PUSHER, str(RUN), str(work), prefix, str(RUNS_PER_PROCESS)]
            + [RESULTS_REPO],
            env=hub_env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for prefix in ("space-a", "space-b")
    ]
    deadline = time.monotonic() + 120
    while len(list(work.glob("*.ready"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    (work / "go").touch()  # both start pushing together
    for proc in pushers:
        assert proc.wait(timeout=300) == 0, proc.stderr.read()[-3000:]

    on_hub = hub.files("dataset", RESULTS_REPO)
    names = {path.split("/")[0] for path in on_hub} - {".gitattributes"}
    expected = {f"{p}-{n}" for p in ("space-a", "space-b") for n in range(RUNS_PER_PROCESS)}
    assert names == expected
    commits = [c for c in hub.calls if c == ("POST", "commit")]
    assert len(commits) == 2 * RUNS_PER_PROCESS  # one commit per run

    pulled = tmp_path / "pulled"
    result = run_cli("-c", PULLER, RESULTS_REPO, str(pulled))
    assert result.returncode == 0, result.stderr[-3000:]
    runs = list_runs(pulled)
    assert {run.path.name for run in runs} == expected
    for run in runs:
        assert (run.path / "scores.jsonl").read_bytes() == (RUN / "scores.jsonl").read_bytes()


def test_push_without_token_names_the_variable(hub, run_cli, tmp_path: Path) -> None:
    code = (
        "from bla_space.results_store import push_to_hub\n"
        f"push_to_hub({RESULTS_REPO!r}, {str(RUN)!r})"
    )
    result = run_cli("-c", code, env={"HF_TOKEN": None})
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("bla_eval.hub_auth.MissingTokenError: pushing runs to BLA_RESULTS_REPO")
    assert "set HF_TOKEN" in last
    assert hub.calls == []


@pytest.mark.slow
def test_space_with_a_results_repo_and_no_token_does_not_start(hub, run_cli) -> None:
    code = (
        "from bla_space.config import SpaceConfig\n"
        "from bla_space.ui import build_demo\n"
        f"build_demo(SpaceConfig(results_repo={RESULTS_REPO!r}))"
    )
    result = run_cli("-c", code, env={"HF_TOKEN": None})
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert f"BLA_RESULTS_REPO={RESULTS_REPO}" in last and "set HF_TOKEN" in last, last
    assert hub.calls == []


def test_a_pull_adds_the_repos_runs_and_replaces_nothing_of_the_users(
    hub, run_cli, tmp_path: Path
) -> None:
    run_files = {name: (RUN / name).read_bytes() for name in ("results.json", "scores.jsonl")}
    files = {
        f"{folder}/{name}": data for folder in ("run-a", "mine") for name, data in run_files.items()
    }
    hub.seed("dataset", RESULTS_REPO, {**files, "notes.txt": b"the repo's"}, "runs")
    pulled = tmp_path / "pulled"
    (pulled / "mine").mkdir(parents=True)
    (pulled / "notes.txt").write_text("the user's own", encoding="utf-8")
    (pulled / "mine" / "results.json").write_text("the user's results", encoding="utf-8")
    result = run_cli("-c", PULLER, RESULTS_REPO, str(pulled))
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(p.name for p in pulled.iterdir()) == ["mine", "notes.txt", "run-a"]
    assert (pulled / "notes.txt").read_text(encoding="utf-8") == "the user's own"
    assert (pulled / "mine" / "results.json").read_text(encoding="utf-8") == "the user's results"
    assert (pulled / "run-a" / "scores.jsonl").read_bytes() == run_files["scores.jsonl"]
