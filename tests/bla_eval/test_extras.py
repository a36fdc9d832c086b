"""A command started without a package of its extra says in one line which extra to install
(``bla_eval/extras.py``), and ``bla-eval --help`` needs no package of the ``engine`` extra."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from bla_eval.extras import DISTRIBUTION, EXTRA_OF_MODULE

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN = REPO_ROOT / "tests" / "fixtures" / "runs" / "smollm2"
USER_EXTRAS = ("engine", "analysis", "space", "builders", "vllm", "sweep")

WITHOUT = """
import sys
for name in {missing!r}:
    sys.modules[name] = None  # the standard way to make a package unimportable
from {module} import main
sys.exit(main({argv!r}))
"""


def run_without(missing: list[str], module: str, argv: list[str], cwd: Path = REPO_ROOT):
    """``module``'s ``main(argv)``, in a fresh process where ``missing`` cannot be imported."""
    code = WITHOUT.format(missing=missing, module=module, argv=argv)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def requirement_name(requirement: str) -> str:
    """``"pillow>=10"`` -> ``pillow``; ``"bla-benchmark[engine]"`` -> ``bla-benchmark``."""
    return re.split(r"[\[<>=!~; @]", requirement, maxsplit=1)[0].lower()


def extras_of_pyproject() -> dict[str, list[str]]:
    """Each user extra -> the names of the packages it lists itself (not through another extra)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = project["optional-dependencies"]
    return {extra: [requirement_name(r) for r in listed[extra]] for extra in USER_EXTRAS}


def test_the_table_names_each_package_of_the_extras_by_the_first_extra_that_lists_it():
    extras = extras_of_pyproject()
    first: dict[str, str] = {}
    for extra in USER_EXTRAS:
        for name in extras[extra]:
            if name != DISTRIBUTION:
                first.setdefault(name, extra)
    table = {distribution: extra for distribution, extra in EXTRA_OF_MODULE.values()}
    assert table == first


def test_help_runs_without_the_engine_packages():
    missing = ["PIL", "torch", "transformers", "open_clip", "accelerate", "safetensors", "gguf"]
    result = run_without(missing, "bla_eval.cli", ["--help"])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("usage: bla-eval")


@pytest.mark.parametrize(
    ("missing", "module", "argv", "line"),
    [
        (
            "torch",
            "bla_eval.cli",
            ["--model", "smollm2", "--output", "{tmp}/run", "--kind", "text"],
            'bla-eval: error: torch is missing: pip install "bla-benchmark[engine]"',
        ),
        (
            "PIL",
            "bla_eval.finetune.cli",
            ["--model", "m", "--output", "{tmp}/ft", "--task", "ap"],
            'bla-finetune: error: PIL (pillow) is missing: pip install "bla-benchmark[engine]"',
        ),
        (
            "statsmodels",
            "bla_eval.cli",
            ["analyze", str(RUN), "--data", "{data}", "--output", "{tmp}/analysis"],
            "bla-eval analyze: error: statsmodels is missing: "
            'pip install "bla-benchmark[analysis]"',
        ),
        (
            "PIL",
            "builders.__main__",
            ["release", "--out", "{tmp}/bla"],
            "python -m builders release: error: PIL (pillow) is missing: "
            'pip install "bla-benchmark[builders]"',
        ),
    ],
    ids=["bla-eval", "bla-finetune", "bla-eval analyze", "builders"],
)
def test_a_missing_package_names_its_extra_in_one_line(
    missing, module, argv, line, tmp_path, request
):
    if "{data}" in argv:  # the analyses read the run's rows before their own packages
        argv = [str(request.getfixturevalue("built_dataset")) if a == "{data}" else a for a in argv]
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    result = run_without([missing], module, argv)
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stderr.strip().splitlines()[-1] == line, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
