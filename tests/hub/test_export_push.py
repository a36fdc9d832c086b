"""``bla-eval export --push`` on the stand-in Hub: it opens a pull request on the model repo and
prints the pull request's URL; without a token it stops before any request, with one line."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.bla_eval.analysis.test_export import answered_run

MODEL = "bla-org/tiny-model"
CARD = b"---\nlicense: mit\n---\n\n# A tiny model\n"


def _export(run_cli, tmp_path: Path, *extra: str, env: dict | None = None):
    run = tmp_path / "answered"
    if not run.exists():
        answered_run(tmp_path)
    args = ["-m", "bla_eval", "export", str(run), "--output", str(tmp_path), *extra]
    return run_cli(*args, "--push", "--repo-id", MODEL, env=env)


def test_push_opens_a_pull_request_and_prints_its_url(hub, run_cli, tmp_path: Path) -> None:
    main_before = hub.seed("model", MODEL, {"README.md": CARD}, "the model")

    result = _export(run_cli, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[-1] == f"opened pull request {hub.url}/{MODEL}/discussions/1"
    written = (tmp_path / ".eval_results" / "bla.yaml").read_bytes()
    assert hub.files("model", MODEL, "refs/pr/1")[".eval_results/bla.yaml"] == written

    result = _export(run_cli, tmp_path, "--format", "model-index")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[-1] == f"opened pull request {hub.url}/{MODEL}/discussions/2"
    card = hub.files("model", MODEL, "refs/pr/2")["README.md"].decode()
    header = yaml.safe_load(card.split("---")[1])
    assert header["license"] == "mit" and header["model-index"][0]["results"]
    assert hub.head("model", MODEL) == main_before  # pull requests only


def test_push_without_token_is_one_line(hub, run_cli, tmp_path: Path) -> None:
    result = _export(run_cli, tmp_path, env={"HF_TOKEN": None})
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("bla-eval export: error: bla-eval export --push")
    assert "set HF_TOKEN" in lines[0]
    assert hub.calls == [] and not (tmp_path / ".eval_results").exists()
