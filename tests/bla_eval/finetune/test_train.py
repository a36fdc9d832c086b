"""bla-finetune on the real AP training pairs with tiny random-weight models: the loss is wired
the right way round (training pairs become well above chance), the kept epoch is the best
validation epoch, the zero-shot rows are bla-eval's, the checkpoint scores through bla-eval,
errors are one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.finetune import FinetuneConfig, finetune
from bla_eval.finetune.cli import main as bla_finetune
from bla_eval.outputs import OWNER_FILE
from bla_eval.testing.dual_encoders import build_open_clip
from bla_eval.testing.itm import build_blip_itm
from bla_eval.testing.processors import word_tokenizer
from bla_eval.testing.sizes import TINY_LAYERS

from tests.bla_eval.commands import before_is_bla_evals

LIMIT = 16  # validation / test datapoints scored per epoch (training uses all 100 pairs)


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def tiny_blip(built_dataset: Path, tiny_model) -> Path:
    """A BLIP ITM architecture with random weights and a word-level tokenizer of the release."""
    import pandas as pd

    from bla_metric.schema import SENTENCES_SUFFIX

    files = [  # the configs of datapoints (the per-sentence ones hold the same sentences)
        f
        for f in (built_dataset / "data").glob("*/*.parquet")
        if not f.parent.name.endswith(SENTENCES_SUFFIX)
    ]
    words = sorted(
        {
            w
            for f in files
            for cs in pd.read_parquet(f, columns=["captions"]).captions
            for c in cs
            for w in c.split()
        }
    )

    def build(folder: Path, words: list[str]) -> None:
        build_blip_itm(folder, [], layers=TINY_LAYERS, tokenizer=word_tokenizer(words))

    return tiny_model("blip-itm-words", words, build)


def check_run(document: dict, kind: str) -> None:
    run = document["runs"][0]
    log = run["log"]
    assert document["kind"] == kind
    assert len(log) == 10
    # chance is 0.5: a loss with labels (or the hard negative) the wrong way round goes to 0
    assert log[0]["train_pair_accuracy"] < 0.7
    assert log[-1]["train_pair_accuracy"] >= 0.8
    assert max(e["train_pair_accuracy"] for e in log) >= 0.85
    best = max(e["validation_accuracy"] for e in log)
    first_best = next(e["epoch"] for e in log if e["validation_accuracy"] == best)
    assert run["kept_epoch"] == first_best
    sd = run["finetuned"]["active_passive_learning"]
    assert sd["setting"] == "SD" and sd["all"]["n"] == LIMIT
    dd = run["finetuned"]["coordination_learning"]
    assert dd["setting"] == "DD"
    assert dd["unseen"]["n"] == LIMIT - dd["seen_in_training"]


def scores_through_bla_eval(checkpoint: Path, data: Path, out: Path, kind: str) -> None:
    argv = ["--model", str(checkpoint), "--output", str(out), "--data", str(data)]
    assert bla_eval([*argv, "--tasks", "ap", "--limit", "3", "--device", "cpu"]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["kind"] == kind
    assert results["tasks"]["active_passive"]["n"] == 3


def test_itm_fine_tuning_learns_the_training_pairs(tiny_blip, built_dataset, tmp_path):
    out = tmp_path / "blip-ap"
    config = FinetuneConfig(
        model=str(tiny_blip),
        task="ap",
        output=str(out),
        data=str(built_dataset),
        learning_rate=3e-3,
        device="cpu",
        eval_tasks=("ap", "co"),
        limit=LIMIT,
    )
    document = finetune(config)
    check_run(document, "itm")
    before_is_bla_evals(document, built_dataset, tmp_path / "before")
    assert (
        json.loads((out / "finetune.json").read_text(encoding="utf-8"))["runs"] == document["runs"]
    )
    scores_through_bla_eval(out, built_dataset, tmp_path / "eval", "itm")


def test_contrastive_fine_tuning_learns_the_training_pairs(tiny_clip, built_dataset, tmp_path):
    out = tmp_path / "clip-ap"
    config = FinetuneConfig(
        model=str(tiny_clip),
        task="ap",
        output=str(out),
        data=str(built_dataset),
        learning_rate=1e-2,
        device="cpu",
        eval_tasks=("ap", "co"),
        limit=LIMIT,
    )
    document = finetune(config)
    check_run(document, "contrastive")
    before_is_bla_evals(document, built_dataset, tmp_path / "before")
    scores_through_bla_eval(out, built_dataset, tmp_path / "eval", "contrastive")


def test_seeds_report_mean_and_std(tiny_clip, built_dataset, tmp_path, capsys):
    out = tmp_path / "seeds"
    argv = ["--model", str(tiny_clip), "--task", "co", "--output", str(out), "--seeds", "2"]
    argv += ["--epochs", "1", "--limit", "4", "--eval-tasks", "co", "--device", "cpu"]
    assert bla_finetune([*argv, "--data", str(built_dataset)]) == 0
    assert "| coordination_learning | SD |" in capsys.readouterr().out
    document = json.loads((out / "finetune.json").read_text(encoding="utf-8"))
    assert document["checkpoints"] == ["seed-0", "seed-1"]
    assert all((out / c / "config.json").is_file() for c in document["checkpoints"])
    accuracy = document["summary"]["coordination_learning"]["finetuned"]["all"]["accuracy"]
    assert set(accuracy) == {"mean", "std"}
    assert [r["seed"] for r in document["runs"]] == [0, 1]
    capsys.readouterr()
    assert bla_eval(["learning-report", str(out)]) == 0
    mean = accuracy["mean"]
    zero = document["summary"]["coordination_learning"]["zero_shot"]["all"]["accuracy"]["mean"]
    row = f"| {tiny_clip} | fine-tuning | accuracy | – | {100 * (mean - zero):+.2f} | – |"
    assert row in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--task", "xx"], "argument --task: invalid choice: 'xx'"),
        (["--task", "ap", "--epochs", "0"], "--epochs: must be at least 1, got 0"),
        (["--task", "ap", "--lr", "-1"], "learning rate must be a positive number, got -1.0"),
        (["--task", "ap", "--model", "/no/such/model"], "'/no/such/model'"),
    ],
)
def test_bad_values_are_one_line_errors(tiny_clip, tmp_path, capsys, extra, message):
    out = tmp_path / "out"
    assert exit_code(["--model", str(tiny_clip), "--output", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert list(tmp_path.iterdir()) == []


def exit_code(argv: list[str]) -> int:
    """The exit status of ``bla-finetune argv`` (argparse errors exit instead of returning)."""
    try:
        return bla_finetune(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)


def test_a_generative_model_or_a_full_output_folder_is_refused(
    tiny_clip, built_dataset, tmp_path, capsys
):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("x", encoding="utf-8")
    argv = ["--model", str(tiny_clip), "--task", "ap", "--data", str(built_dataset)]
    assert bla_finetune([*argv, "--output", str(tmp_path / "full")]) == 2
    assert "is not empty (it holds keep.txt): choose an empty or new folder" in (
        capsys.readouterr().err
    )
    assert bla_finetune([*argv, "--output", str(tmp_path / "full"), "--overwrite"]) == 2
    assert "not written by `bla-finetune` (it holds keep.txt)" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"")
    argv = ["--model", str(gguf), "--task", "ap", "--output", str(tmp_path / "o")]
    assert bla_finetune([*argv, "--data", str(built_dataset)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is of kind 'text': bla-finetune trains" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "model.gguf"]


def test_open_clip_checkpoint_is_saved_in_open_clip_format(built_dataset, tiny_model, tmp_path):
    model = tiny_model("open_clip", [], build_open_clip)
    out = tmp_path / "oc-ap"
    config = FinetuneConfig(
        model=str(model),
        task="ap",
        output=str(out),
        data=str(built_dataset),
        learning_rate=1e-3,
        epochs=1,
        device="cpu",
        eval_tasks=("ap",),
        limit=2,
    )
    document = finetune(config)
    assert document["kind"] == "open_clip"
    before_is_bla_evals(document, built_dataset, tmp_path / "before")
    assert {p.name for p in out.iterdir()} == {
        OWNER_FILE,
        "finetune.json",
        "open_clip_config.json",
        "open_clip_model.safetensors",
    }
    scores_through_bla_eval(out, built_dataset, tmp_path / "eval", "open_clip")
