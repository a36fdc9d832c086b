"""One definition per Hub task id, on real inspect logs: the same answers exported from
``bla-eval``, from ``inspect eval bla_eval/<task>`` and from stock ``inspect eval hf/<org>/bla``
give the same ``value`` under each ``eval.yaml`` task id; the ``inspect eval`` commands of
docs/harnesses.md run as written (the dataset id served by olah) and their logs export; every
spelling inspect accepts for a Hub task exports (logs written by inspect itself, in one run, and
copies edited with inspect-ai's own log API); a local dataset, a partial log and two logs of
one task are refused.

All three paths run on the same small build (2 datapoints per task, their 8 sentences per
per-sentence config), whole, so no run is partial: the tiny LLaVA behind ``transformers serve``,
the Hub tasks through olah.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from bla_eval.config import RunConfig
from bla_eval.run import evaluate

from bla_metric.tasks import TASKS
from builders.hub_eval import ANSWER_TOKENS
from tests.bla_eval.harnesses.test_inspect import inspect_site, run_inspect
from tests.harness_envs import harness_outputs
from tests.hub import test_olah_roundtrip as olah_tests
from tests.hub.test_olah_roundtrip import ORG, serve_as_git_repo

pytestmark = pytest.mark.slow
olah = olah_tests.olah
inspect_site = inspect_site  # the inspect environment and the project installed for it
DATAPOINTS = 2
HUB = f"hf/{ORG}/bla"
DOCS = Path(__file__).resolve().parents[3] / "docs" / "harnesses.md"
PUBLISHED = "bla-benchmark/bla"
"""The dataset id of the docs' commands, served by olah as ``ORG/bla`` here."""


