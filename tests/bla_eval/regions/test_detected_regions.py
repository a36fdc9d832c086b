"""``--regions DETECTOR``: a run extracts its images' regions with the bottom-up-attention
detector (the tiny ``butd`` row), keeps them in the store, and a second run reads the store."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from bla_eval.benchmarks import get_benchmark, load_items
from bla_eval.cli import main as bla_eval
from bla_eval.regions.detector import BottomUpDetector
from bla_eval.testing.butd import random_image
from bla_eval.testing.processors import bert_tokenizer
from bla_eval.testing.region_models import save_volta, vilbert_layout, volta_config

from tests.bla_eval.commands import eval_args

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.slow]
LIMIT = 2


@pytest.fixture(scope="module")
def detector_and_model(built_dataset: Path, tiny_model) -> tuple[Path, Path]:
    """The tiny detector, and a tiny VOLTA ViLBERT reading features of the detector's size."""
    bench = get_benchmark("bla")
    items = load_items(bench, str(built_dataset), bench.task_names()[:1], "test", LIMIT)
    texts = [c for item in items for c in item.captions]
    detector = tiny_model("butd", texts)
    found = BottomUpDetector.from_pretrained(str(detector)).detect([random_image(0, 64, 80)])
    features = found[0].features.shape[1]

    def build(folder: Path, texts: list[str]) -> None:
        tok = bert_tokenizer(texts)
        save_volta(folder, volta_config(vilbert_layout(), len(tok), features=features), tok)

    return detector, tiny_model(f"ctrl_vilbert-{features}", texts, build)


def test_a_detector_extracts_once_and_a_second_run_reads_the_store(
    detector_and_model, built_dataset, tmp_path, monkeypatch, capsys
) -> None:
    detector, model = detector_and_model
    monkeypatch.setenv("BLA_CACHE_DIR", str(tmp_path / "cache"))
    outputs = []
    for name in ("first", "second"):
        out = tmp_path / name
        argv = eval_args(model, built_dataset, out, "--tasks", "ap", "--limit", LIMIT)
        assert bla_eval([*argv, "--regions", str(detector)]) == 0
        outputs.append((out, capsys.readouterr().err))
    stores = list((tmp_path / "cache" / "regions").iterdir())
    assert len(stores) == 1
    stored = [p for p in stores[0].rglob("*") if p.is_file() and not p.name.startswith(".")]
    assert len(stored) >= LIMIT  # one entry per distinct image at least
    assert "extracting regions" in outputs[0][1]
    assert "extracting regions" not in outputs[1][1]  # every image's regions were in the store
    first, second = ((out / "scores.jsonl").read_bytes() for out, _ in outputs)
    assert first == second
    records = [json.loads(line) for line in first.splitlines()]
    scores = [s for r in records for s in r["scores"]]
    assert all(math.isfinite(s) and 0 <= s <= 1 for s in scores)
    assert len({round(s, 6) for s in scores}) > 1
    recorded = json.loads((outputs[0][0] / "run.json").read_text())
    assert str(detector) in json.dumps(recorded)
