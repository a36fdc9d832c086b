"""BLA in inspect-ai (its own environment, ``.ci/envs/inspect.txt``), against ``transformers
serve`` with the tiny LLaVA on 127.0.0.1 and, for the Hub's tasks, olah serving the built dataset
repo:

- stock ``inspect eval hf/<org>/bla`` runs every task of ``eval.yaml``, and its answer to every
  sentence is the answer ``bla-eval`` gets through the same server;
- ``inspect eval bla_eval/<task>`` (the package's entry point) gives ``bla-eval``'s scores and
  metrics;
- bad input: an unknown task, a dataset build without the per-sentence configs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from bla_eval.config import RunConfig
from bla_eval.run import evaluate
from bla_eval.runs import SCORES_FILE

from bla_metric.tasks import TASKS
from builders.hub_eval import ANSWER_TOKENS
from tests.bla_eval.scorers.test_openai_api import MODEL, ChatServer
from tests.harness_envs import harness_outputs, harness_python, install_project
from tests.hub import test_olah_roundtrip as olah_tests
from tests.hub.test_olah_roundtrip import ORG, serve_as_git_repo

pytestmark = pytest.mark.slow
olah = olah_tests.olah
"""olah serving git repositories as Hub repos on 127.0.0.1 (module scope)."""
LIMIT = 2
"""Datapoints per task of ``inspect eval bla_eval/...`` (the Hub's tasks: ``4 * LIMIT`` rows)."""


@pytest.fixture(scope="module")
def inspect_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the inspect environment's python, the project installed for it)."""
    python = harness_python("inspect")
    site = install_project(python, tmp_path_factory.mktemp("inspect") / "site-packages")
    return python, site


def run_inspect(
    inspect_site: tuple[Path, Path], args: list[str], url: str, cwd: Path, **env: str
) -> subprocess.CompletedProcess:
    """``inspect <args>`` in its environment, the project on its path, the model at ``url``."""
    python, site = inspect_site
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    clean.update(
        PYTHONPATH=str(site),
        LOCAL_BASE_URL=url,
        LOCAL_API_KEY="local",
        HF_HOME=str(cwd / "hf-home"),
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        INSPECT_LOG_DIR=str(cwd / "logs"),
        **env,
    )
    return subprocess.run(
        [str(python.parent / "inspect"), *args],
        cwd=cwd,
        env=clean,
        capture_output=True,
        text=True,
        timeout=600,
    )


def read_log(inspect_site: tuple[Path, Path], path: Path) -> dict[str, Any]:
    """An inspect log as inspect reads it (``inspect log dump``): eval, results, samples."""
    python, site = inspect_site
    env = dict(os.environ, PYTHONPATH=str(site))
    done = subprocess.run(
        [str(python.parent / "inspect"), "log", "dump", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def logs(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.eval"))


def read_scores(run: Path) -> dict[tuple[str, str], dict[str, Any]]:
    lines = (run / SCORES_FILE).read_text().splitlines()
    return {(r["task"], r["id"]): r for r in map(json.loads, lines)}


@pytest.fixture(scope="module")
def bla_eval_run(transformers_serve, tiny_llava, built_dataset, tmp_path_factory) -> Path:
    """``bla-eval`` through the server: every task, the first ``LIMIT`` datapoints, answers of
    up to ``ANSWER_TOKENS`` tokens (the server returns no log-probabilities: generation)."""
    out = tmp_path_factory.mktemp("bla-eval") / "run"
    config = RunConfig(
        str(tiny_llava),
        out,
        data=str(built_dataset),
        limit=LIMIT,
        endpoint=transformers_serve,
        max_answer_tokens=ANSWER_TOKENS,
    )
    results = evaluate(config)
    assert results["protocol"]["scoring_path"] == "generation"
    return out


def first_rows_build(built: Path, out: Path, rows: int) -> Path:
    """The build's ``eval.yaml`` and per-sentence configs cut to their first ``rows`` rows, with
    a card the builders write for them: what ``inspect eval hf/...`` reads, without sending the
    whole build over HTTP."""
    import pyarrow.parquet as pq

    from bla_metric.schema import SENTENCE_ROWS, sentence_configs
    from builders.card import card_metadata
    from builders.io import data_file, write_parquet

    info = {}
    for config in sentence_configs():
        table = pq.read_table(built / data_file(config, "test")).slice(0, rows)
        path = out / data_file(config, "test")
        size = write_parquet(table.to_pylist(), path, SENTENCE_ROWS.features(), compression="zstd")
        info[config] = {
            "test": {"num_examples": rows, "num_bytes": size, "file_bytes": path.stat().st_size}
        }
    header = yaml.safe_dump(card_metadata(info), sort_keys=False)
    (out / "README.md").write_text(f"---\n{header}---\n", encoding="utf-8")
    shutil.copy2(built / "eval.yaml", out / "eval.yaml")
    return out


@pytest.fixture(scope="module")
def hub_logs(
    inspect_site, olah, built_dataset, transformers_serve, tiny_llava, tmp_path_factory
) -> Path:
    """The logs of stock ``inspect eval hf/<org>/bla`` (every task of eval.yaml) through olah."""
    url, mirrors = olah
    work = tmp_path_factory.mktemp("hub-tasks")
    build = first_rows_build(built_dataset, work / "build", 4 * LIMIT)
    serve_as_git_repo(mirrors, "datasets", f"{ORG}/bla", build)
    model = f"openai-api/local/{tiny_llava}"
    args = ["eval", f"hf/{ORG}/bla", "--model", model, "--limit", str(4 * LIMIT)]
    done = run_inspect(inspect_site, args, transformers_serve, work, HF_ENDPOINT=url)
    harness_outputs(done, work / "logs", "*.eval")
    return work / "logs"


@pytest.fixture(scope="module")
def bla_task_log(inspect_site, transformers_serve, tiny_llava, built_dataset, tmp_path_factory):
    """The log of ``inspect eval bla_eval/coordination`` through the server."""
    work = tmp_path_factory.mktemp("bla-task")
    model = f"openai-api/local/{tiny_llava}"
    args = ["eval", "bla_eval/coordination", "--model", model, "--limit", str(LIMIT)]
    args += ["-T", f"data={built_dataset}", "-T", f"max_answer_tokens={ANSWER_TOKENS}"]
    done = run_inspect(inspect_site, args, transformers_serve, work)
    [path] = harness_outputs(done, work / "logs", "*.eval")
    return path


def test_hub_tasks_answer_as_bla_eval(inspect_site, hub_logs, bla_eval_run):
    expected = read_scores(bla_eval_run)
    found = {}
    for path in logs(hub_logs):
        log = read_log(inspect_site, path)
        assert log["status"] == "success"
        config = log["eval"]["task"].rsplit("/", 1)[-1]
        for sample in log["samples"]:
            meta = sample["metadata"]
            found[(config, meta["datapoint_id"], meta["position"])] = sample["output"]["completion"]
    assert {c for c, _, _ in found} == {t.config for t in TASKS.values()}
    assert len(found) == 4 * LIMIT * len(TASKS)
    for (config, datapoint, position), answer in found.items():
        assert answer == expected[(config, datapoint)]["answers"][position], (config, datapoint)


def test_bla_task_gives_bla_eval_scores_and_metrics(inspect_site, bla_task_log, bla_eval_run):
    log = read_log(inspect_site, bla_task_log)
    expected = read_scores(bla_eval_run)
    for sample in log["samples"]:
        record = sample["scores"]["bla_scorer"]["metadata"]["bla_record"]
        reference = expected[("coordination", record["id"])]
        assert record["scores"] == reference["scores"]
        assert record["answers"] == reference["answers"]
        assert record["scoring_path"] == "generation"
    metrics = {name: m["value"] for name, m in log["results"]["scores"][0]["metrics"].items()}
    results = json.loads((bla_eval_run / "results.json").read_text())["tasks"]["coordination"]
    for view in ("ranking", "binary", "pairwise", "binary_answers"):
        for name, value in results[view].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert metrics[f"{view}.{name}"] == pytest.approx(value), (view, name)
    assert metrics["n"] == LIMIT


def export_with(inspect_site, source: Path, out: Path) -> subprocess.CompletedProcess:
    """``bla-eval export SOURCE --output OUT`` where inspect-ai is installed (its logs are
    zstd-compressed zips, read through the zipfile_zstd it installs)."""
    python, site = inspect_site
    return subprocess.run(
        [str(python), "-m", "bla_eval", "export", str(source), "--output", str(out)],
        env=dict(os.environ, PYTHONPATH=str(site)),
        capture_output=True,
        text=True,
        timeout=300,
    )


OTHER_TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate


@task
def other():
    return Task(dataset=[Sample(input="Say yes.", target="yes")], solver=generate(), scorer=match())
"""


def test_unknown_task_and_a_foreign_log_are_refused(
    inspect_site, transformers_serve, tiny_llava, tmp_path
):
    model = f"openai-api/local/{tiny_llava}"
    args = ["eval", "bla_eval/no_such_task", "--model", model]
    done = run_inspect(inspect_site, args, transformers_serve, tmp_path)
    output = (done.stdout + done.stderr).strip()  # inspect's own one line (its exit status 1)
    assert done.returncode == 1
    assert output == "Error: No inspect tasks were found at the specified paths."
    (tmp_path / "other.py").write_text(OTHER_TASK)
    args = ["eval", "other.py", "--model", model, "--max-tokens", "1"]
    done = run_inspect(inspect_site, args, transformers_serve, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    [log] = logs(tmp_path / "logs")
    done = export_with(inspect_site, log, tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"bla-eval export: error: {log} is a log of inspect task 'other', not of a BLA task"
    ]
    assert not (tmp_path / "out").exists()


def canonical(messages: list[dict[str, Any]]) -> bytes:
    """The turns of a request as role, texts and image URLs only (what both clients ask)."""
    turns = []
    for message in messages:
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts = "".join(p.get("text", "") for p in parts if p["type"] == "text")
        images = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
        turns.append([message["role"], images, texts])
    return json.dumps(turns).encode()


class MessageServer(ChatServer):
    """The endpoint tests' scripted server, its P(yes) a function of the request's turns only, so
    that two clients asking the same question with other request fields get the same answer."""

    def completion(self, request: dict[str, Any], body: bytes) -> dict[str, Any]:
        return super().completion(request, canonical(request["messages"]))


def test_bla_task_takes_p_yes_from_log_probabilities_as_bla_eval(
    inspect_site, built_dataset, tmp_path
):
    with MessageServer() as server:
        reference = RunConfig(
            MODEL, tmp_path / "run", data=str(built_dataset), tasks=("co",), limit=LIMIT
        )
        results = evaluate(dataclasses.replace(reference, endpoint=server.url))
        model = f"openai-api/local/{MODEL}"
        args = ["eval", "bla_eval/coordination", "--model", model, "--limit", str(LIMIT)]
        args += ["-T", f"data={built_dataset}"]
        done = run_inspect(inspect_site, args, server.url, tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
    assert results["protocol"]["scoring_path"] == "logprobs"
    [path] = logs(tmp_path / "logs")
    log = read_log(inspect_site, path)
    expected = read_scores(tmp_path / "run")
    for sample in log["samples"]:
        record = sample["scores"]["bla_scorer"]["metadata"]["bla_record"]
        assert record["scoring_path"] == "logprobs"
        assert record["scores"] == expected[("coordination", record["id"])]["scores"]
        assert len(set(record["scores"])) > 1  # P(yes) varies with the sentence
    metrics = {name: m["value"] for name, m in log["results"]["scores"][0]["metrics"].items()}
    summary = results["tasks"]["coordination"]
    assert metrics["ranking.sentence_accuracy"] == pytest.approx(
        summary["ranking"]["sentence_accuracy"]
    )
    assert metrics["binary.accuracy"] == pytest.approx(summary["binary"]["accuracy"])


REGISTERED = (
    "from inspect_ai._util.entrypoints import ensure_entry_points\n"
    "from inspect_ai._util.registry import _registry\n"
    "ensure_entry_points()\n"
    "print(sorted(k for k in _registry if k.startswith('task:')))\n"
)
"""Print the task names inspect registers from the installed entry points."""


def test_the_tasks_are_prefixed_only_from_a_site_packages_install(inspect_site, tmp_path):
    """docs/harnesses.md: a regular install (its files under ``site-packages``) gives
    ``bla_eval/<task>``; the same files elsewhere (the clone on ``PYTHONPATH``, an editable
    install) give the plain task names."""
    python, site = inspect_site
    plain = install_project(python, tmp_path / "plain")
    names = {}
    for where, path in (("site", site), ("plain", plain)):
        env = dict(os.environ, PYTHONPATH=str(path))
        done = subprocess.run(
            [str(python), "-c", REGISTERED], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        names[where] = done.stdout.strip().splitlines()[-1]
    assert "'task:bla_eval/coordination'" in names["site"]
    assert "'task:coordination'" in names["plain"] and "bla_eval/" not in names["plain"]