def docs_commands() -> tuple[list[str], dict[str, str]]:
    """(the tasks of docs/harnesses.md's ``inspect eval`` lines, their ``-T`` arguments), the
    dataset id replaced by the one olah serves."""
    tasks, args = [], {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if line.startswith("inspect eval "):
            words = line.replace(PUBLISHED, f"{ORG}/bla").split()
            tasks.append(words[2])
            args |= dict(
                w.split("=", 1) for k, w in zip(words[:-1], words[1:], strict=True) if k == "-T"
            )
    return tasks, args


VARIANTS = """
import json, sys
from pathlib import Path
from inspect_ai.log import read_eval_log, write_eval_log
source, out = Path(sys.argv[1]), Path(sys.argv[2])
log = read_eval_log(str(source))
spellings = json.loads(sys.argv[3])
for name, task in spellings.items():
    log.eval.task = task
    for fmt in ("eval", "json"):
        write_eval_log(log, str(out / f"{name}.{fmt}"), format=fmt)
log.eval.task = spellings["plain"]
location = log.eval.dataset.location
log.eval.dataset.location = str(out)
write_eval_log(log, str(out / "local.json"), format="json")
log.eval.dataset.location = location
log.eval.config.limit = 4
write_eval_log(log, str(out / "partial.eval"), format="eval")
"""
EXPORT = """
import json, sys
from pathlib import Path
from bla_eval.analysis.export import export
out = []
for source, target, options in json.loads(sys.argv[1]):
    try:
        out.append(export(source, output=target, **options)[1])
    except ValueError as err:
        out.append("error: " + str(err))
print(json.dumps(out))
"""


def small_build(built: Path, out: Path) -> Path:
    """The build cut to its first ``DATAPOINTS`` datapoints per task and their sentences, with
    its eval.yaml and a card naming every config: a whole dataset that each path reads."""
    import pyarrow.parquet as pq

    from bla_metric.schema import BLA_ROWS, SENTENCE_ROWS, sentence_config
    from builders.card import card_metadata
    from builders.io import data_file, write_parquet

    info = {}
    for task in TASKS.values():
        for config, rows, features in (
            (task.config, DATAPOINTS, BLA_ROWS.features()),
            (sentence_config(task.config), 4 * DATAPOINTS, SENTENCE_ROWS.features()),
        ):
            table = pq.read_table(built / data_file(config, "test")).slice(0, rows)
            path = out / data_file(config, "test")
            size = write_parquet(table.to_pylist(), path, features, compression="zstd")
            split = {"num_examples": rows, "num_bytes": size, "file_bytes": path.stat().st_size}
            info[config] = {"test": split}
    header = yaml.safe_dump(card_metadata(info), sort_keys=False)
    (out / "README.md").write_text(f"---\n{header}---\n", encoding="utf-8")
    (out / "eval.yaml").write_bytes((built / "eval.yaml").read_bytes())
    return out


@pytest.fixture(scope="module")
def runs(inspect_site, olah, built_dataset, transformers_serve, tiny_llava, tmp_path_factory):
    """(the bla-eval run, inspect's logs by task name, the work folder) of the same model on the
    small build: the ``inspect eval`` commands of docs/harnesses.md with their ``-T`` arguments
    (the Hub tasks as ``hf/<org>/bla``, ``.../coordination`` and ``@v1.0.0``; ``bla_eval/...``
    on the Hub id), all in one ``inspect eval``."""
    url, mirrors = olah
    work = tmp_path_factory.mktemp("three-paths")
    build = small_build(built_dataset, work / "build")
    serve_as_git_repo(mirrors, "datasets", f"{ORG}/bla", build, tag="v1.0.0")
    run = work / "run"
    config = RunConfig(
        str(tiny_llava),
        run,
        data=str(build),
        endpoint=transformers_serve,
        max_answer_tokens=ANSWER_TOKENS,
    )
    assert evaluate(config)["protocol"]["scoring_path"] == "generation"
    tasks, task_args = docs_commands()
    assert task_args == {"data": f"{ORG}/bla", "scoring": "generation", "max_answer_tokens": "8"}
    assert int(task_args["max_answer_tokens"]) == ANSWER_TOKENS
    args = ["eval", *tasks, "--model", f"openai-api/local/{tiny_llava}"]
    for name, value in task_args.items():
        args += ["-T", f"{name}={value}"]
    done = run_inspect(inspect_site, args, transformers_serve, work, HF_ENDPOINT=url)
    logs = {}
    python, site = inspect_site
    for path in harness_outputs(done, work / "logs", "*.eval"):
        shown = subprocess.run(
            [str(python.parent / "inspect"), "log", "dump", "--header-only", str(path)],
            env=dict(os.environ, PYTHONPATH=str(site)),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert shown.returncode == 0, shown.stderr[-3000:]
        logs[json.loads(shown.stdout)["eval"]["task"]] = path
    return run, logs, work


def exported(inspect_site, work: Path, jobs: list[tuple[Path, Path, dict]]) -> list[str]:
    """``export`` of each (source, output, options) where inspect-ai is installed: the text
    written, or ``error: <the one line>``, in order."""
    python, site = inspect_site
    args = json.dumps([[str(s), str(o), options] for s, o, options in jobs])
    done = subprocess.run(
        [str(python), "-c", EXPORT, args],
        env=dict(os.environ, PYTHONPATH=str(site)),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def values(text: str) -> dict[str, float]:
    return {e["dataset"]["task_id"]: e["value"] for e in yaml.safe_load(text)}


def test_three_paths_give_one_value_per_task_id(inspect_site, runs, tmp_path):
    from bla_eval.analysis.export import export

    run, logs, work = runs
    configs = [t.config for t in TASKS.values()]
    hub = [f"{HUB}/{c}" for c in configs] + [f"{HUB}@v1.0.0/{c}" for c in configs]
    hub.append(f"{HUB}/coordination/coordination")
    own = ["bla_eval/coordination", "bla_eval/active_passive"]
    assert sorted(logs) == sorted(hub + own)
    from_run = values(export(run, output=tmp_path / "run")[1])
    assert set(from_run) == set(configs) and all(0 <= v <= 1 for v in from_run.values())
    one_run = tmp_path / "one-run"
    one_run.mkdir()
    for config in configs:
        (one_run / logs[f"{HUB}/{config}"].name).write_bytes(logs[f"{HUB}/{config}"].read_bytes())
    jobs = [(logs[name], tmp_path / f"log-{k}", {}) for k, name in enumerate(hub + own)]
    jobs += [(one_run, tmp_path / "folder", {}), (work / "logs", tmp_path / "all", {})]
    *texts, folder, everything = exported(inspect_site, work, jobs)
    for name, text in zip(hub + own, texts, strict=True):
        [entry] = yaml.safe_load(text)
        task = entry["dataset"]["task_id"]
        assert entry["dataset"]["id"] == f"{ORG}/bla" and "revision" not in entry["dataset"]
        assert entry["value"] == from_run[task], (name, entry["value"], from_run[task])
        assert ("dataset revision v1.0.0" in entry["notes"]) == ("@v1.0.0" in name)
    assert values(folder) == from_run
    assert everything == (
        f"error: {work / 'logs'} holds more than one log of the same BLA task: give one log"
    )


def test_edited_copies_of_a_real_log_export_or_are_refused(inspect_site, runs, tmp_path):
    _, logs, work = runs
    spellings = {
        "plain": f"{HUB}/coordination",
        "typed": f"{HUB}/coordination/coordination",
        "tag": f"{HUB}@v1.0.0/coordination",
        "commit": f"{HUB}@{'a' * 40}/coordination",
    }
    python, site = inspect_site
    source = logs[f"{HUB}/coordination"]
    done = subprocess.run(
        [str(python), "-c", VARIANTS, str(source), str(tmp_path), json.dumps(spellings)],
        env=dict(os.environ, PYTHONPATH=str(site)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    names = [f"{name}.{fmt}" for name in spellings for fmt in ("eval", "json")]
    jobs = [(tmp_path / name, tmp_path / f"out-{name}", {}) for name in names]
    jobs.append((tmp_path / "local.json", tmp_path / "out-local", {}))
    jobs.append((tmp_path / "local.json", tmp_path / "out-copy", {"dataset": "me/bla-copy"}))
    jobs.append((tmp_path / "partial.eval", tmp_path / "out-partial", {}))
    jobs.append((tmp_path / "partial.eval", tmp_path / "out-allowed", {"allow_partial": True}))
    *texts, local, copy, refused, allowed = exported(inspect_site, work, jobs)
    assert local == (
        f"error: {tmp_path / 'local.json'} ran on the local dataset {str(tmp_path)!r}: give "
        "--dataset-id ORG/NAME of the Hub dataset it is a copy of"
    )
    assert yaml.safe_load(copy)[0]["dataset"]["id"] == "me/bla-copy"
    plain = yaml.safe_load(texts[0])[0]
    for name, text in zip(names, texts, strict=True):
        [entry] = yaml.safe_load(text)
        assert entry["value"] == plain["value"] and entry["dataset"]["id"] == f"{ORG}/bla"
        assert entry["dataset"].get("revision") == ("a" * 40 if "commit" in name else None)
        assert ("dataset revision v1.0.0" in text) == name.startswith("tag")
    assert refused == (
        f"error: {tmp_path / 'partial.eval'} is a partial run (config.limit 4 of 8 samples): "
        "the Hub ranks whole runs; export it anyway with --allow-partial"
    )
    assert "PARTIAL RUN exported with --allow-partial" in allowed
