"""The project as a user installs it: the sdist and the wheel built from the clone's HEAD (a clean
``git archive``, not the working tree), the wheel installed (not editable) into fresh
environments of the locked dependencies, and the commands run from a folder outside the clone.

- the base install (``.ci/locks/base.txt``: ``pip install bla-benchmark``) runs README's metric
  quick start and imports no torch;
- the engine install (``.ci/locks/engine.txt``: ``pip install "bla-benchmark[engine]"``) runs
  ``bla-eval --help``, finds the inspect-ai entry point, builds tiny models with
  ``python -m bla_eval.testing.tiny`` and scores them with ``bla-eval``: ``scores.jsonl`` is
  byte-identical to the editable install's.

The environments are made by uv from its cache, offline (``.ci/setup`` installed every file of
those locks there: they are subsets of ``dev.txt`` at its versions and hashes).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.harness_envs import REPO_ROOT

pytestmark = pytest.mark.slow

UV = Path(sys.executable).parent / "uv"
"""uv of the test environment (``dev.txt`` pins it)."""
LOCKS = REPO_ROOT / ".ci" / "locks"
WHEEL_FOLDERS = ("/opt/wheels", "/opt/pypi-more/files")
"""This machine kind's wheel folders, offered to uv as ``.ci/lib.sh`` does (hashes checked)."""
PACKAGES = {
    "bla_metric": "bla_metric",
    "bla_eval": "space/bla_eval",
    "bla_space": "space/bla_space",
}
"""Installed package -> its folder in the clone."""
QUIET = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
"""The same thread settings for the wheel's runs and the editable install's."""


def _run(command: list, cwd: Path, env: dict[str, str] | None = None, timeout: float = 900):
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, command[:6]))} ... exited {done.returncode}:\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}",
            pytrace=False,
        )
    return done


def _user_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a user's shell: nothing of the clone on ``PYTHONPATH``, offline, and
    Python writing the ``.pyc`` files of what it imports (uv installs none, pip compiles them at
    install: without them every process compiles torch and transformers, ~10 s each)."""
    clone_only = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in clone_only}
    return {**env, "HF_HUB_OFFLINE": "1", "PYTHONNOUSERSITE": "1", **QUIET, **(extra or {})}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel of HEAD, built (offline) from a ``git archive`` of it; uv builds
    the sdist first and the wheel from the sdist, as ``python -m build`` does."""
    root = tmp_path_factory.mktemp("dist")
    source = root / "source"
    source.mkdir()
    archive = root / "head.tar"
    _run(["git", "archive", "--format=tar", "-o", archive, "HEAD"], cwd=REPO_ROOT)
    with tarfile.open(archive) as tar:
        tar.extractall(source, filter="data")
    out = root / "out"
    build = [UV, "build", "--offline", "--no-build-isolation", "--python", sys.executable]
    _run([*build, "--out-dir", out], cwd=source)
    [sdist] = out.glob("*.tar.gz")
    [wheel] = out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


