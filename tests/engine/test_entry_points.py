"""Every command line of the project, run as a real process, answers a bad argument and a bad
path with one line ``<prog>: error: <message>`` on stderr and exit code 2 (no usage block, no
traceback); ``bla-eval --help`` and its argument errors import no torch."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bla_eval.cli import SUBCOMMANDS
from bla_eval.scorers import kinds

from builders.__main__ import SUBCOMMAND_MODULES

REPO_ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
VG = REPO_ROOT / "tests" / "fixtures" / "vg" / "release"
RUN = REPO_ROOT / "tests" / "fixtures" / "runs" / "smollm2"
OUT = "{tmp}/out"
NOWHERE = "{tmp}/does-not-exist"
FILE = "{tmp}/notes.txt"  # a file where a folder is expected

ONE_LINE = tuple[list[str], str]
"""argv after the program, and text the one error line holds."""

BLA_EVAL: dict[str, tuple[ONE_LINE, ONE_LINE]] = {
    # subcommand ("": the run itself): (bad argument, bad path)
    "": (
        (["--model", "m", "--output", OUT, "--limit", "0"], "--limit: must be at least 1"),
        (
            ["--model", "m", "--output", OUT, "--data", NOWHERE, "--kind", "contrastive"],
            f"dataset folder {NOWHERE} does not exist",
        ),
    ),
    "learning-report": ((["--bogus", str(RUN)], "unrecognized arguments"), ([NOWHERE], NOWHERE)),
    "analyze": (
        ([str(RUN), "--examples", "x"], "invalid int value: 'x'"),
        ([NOWHERE], f"run folder not found: {NOWHERE}"),
    ),
    "compare": (
        ([str(RUN), str(RUN), "--resamples", "x"], "invalid int value: 'x'"),
        ([str(RUN), NOWHERE], NOWHERE),
    ),
    "export": (
        ([str(RUN), "--format", "zz"], "invalid choice: 'zz'"),
        ([NOWHERE], NOWHERE),
    ),
    "reproduce": (
        (["CLIP", "--limit", "0"], "--limit: must be at least 1"),
        (["CLIP", "--run", NOWHERE], f"{NOWHERE} is not a finished run folder"),
    ),
}

BLA_FINETUNE: dict[str, tuple[ONE_LINE, ONE_LINE]] = {
    "": (
        (["--model", "m", "--output", OUT, "--task", "xx"], "invalid choice: 'xx'"),
        (["--model", NOWHERE, "--output", OUT, "--task", "ap"], NOWHERE),
    ),
}

BUILDERS: dict[str, tuple[ONE_LINE, ONE_LINE]] = {
    "release": (
        (["--out", OUT, "--bogus"], "unrecognized arguments: --bogus"),
        (["--source", NOWHERE, "--out", OUT], f"release not found: {NOWHERE}"),
    ),
    "publish": (
        (["--repo-id", "o/b"], "the following arguments are required: --tag"),
        (
            ["--source", NOWHERE, "--repo-id", "o/b", "--tag", "v1.0.0", "--dry-run"],
            f"{NOWHERE} has no manifest.json",
        ),
    ),
    "construct": (
        (["--vg", str(VG), "--task", "ap", "--out", OUT, "--limit", "0"], "must be at least 1"),
        (["--vg", NOWHERE, "--task", "ap", "--out", OUT], f"--vg: not a folder: {NOWHERE}"),
    ),
    "calibrate": (
        (["--release", NOWHERE, "--keep", "1.5"], "--keep: must be in (0, 1], got 1.5"),
        (["--release", NOWHERE], f"release not found: {NOWHERE}"),
    ),
    "valse": (
        (["--annotations", NOWHERE, "--images", NOWHERE, "--out", OUT, "--bogus"], "--bogus"),
        (
            ["--annotations", NOWHERE, "--images", NOWHERE, "--out", OUT],
            f"--annotations {NOWHERE} is not a folder",
        ),
    ),
    "vl-checklist": (
        (["--out", OUT], "the following arguments are required"),
        (["--annotations", NOWHERE, "--images", NOWHERE, "--out", OUT], NOWHERE),
    ),
    "winoground": (
        (["--out", OUT], "the following arguments are required"),
        (["--examples", NOWHERE, "--images", NOWHERE, "--out", OUT], NOWHERE),
    ),
    "space": (
        (["--out", OUT, "--bogus"], "unrecognized arguments: --bogus"),
        (
            ["--out", FILE, "--requirement", "bla-benchmark[space]"],
            f"output {FILE} exists and is not a folder",
        ),
    ),
    "metric-space": (
        (["--out", OUT, "--bogus"], "unrecognized arguments: --bogus"),
        (["--out", FILE], f"output {FILE} exists and is not a folder"),
    ),
}

PROGRAMS = {
    "bla-eval": ([str(BIN / "bla-eval")], BLA_EVAL),
    "bla-finetune": ([str(BIN / "bla-finetune")], BLA_FINETUNE),
    "python -m builders": ([sys.executable, "-m", "builders"], BUILDERS),
}

CASES = [
    (f"{program} {sub}".strip(), [*command, *([sub] if sub else []), *argv], expected)
    for program, (command, table) in PROGRAMS.items()
    for sub, cases in table.items()
    for argv, expected in cases
]


def test_the_table_covers_every_entry_point():
    assert set(BLA_EVAL) == {"", *SUBCOMMANDS}
    assert set(BUILDERS) == {"release", "publish", *SUBCOMMAND_MODULES}


@pytest.mark.parametrize(
    ("prog", "argv", "expected"),
    CASES,
    ids=[
        f"{prog}: {'bad path' if n % 2 else 'bad argument'}" for n, (prog, _, _) in enumerate(CASES)
    ],
)
def test_bad_input_is_one_line_exit_2(prog, argv, expected, tmp_path):
    fill = {"tmp": str(tmp_path)}
    (tmp_path / "notes.txt").write_text("not a folder", encoding="utf-8")
    done = subprocess.run(
        [a.format(**fill) for a in argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_ROOT,  # python -m builders runs from the repository root
        env={**_env(), "HF_HUB_OFFLINE": "1"},
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"{prog}: error: "), done.stderr
    assert expected.format(**fill) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "usage:" not in done.stderr
    assert not (tmp_path / "out").exists()


LIGHT = """
import sys
from bla_eval.cli import main

