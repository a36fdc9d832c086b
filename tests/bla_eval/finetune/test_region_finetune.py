"""``bla-finetune`` of the region-ITM kind (VOLTA's controlled ViLBERT and LXMERT, Appendix D:
the whole model, the ITM objective): same-task and cross-task test splits, the "before" rows
equal to ``bla-eval``'s scores of the same model, the kept checkpoint a VOLTA folder again that
``bla-eval`` scores."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from bla_eval.benchmarks import get_benchmark, load_items
from bla_eval.cli import main as bla_eval
from bla_eval.finetune.cli import main as bla_finetune
from bla_eval.scorers import volta
from bla_eval.testing import region_models as rm
from bla_eval.testing.processors import bert_tokenizer

from tests.bla_eval.commands import before_is_bla_evals, call, finetune_args

pytestmark = pytest.mark.usefixtures("one_thread")
FEATURES = 64
"""Small region features: the training split's images all need rows."""
CONFIGS = ("coordination_learning", "active_passive_learning")


@pytest.fixture(scope="module")
def tsv(built_dataset: Path, tmp_path_factory) -> Path:
    images: dict[str, tuple[int, int]] = {}
    for split, limit in (("train", None), ("validation", 2), ("test", 2)):
        images |= dict(rm.dataset_images(str(built_dataset), CONFIGS, limit, split))
    path = tmp_path_factory.mktemp("regions") / "learning.tsv"
    return rm.write_region_tsv(path, images.items(), features=FEATURES)


@pytest.fixture(scope="module")
def models(built_dataset: Path, tiny_model) -> dict[str, Path]:
    bench = get_benchmark("bla")
    texts = []
    for split in ("train", "validation", "test"):
        texts += [
            c for i in load_items(bench, str(built_dataset), CONFIGS, split) for c in i.captions
        ]
    layouts = {"vilbert": rm.vilbert_layout(), "lxmert": rm.lxmert_layout()}

    def builder(layout: dict) -> Callable[[Path, list[str]], None]:
        def build(folder: Path, texts: list[str]) -> None:
            tok = bert_tokenizer(texts)
            rm.save_volta(folder, rm.volta_config(layout, len(tok), FEATURES), tok)

        return build

    return {
        name: tiny_model(f"volta-{name}-{FEATURES}", texts, builder(layout))
        for name, layout in layouts.items()
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", ["vilbert", "lxmert"])
def test_volta_models_fine_tune_and_start_from_bla_evals_scores(
    name, models, tsv, built_dataset, tmp_path, capsys
):
    out = tmp_path / "ft"
    argv = finetune_args(models[name], built_dataset, out, "--regions", tsv)
    argv[argv.index("--eval-tasks") + 1 : argv.index("--eval-tasks") + 2] = ["co", "ap"]
    code, err = call(bla_finetune, argv, capsys)
    assert code == 0, err
    document = json.loads((out / "finetune.json").read_text(encoding="utf-8"))
    run = document["runs"][0]
    assert document["kind"] == "region-itm" and document["regions"]["tsv_sha256"]
    assert run["finetuned"]["coordination_learning"]["setting"] == "SD"
    assert run["finetuned"]["active_passive_learning"]["setting"] == "DD"
    assert run["log"][0]["loss"] > 0
    # the "before" rows are bla-eval's scores of the same model on the same datapoints
    before_is_bla_evals(document, built_dataset, tmp_path / "eval", tsv)
    # the kept epoch is a VOLTA folder again: VOLTA's keys, heads kept, bla-eval scores it
    saved = torch.load(out / volta.WEIGHTS, weights_only=True)
    original = torch.load(models[name] / volta.WEIGHTS, weights_only=True)
    assert saved.keys() == original.keys()
    assert any(not torch.equal(saved[k], original[k]) for k in saved)
    again = tmp_path / "again"
    argv = ["--model", out, "--data", built_dataset, "--output", again, "--device", "cpu"]
    assert (
        bla_eval([str(a) for a in [*argv, "--tasks", CONFIGS[0], "--limit", "2", "--regions", tsv]])
        == 0
    )
