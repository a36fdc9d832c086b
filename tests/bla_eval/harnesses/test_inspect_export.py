"""One definition per Hub task id, on real inspect logs: the same answers exported from
``bla-eval``, from ``inspect eval bla_eval/<task>`` and from stock ``inspect eval hf/<org>/bla``
give the same ``value`` under each ``eval.yaml`` task id; every spelling inspect accepts for a
Hub task exports (logs written by inspect itself, in one run, and copies edited with
inspect-ai's own log API); a local dataset, a partial log and two logs of one task are refused.

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
from tests.hub import test_olah_roundtrip as olah_tests
from tests.hub.test_olah_roundtrip import ORG, serve_as_git_repo

pytestmark = pytest.mark.slow
olah = olah_tests.olah
inspect_site = inspect_site  # the inspect environment and the project installed for it
DATAPOINTS = 2
HUB = f"hf/{ORG}/bla"
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

    from builders.card import card_metadata
    from builders.io import data_file, write_parquet
    from builders.schema import FEATURES, SENTENCE_FEATURES, sentence_config

    info = {}
    for task in TASKS.values():
        for config, rows, features in (
            (task.config, DATAPOINTS, FEATURES),
            (sentence_config(task.config), 4 * DATAPOINTS, SENTENCE_FEATURES),
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
    """(the bla-eval run, inspect's logs by task name) of the same model on the small build:
    one ``inspect eval`` of the Hub tasks (as ``hf/<org>/bla``, ``.../coordination`` and
    ``.../coordination@main``) and of ``bla_eval/coordination``."""
    url, mirrors = olah
    work = tmp_path_factory.mktemp("three-paths")
    build = small_build(built_dataset, work / "build")
    serve_as_git_repo(mirrors, "datasets", f"{ORG}/bla", build)
    run = work / "run"
    config = RunConfig(
        str(tiny_llava),
        run,
        data=str(build),
        endpoint=transformers_serve,
        max_answer_tokens=ANSWER_TOKENS,
    )
    assert evaluate(config)["protocol"]["scoring_path"] == "generation"
    tasks = [HUB, f"{HUB}/coordination", f"{HUB}/coordination@main", "bla_eval/coordination"]
    args = ["eval", *tasks, "--model", f"openai-api/local/{tiny_llava}"]
    args += ["-T", f"data={build}", "-T", f"max_answer_tokens={ANSWER_TOKENS}"]
    done = run_inspect(inspect_site, args, transformers_serve, work, HF_ENDPOINT=url)
    assert done.returncode == 0, done.stderr[-3000:]
    logs = {}
    python, site = inspect_site
    for path in sorted((work / "logs").glob("*.eval")):
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
    assert sorted(logs) == sorted(
        [f"{HUB}/{t.config}" for t in TASKS.values()]
        + [f"{HUB}/coordination/coordination", f"{HUB}/coordination@main/coordination"]
        + ["bla_eval/coordination"]
    )
    from_run = values(export(run, output=tmp_path / "run")[1])
    own = logs["bla_eval/coordination"]
    jobs = [(logs[f"{HUB}/{t.config}"], tmp_path / t.config, {}) for t in TASKS.values()]
    jobs += [
        (logs[f"{HUB}/coordination/coordination"], tmp_path / "typed-task", {}),
        (logs[f"{HUB}/coordination@main/coordination"], tmp_path / "typed-rev", {}),
        (own, tmp_path / "own-local", {}),
        (own, tmp_path / "own", {"dataset": f"{ORG}/bla"}),
    ]
    texts = exported(inspect_site, work, jobs)
    assert texts[-2].startswith(f"error: {own} ran on the local dataset ")  # inspect's
    assert texts[-2].endswith(": give --dataset-id ORG/NAME of the Hub dataset it is a copy of")
    from_own = values(texts[-1])
    from_hub = {}
    for text in texts[:5]:
        [entry] = yaml.safe_load(text)
        assert entry["dataset"]["id"] == f"{ORG}/bla" and "revision" not in entry["dataset"]
        from_hub.setdefault(entry["dataset"]["task_id"], set()).add(entry["value"])
    assert "dataset revision main" in texts[4]
    assert set(from_run) == set(from_hub) == {t.config for t in TASKS.values()}
    for task, value in from_run.items():
        assert from_hub[task] == {value}, task
    assert from_own == {"coordination": from_run["coordination"]}
    assert all(0 <= v <= 1 for v in from_run.values())


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
    jobs.append((tmp_path / "partial.eval", tmp_path / "out-partial", {}))
    jobs.append((tmp_path / "partial.eval", tmp_path / "out-allowed", {"allow_partial": True}))
    *texts, refused, allowed = exported(inspect_site, work, jobs)
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