def fresh_env(folder: Path, lock: Path, wheel: Path) -> Path:
    """A new environment holding exactly ``lock``'s packages (uv, offline, hashes checked) and
    the wheel, not editable; returns its Python."""
    _run([UV, "venv", "--quiet", "--python", sys.executable, folder], cwd=folder.parent)
    python = folder / "bin" / "python"
    links = [arg for path in WHEEL_FOLDERS if Path(path).is_dir() for arg in ("--find-links", path)]
    sync = [UV, "pip", "sync", "--quiet", "--offline", "--require-hashes", "--python", python]
    done = subprocess.run(
        [str(c) for c in [*sync, *links, lock]], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        pytest.fail(
            f"uv could not install {lock.name} offline from its cache (bash .ci/setup fills it "
            f"when it installs .venv):\n{done.stderr[-3000:]}",
            pytrace=False,
        )
    install = [UV, "pip", "install", "--quiet", "--offline", "--no-deps", "--python", python]
    _run([*install, wheel], cwd=folder.parent)
    return python


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the clone, where the installed commands run."""
    folder = tmp_path_factory.mktemp("user")
    assert REPO_ROOT not in folder.resolve().parents
    return folder


@pytest.fixture(scope="module")
def engine_python(dist, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel in a fresh environment of ``engine.txt``."""
    return fresh_env(tmp_path_factory.mktemp("engine") / "env", LOCKS / "engine.txt", dist["wheel"])


def tracked_package_files() -> dict[str, list[str]]:
    """Installed package -> the paths (inside it) of the clone's tracked files under its folder,
    tests and caches aside: what the wheel must carry."""
    found: dict[str, list[str]] = {}
    for package, folder in PACKAGES.items():
        listed = _run(["git", "ls-files", "--", folder], cwd=REPO_ROOT).stdout.splitlines()
        found[package] = [f"{package}/{Path(p).relative_to(folder).as_posix()}" for p in listed]
    return found


def test_the_wheel_carries_every_file_of_the_packages_and_the_sdist_builds_it(dist) -> None:
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = set(wheel.namelist())
    missing = [p for files in tracked_package_files().values() for p in files if p not in names]
    assert missing == []
    with tarfile.open(dist["sdist"]) as sdist:
        members = {Path(m).relative_to(Path(m).parts[0]).as_posix() for m in sdist.getnames()}
    assert {"pyproject.toml", "README.md", "bla_metric/data/published.yaml"} <= members
    assert not any(name.startswith((".ci/", ".venv/")) for name in members)
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        entry_points = next(n for n in wheel.namelist() if n.endswith("entry_points.txt"))
        text = wheel.read(entry_points).decode()
    assert "bla-eval = bla_eval.cli:main" in text and "[inspect_ai]" in text


def readme_block(heading: str) -> str:
    """The first ```python block of README.md after the line starting with ``heading``."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    after = text[text.index(heading) :]
    return re.search(r"```python\n(.*?)```", after, re.S).group(1)


BASE_CHECK = """
import importlib.util, json, sys
{block}
result = bla.compute(predictions=[[0.9, 0.8, 0.2, 0.1]], references=[[1, 1, 0, 0]])
print(json.dumps({{"result": result, "torch_imported": "torch" in sys.modules,
    "torch_installed": importlib.util.find_spec("torch") is not None,
    "metric": bla_metric.__file__}}))
"""


def test_the_base_install_runs_the_readme_metric_quick_start_without_torch(
    dist, outside: Path, tmp_path: Path
) -> None:
    python = fresh_env(tmp_path / "env", LOCKS / "base.txt", dist["wheel"])
    block = readme_block("**Compute the metric**")
    expected = eval(re.search(r"^# (\{.*\})$", block, re.M).group(1))  # the README's comment
    code = BASE_CHECK.format(block=block)
    done = _run([python, "-c", code], cwd=outside, env=_user_env())
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["result"] == expected
    assert report["torch_imported"] is False and report["torch_installed"] is False
    assert Path(report["metric"]).is_relative_to(tmp_path / "env")


def test_the_engine_install_has_the_commands_and_the_inspect_entry_point(
    engine_python: Path, outside: Path
) -> None:
    env = _user_env()
    bin_folder = engine_python.parent
    done = _run([bin_folder / "bla-eval", "--help"], cwd=outside, env=env)
    assert done.stdout.startswith("usage: bla-eval")
    _run([bin_folder / "bla-finetune", "--help"], cwd=outside, env=env)
    code = (
        "import importlib.metadata as m, importlib.util as u, json\n"
        "[ep] = [e for e in m.entry_points(group='inspect_ai') if e.name == 'bla_eval']\n"
        "print(json.dumps([ep.value, u.find_spec(ep.value).origin]))"
    )
    value, origin = json.loads(_run([engine_python, "-c", code], cwd=outside, env=env).stdout)
    assert value == "bla_eval.harnesses.inspect_tasks"
    assert Path(origin).is_relative_to(engine_python.parent.parent)


REQUIREMENTS_MET = """
import importlib.metadata as m, json
from packaging.requirements import Requirement
unmet = []
for line in m.requires("bla-benchmark"):
    req = Requirement(line)
    if req.marker is None or req.marker.evaluate({"extra": "engine"}):
        found = m.version(req.name) if req.name != "bla-benchmark" else None
        if found is not None and not req.specifier.contains(found, prereleases=True):
            unmet.append(f"{line} (installed {found})")
print(json.dumps(unmet))
"""


def test_the_locked_versions_satisfy_the_wheels_requirements(engine_python, outside) -> None:
    done = _run([engine_python, "-c", REQUIREMENTS_MET], cwd=outside, env=_user_env())
    assert json.loads(done.stdout) == []


def _runs(model: Path, data: Path, folder: Path, engine_python: Path, *extra: str) -> list[bytes]:
    """``bla-eval`` on ``model`` by the wheel's command (outside the clone) and by the editable
    install (this clone's code), at once; returns the two ``scores.jsonl``."""
    args = ["--model", model, "--data", data, "--device", "cpu", *extra]
    clone_env = {**os.environ, **QUIET, "HF_HUB_OFFLINE": "1"}
    clone_env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT / "space"), str(REPO_ROOT)])
    commands = [
        ([engine_python.parent / "bla-eval", *args, "--output", folder / "wheel"], _user_env()),
        ([sys.executable, "-m", "bla_eval", *args, "--output", folder / "clone"], clone_env),
    ]
    started = [
        subprocess.Popen(
            [str(c) for c in command],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command, env in commands
    ]
    for proc in started:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"{proc.args[:3]}: {out[-1000:]}\n{err[-4000:]}"
    results = json.loads((folder / "wheel" / "results.json").read_text(encoding="utf-8"))
    assert results["provenance"]["git"] is None  # the wheel's code, not the clone's
    return [(folder / name / "scores.jsonl").read_bytes() for name in ("wheel", "clone")]


@pytest.mark.parametrize(
    ("architecture", "extra"),
    [("clip", ["--limit", "3"]), ("llava", ["--limit", "2", "--tasks", "ap"])],
)
def test_a_tiny_model_built_and_scored_by_the_wheel_matches_the_editable_install(
    architecture: str,
    extra: list[str],
    engine_python: Path,
    outside: Path,
    built_dataset: Path,
    tmp_path: Path,
) -> None:
    model = outside / architecture
    tiny = [engine_python, "-m", "bla_eval.testing.tiny", "--architecture", architecture]
    done = _run([*tiny, "--out", model], cwd=outside, env=_user_env())
    assert str(model) in done.stdout and (model / "config.json").is_file()
    wheel, clone = _runs(model, built_dataset, tmp_path, engine_python, *extra)
    assert wheel == clone and wheel.count(b"\n") >= 2
