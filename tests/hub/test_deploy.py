"""``python -m builders space`` and ``metric-space``: the folders they assemble run on their own
(the Space scores a tiny model through ``gradio_client`` with nothing of the repository on its
path; the metric loads with ``evaluate.load(folder)``), and ``--push`` makes one commit on the
stand-in Hub."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import evaluate
import pytest

from builders import deploy
from tests.servers import serving

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN = REPO_ROOT / "tests" / "fixtures" / "runs" / "smollm2"
REQUIREMENT = "bla-benchmark[space] @ git+https://github.com/bla-org/bla@0123456789abcdef"
SPACE = "bla-org/bla-space"
RESULTS_REPO = "bla-org/bla-runs"
SEEDED_RUN = "seeded-run"
BOOT = f"""
import importlib.util, runpy, sys
inside = [p for p in sys.path if p.startswith({str(REPO_ROOT)!r}) and not p.startswith(sys.prefix)]
assert not inside, f"the repository is on sys.path: {{inside}}"  # its .venv stands for the install
assert importlib.util.find_spec("builders") is None, "the builders are importable"
runpy.run_path("app.py", run_name="__main__")
"""
PREDICTIONS = [[0.9, 0.8, 0.2, 0.1], [0.3, 0.6, 0.5, 0.4], [0.5, 0.5, 0.5, 0.5]]
REFERENCES = [[1, 1, 0, 0]] * 3
OPTIONS = dict(caption_types=["TA", "TP", "FA", "FP"], groups=["a", "b", "a"], bootstrap=50)


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


@pytest.mark.slow
def test_space_folder_boots_alone_pushes_and_scores(
    hub,
    hub_env,
    run_cli,
    built_dataset: Path,
    tiny_clip: Path,
    tmp_path: Path,
    free_port,
) -> None:
    folder = tmp_path / "space-repo"
    args = ["-m", "builders", "space", "--out", str(folder), "--requirement", REQUIREMENT]
    result = run_cli(*args, "--dataset", "bla-org/bla", "--repo-id", SPACE, "--push")
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(_files(folder)) == ["README.md", "app.py", "requirements.txt"]
    assert REQUIREMENT in (folder / "requirements.txt").read_text().splitlines()
    card = (folder / "README.md").read_text()
    assert "sdk: gradio" in card and "app_file: app.py" in card and "- bla-org/bla" in card
    on_hub = hub.files("space", SPACE)
    assert on_hub.pop(".gitattributes") and on_hub == _files(folder)
    assert len(hub.repo("space", SPACE).commits) == 2  # the empty repo, then one commit
    assert hub.repo("space", SPACE).variables == {"BLA_DATASET": "bla-org/bla"}

    seeded = {f"{SEEDED_RUN}/{p.name}": p.read_bytes() for p in RUN.iterdir()}
    hub.seed("dataset", RESULTS_REPO, seeded, "a run made elsewhere")
    runs = tmp_path / "runs"
    port = free_port()
    env = dict(
        hub_env,
        BLA_DATASET=str(built_dataset),
        BLA_RESULTS_DIR=str(runs),
        BLA_RESULTS_REPO=RESULTS_REPO,
        BLA_ALLOW_LOCAL_MODELS="1",
        BLA_MAX_PARAMS="1e6",
        BLA_DEFAULT_LIMIT="1",
        BLA_DEVICE="cpu",
        GRADIO_SERVER_NAME="127.0.0.1",
        GRADIO_SERVER_PORT=str(port),
        GRADIO_ANALYTICS_ENABLED="False",
    )
    url = f"http://127.0.0.1:{port}/"
    with serving([sys.executable, "-c", BOOT], url, tmp_path / "space.log", 300, env, folder):
        assert (runs / SEEDED_RUN / "results.json").is_file()  # pulled at start
        from gradio_client import Client

        request = (str(tiny_clip), "auto", ["coordination"], 1, "ranking")
        outputs = Client(url, verbose=False).predict(*request, api_name="/evaluate")
        assert "Kind **contrastive**" in outputs[0], outputs[0]
    names = {path.split("/")[0] for path in hub.files("dataset", RESULTS_REPO)}
    assert len(names - {".gitattributes", SEEDED_RUN}) == 1  # the new run was pushed


def test_metric_folder_loads_with_evaluate_and_pushes(hub, run_cli, tmp_path: Path) -> None:
    folder = tmp_path / "bla"
    args = ["-m", "builders", "metric-space", "--out", str(folder)]
    result = run_cli(*args, "--repo-id", "bla-org/bla", "--push")
    assert result.returncode == 0, result.stderr[-3000:]
    assert {"bla.py", "app.py", "README.md", "requirements.txt"} <= set(_files(folder))
    on_hub = hub.files("space", "bla-org/bla")
    assert on_hub.pop(".gitattributes") and on_hub == _files(folder)

    loaded = evaluate.load(str(folder))
    local = evaluate.load(str(REPO_ROOT / "bla_metric" / "bla.py"))
    expected = local.compute(predictions=PREDICTIONS, references=REFERENCES, **OPTIONS)
    assert loaded.compute(predictions=PREDICTIONS, references=REFERENCES, **OPTIONS) == expected


def test_dry_run_prints_the_files_and_calls_and_sends_nothing(hub, run_cli, tmp_path: Path) -> None:
    args = ["-m", "builders", "metric-space", "--out", str(tmp_path / "bla")]
    result = run_cli(*args, "--repo-id", "bla-org/bla", "--dry-run", env={"HF_TOKEN": None})
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "Dry run: nothing is sent." in out
    for call in ("create_repo", "repo_info", "list_repo_files", "create_commit"):
        assert f"HfApi().{call}(" in out
    assert "  bla.py  " in out and "  app.py  " in out
    assert hub.calls == []
    assert not (tmp_path / "bla").exists()  # a dry run leaves no folder in the clone


@pytest.mark.parametrize("command", ["space", "metric-space"])
def test_push_without_token_is_refused(hub, run_cli, tmp_path: Path, command: str) -> None:
    args = ["-m", "builders", command, "--out", str(tmp_path / "bla"), "--repo-id", "bla-org/bla"]
    if command == "space":
        args += ["--requirement", REQUIREMENT]
    result = run_cli(*args, "--push", env={"HF_TOKEN": None})
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert (
        lines[0].startswith(f"python -m builders {command}: error:") and "set HF_TOKEN" in lines[0]
    )
    assert hub.calls == [] and not (tmp_path / "bla").exists()


def test_requirement_pins_the_checkout_commit(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    git("init", "-q", "-b", "main")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    git("add", "pyproject.toml")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x")
    with pytest.raises(ValueError, match="no git remote 'origin'"):
        deploy.project_requirement("space", tmp_path)
    git("remote", "add", "origin", "git@github.com:bla-org/bla.git")
    commit = git("rev-parse", "HEAD")
    expected = f"bla-benchmark[space] @ git+https://github.com/bla-org/bla.git@{commit}"
    assert deploy.project_requirement("space", tmp_path) == expected
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'changed'\n")
    with pytest.raises(ValueError, match="uncommitted changes .*pyproject.toml"):
        deploy.project_requirement("space", tmp_path)
