"""Nothing lost, nothing silently wrong in a run: locked output folders, resumes that must prove
their settings, non-finite scores named, and one-line errors for every bad argument."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bla_eval.cli import main
from bla_eval.config import RunConfig
from bla_eval.run import evaluate
from bla_eval.runs.files import LOCK_FILE, SCORES_FILE
from bla_eval.scorers import Scored, Scorer, register_kind, unregister_kind


@pytest.fixture(scope="module")
def small_run(tiny_clip: Path, built_dataset: Path, tmp_path_factory: pytest.TempPathFactory):
    config = RunConfig(
        str(tiny_clip),
        tmp_path_factory.mktemp("small") / "run",
        data=str(built_dataset),
        tasks=("co",),
        limit=3,
    )
    return config, evaluate(config)


def test_a_second_run_into_a_locked_folder_stops_at_once(small_run, tmp_path):
    config, _ = small_run
    out = tmp_path / "run"
    shutil.copytree(config.output_dir, out)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / LOCK_FILE).write_text(f"{other.pid}\n")
        before = (out / SCORES_FILE).read_bytes()
        with pytest.raises(ValueError, match=rf"{out}.*in use.*process {other.pid}"):
            evaluate(config.with_(output_dir=out))
        assert (out / SCORES_FILE).read_bytes() == before
    finally:
        other.kill()
        other.wait()
    # the holder is gone: its lock is stale and the next run takes the folder over
    results = evaluate(config.with_(output_dir=out))
    assert results["tasks"]["coordination"]["n"] == 3 and not (out / LOCK_FILE).exists()


def test_a_real_bla_eval_process_stops_at_a_folder_another_process_holds(small_run, tmp_path):
    """Another process holds the folder's lock (through the engine's own lock); a real
    ``bla-eval`` into that folder exits 2 at once, naming the folder and the other process, and
    writes nothing there."""
    config, _ = small_run
    out = tmp_path / "shared"
    out.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom pathlib import Path\n"
            "from bla_eval.runs import RunFolder\n"
            f"with RunFolder(Path({str(out)!r})).lock():\n"
            "    print('locked', flush=True)\n    time.sleep(120)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        argv = [
            "--model",
            config.model,
            "--data",
            config.data,
            "--output",
            str(out),
            "--tasks",
            "co",
            "--limit",
            "2",
        ]
        second = subprocess.run(
            [sys.executable, "-m", "bla_eval", *argv], capture_output=True, text=True, timeout=300
        )
    finally:
        holder.kill()
        holder.wait()
    assert second.returncode == 2, second.stderr[-2000:]
    assert second.stderr.strip().splitlines()[-1] == (
        f"bla-eval: error: output folder {out} is in use by another bla-eval run "
        f"(process {holder.pid}); wait for it or choose another --output"
    )
    assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # only the holder's lock


@register_kind
class NanScorer(Scorer):
    """A kind whose model returns NaN for every second sentence."""

    kind = "nan-maker"
    needs_images = False

    @classmethod
    def matches_name(cls, model: str) -> bool:
        return model == "nan-maker"

    def score(self, images, queries):
        return Scored(
            [[float("nan") if i % 2 else 1.0 for i, _ in enumerate(group)] for group in queries]
        )


unregister_kind("nan-maker")


def test_non_finite_scores_name_the_model(built_dataset, tmp_path):
    register_kind(NanScorer)
    try:
        config = RunConfig("nan-maker", tmp_path / "run", data=str(built_dataset), limit=2)
        with pytest.raises(ValueError, match="model 'nan-maker' produced a non-finite score"):
            evaluate(config)
    finally:
        unregister_kind("nan-maker")
    assert not (tmp_path / "run").exists()  # nothing was scored: the folder it made is gone


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--batch-size", "-4"], "-4"),
        (["--limit", "0"], "0"),
        (["--images-per-batch", "x"], "'x'"),
        (["--tasks", "ap,nope"], "'nope'"),
        (["--kind", "magic"], "'magic'"),
        (["--benchmark", "glue"], "'glue'"),
        (["--data", "/no/such/folder"], "/no/such/folder"),
        (["--dtype", "float7"], "float7"),
        (["--model", "/no/such/model"], "/no/such/model"),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(
    extra, named, tiny_clip, built_dataset, tmp_path, capsys
):
    out = tmp_path / "out"
    argv = [
        "--model",
        str(tiny_clip),
        "--output",
        str(out),
        "--data",
        str(built_dataset),
        "--limit",
        "1",
        *extra,
    ]
    with pytest.raises(SystemExit) if extra[0] in _ARGPARSE else _no_exit() as stop:
        code = main(argv)
    code = stop.value.code if extra[0] in _ARGPARSE else code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1, err
    assert named in err[-1] and "Traceback" not in "\n".join(err)
    assert not out.exists()


def test_output_that_is_a_file_is_named(tiny_clip, built_dataset, tmp_path, capsys):
    out = tmp_path / "results.txt"
    out.write_text("mine\n")
    assert (
        main(["--model", str(tiny_clip), "--output", str(out), "--data", str(built_dataset)]) == 2
    )
    assert capsys.readouterr().err.strip() == (
        f"bla-eval: error: output {out} exists and is not a folder: choose another path"
    )
    assert out.read_text() == "mine\n"


def test_debug_shows_the_traceback(tiny_clip, tmp_path):
    with pytest.raises(ValueError, match="no/such/folder"):
        main(
            [
                "--model",
                str(tiny_clip),
                "--output",
                str(tmp_path / "o"),
                "--data",
                "/no/such/folder",
                "--debug",
            ]
        )


_ARGPARSE = ("--batch-size", "--limit", "--images-per-batch", "--kind", "--benchmark")


class _no_exit:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
