"""The published repos as users meet them, over HTTP: ``olah`` (a Hub-compatible server; in
offline mode it serves local git repositories as Hub repos, read-only) serves the dataset repo
built by ``builders release`` and the metric Space folder assembled by ``builders
metric-space``; stock ``datasets.load_dataset`` and ``evaluate.load`` read them with
``HF_ENDPOINT`` pointing at it.

olah quirks worked around here:
- it answers 401 (with ``X-Error-Code: RepoNotFound``) where the Hub answers 404 for a file at a
  revision that does not exist. ``evaluate.load("org/name")`` first asks for the script at
  ``v<evaluate's version>`` and falls back to ``main`` only on a 404, so against olah it stops at
  that first probe: the metric is loaded with ``HF_SCRIPTS_VERSION=main``, which skips the probe.
- it serves only what the git repositories hold: each repo is a bare repository whose branch is
  named ``main`` (``git init -b main``), committed from the folder with ``--work-tree``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import evaluate
import pytest

from bla_metric.schema import DATASET_VERSION
from bla_metric.tasks import TASKS
from builders import deploy
from builders.metric_repo import metric_files
from tests.servers import serving

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
ORG = "bla-org"
TAG = f"v{DATASET_VERSION}"
PREDICTIONS = [[0.9, 0.8, 0.2, 0.1], [0.3, 0.6, 0.5, 0.4], [0.5, 0.5, 0.5, 0.5]]
REFERENCES = [[1, 1, 0, 0]] * 3
OPTIONS = dict(caption_types=["TA", "TP", "FA", "FP"], groups=["a", "b", "a"], bootstrap=50)
CONFIG = """[basic]
host = "127.0.0.1"
port = {port}
repos-path = "{root}/cache"
mirrors-path = ["{root}/mirrors"]
[accessibility]
offline = true
"""
LOAD_DATASET = """
import json, sys
from pathlib import Path
import datasets, pyarrow as pa, pyarrow.parquet as pq
repo, local, revisions = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
manifest = json.loads((local / "manifest.json").read_text())
out = []
for revision in revisions:
    for config, splits in manifest["configs"].items():
        for split in splits:
            remote = datasets.load_dataset(repo, config, split=split, revision=revision)
            files = sorted((local / "data" / config).glob(f"{split}-*.parquet"))
            table = pa.concat_tables([pq.read_table(f) for f in files])
            out.append(dict(revision=revision, config=config, split=split, rows=remote.num_rows,
                            same_rows=remote.data.table.equals(table),
                            same_features=remote.features
                            == datasets.Features.from_arrow_schema(table.schema)))
from bla_eval.benchmarks.bla import load_bla
from bla_metric.tasks import TASKS
engine = [(item.id, list(item.captions)) for item in load_bla(repo)]
local_items = []
for task in TASKS.values():
    table = pq.read_table(sorted((local / "data" / task.config).glob("test-*.parquet")))
    local_items += zip(table["id"].to_pylist(), table["captions"].to_pylist())
print(json.dumps(dict(loads=out, engine_items=len(engine), engine_same=engine == local_items)))
"""
LOAD_METRIC = """
import json, sys
import evaluate
metric = evaluate.load(sys.argv[1])
print(json.dumps(metric.compute(**json.loads(sys.argv[2]))))
"""


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def serve_as_git_repo(mirrors: Path, kind: str, repo_id: str, folder: Path, tag=None) -> str:
    """Commit ``folder`` (left untouched) to a bare repository where olah serves the
    ``kind`` (``datasets``, ``spaces``) repo ``repo_id``; returns the commit."""
    git_dir = mirrors / kind / repo_id
    _git("init", "-q", "--bare", "-b", "main", str(git_dir))
    tree = ["-c", "core.compression=0", f"--git-dir={git_dir}", f"--work-tree={folder}"]
    _git(*tree, "add", "-A")
    _git(*tree, "-c", "user.name=BLA", "-c", "user.email=bla@localhost", "commit", "-qm", "build")
    if tag:
        _git(f"--git-dir={git_dir}", "tag", tag)
    return _git(f"--git-dir={git_dir}", "rev-parse", "main")


@pytest.fixture(scope="module")
def olah(tmp_path_factory: pytest.TempPathFactory, free_port) -> Iterator[tuple[str, Path]]:
    """olah in offline mode on 127.0.0.1 (a free port): (its URL, the folder of its git repos).
    Stopped at the end of the module."""
    root = tmp_path_factory.mktemp("olah")
    port = free_port()
    (root / "olah.toml").write_text(CONFIG.format(port=port, root=root))
    command = [sys.executable, "-m", "olah.server", "--config", root / "olah.toml"]
    url = f"http://127.0.0.1:{port}"
    # cwd: its own logs go to ./logs
    with serving(command, url + "/api/whoami-v2", root / "olah.log", 120, cwd=root):
        yield url, root / "mirrors"


def _client_env(url: str, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.pop("PYTHONPATH", None)
    return dict(env, HF_ENDPOINT=url, HF_HOME=str(home), HF_HUB_DISABLE_PROGRESS_BARS="1", **extra)


@pytest.mark.slow
def test_load_dataset_over_http_at_main_and_at_the_tag(olah, built_dataset: Path, tmp_path: Path):
    url, mirrors = olah
    commit = serve_as_git_repo(mirrors, "datasets", f"{ORG}/bla", built_dataset, tag=TAG)
    home = tmp_path / "hf-home"
    result = subprocess.run(
        [sys.executable, "-c", LOAD_DATASET, f"{ORG}/bla", str(built_dataset), "main", TAG],
        env=_client_env(url, home),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.splitlines()[-1])
    loads = report["loads"]
    manifest = json.loads((built_dataset / "manifest.json").read_text())
    expected = [
        (revision, config, split, rows)
        for revision in ("main", TAG)
        for config, splits in manifest["configs"].items()
        for split, rows in splits.items()
    ]
    assert [(d["revision"], d["config"], d["split"], d["rows"]) for d in loads] == expected
    assert all(d["same_rows"] and d["same_features"] for d in loads), loads
    test_rows = sum(manifest["configs"][task.config]["test"] for task in TASKS.values())
    assert report["engine_same"] and report["engine_items"] == test_rows  # the engine's Hub path
    refs = home / "hub" / f"datasets--{ORG}--bla" / "refs"
    assert (refs / "main").read_text() == commit and (refs / TAG).read_text() == commit


def test_evaluate_load_over_http_matches_the_local_module(olah, tmp_path: Path) -> None:
    url, mirrors = olah
    folder = tmp_path / "bla"
    deploy.write_folder(folder, metric_files("bla"), "test")
    serve_as_git_repo(mirrors, "spaces", f"{ORG}/bla", folder)
    inputs = dict(predictions=PREDICTIONS, references=REFERENCES, **OPTIONS)
    env = _client_env(url, tmp_path / "hf-home", HF_SCRIPTS_VERSION="main")
    result = subprocess.run(
        [sys.executable, "-c", LOAD_METRIC, f"{ORG}/bla", json.dumps(inputs)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    local = evaluate.load(str(REPO_ROOT / "bla_metric" / "bla.py")).compute(**inputs)
    assert json.loads(result.stdout.splitlines()[-1]) == json.loads(json.dumps(local))