for argv in (["--help"], ["--model", "m"], ["--model", "m", "--output", "o", "--kind", "zz"]):
    try:
        main(argv)
    except SystemExit as stop:
        assert stop.code in (0, 2), stop.code
heavy = [m for m in ("torch", "transformers", "datasets", "gradio") if m in sys.modules]
assert not heavy, heavy
"""


def test_help_and_argument_errors_import_no_torch():
    done = subprocess.run(
        [sys.executable, "-c", LIGHT], capture_output=True, text=True, timeout=120, env=_env()
    )
    assert done.returncode == 0, done.stderr
    assert "--kind {" + ",".join(kinds()) + "}" in done.stdout  # choices without the modules
    assert done.stderr.count("\n") == 2  # the two argument errors, one line each


def test_help_is_quick():
    """``bla-eval --help`` as a console script (best of three: the machine may be busy)."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run([str(BIN / "bla-eval"), "--help"], capture_output=True, timeout=60)
        times.append(time.perf_counter() - start)
        assert done.returncode == 0
    print(f"bla-eval --help: best of 3 {min(times):.3f} s")
    assert min(times) < 5  # torch alone takes several seconds to import


def _env() -> dict[str, str]:
    """This process's environment without the variables that change the default paths."""
    return {k: v for k, v in os.environ.items() if k not in ("BLA_DATASET", "BLA_RELEASE_DIR")}
