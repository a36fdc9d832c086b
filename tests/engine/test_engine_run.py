"""The engine end to end with a tiny random CLIP on the real dataset: results, resume, errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest
from bla_eval.benchmarks.bla import load_bla
from bla_eval.config import RunConfig
from bla_eval.items import decode_image
from bla_eval.performance.dual_encoder import per_datapoint_loop
from bla_eval.run import evaluate
from bla_eval.run_folder import RESULTS_FILE, SCORES_FILE
from bla_eval.scorers import detect_kind
from bla_eval.scorers.base import Scored, Scorer
from bla_eval.scorers.resolved_model import ResolvedModel
from bla_eval.scoring import score_items
from transformers import CLIPModel

from bla_metric import formulas

RESULT_KEYS = {
    "benchmark",
    "model",
    "model_revision",
    "kind",
    "dataset",
    "dataset_revision",
    "split",
    "protocol",
    "tasks",
    "timings",
    "scores_file",
    "created",
    "bla_eval_version",
}


@pytest.fixture(scope="module")
def clip_run(tiny_clip: Path, built_dataset: Path, tmp_path_factory: pytest.TempPathFactory):
    """An uninterrupted run on the first 6 datapoints of each task, with its progress calls."""
    out = tmp_path_factory.mktemp("clip_run")
    calls: list[tuple[int, int, str]] = []
    config = RunConfig(
        str(tiny_clip), out, data=str(built_dataset), limit=6, batch_size=4, images_per_batch=4
    )
    results = evaluate(config, progress=lambda done, total, desc: calls.append((done, total, desc)))
    return out, results, calls, config


def records(out: Path) -> list[dict]:
    lines = (out / SCORES_FILE).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_results_document_follows_the_contract(clip_run):
    out, results, calls, _ = clip_run
    assert results["benchmark"] == "bla"
    assert json.loads((out / RESULTS_FILE).read_text(encoding="utf-8")) == results
    assert set(results) == RESULT_KEYS
    assert results["kind"] == "contrastive"
    assert results["dataset_revision"] == "1.0.0"
    assert list(results["tasks"]) == ["active_passive", "coordination", "relative_clause"]
    assert results["protocol"]["binary_view"] == "top-k"
    assert results["protocol"]["text_padding"] is True
    assert calls[-1][:2] == (18, 18) and calls[-1][2].startswith("scoring")
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)


def test_scores_file_has_one_record_per_datapoint(clip_run, built_dataset):
    out, _, _, _ = clip_run
    recs = records(out)
    assert len(recs) == 18
    assert all(set(r) == {"task", "id", "scores", "labels", "caption_types"} for r in recs)
    ds = datasets.load_dataset(str(built_dataset), "coordination", split="test").select(range(6))
    co = {r["id"]: r for r in recs if r["task"] == "coordination"}
    assert [co[row["id"]]["labels"] for row in ds] == [row["labels"] for row in ds]
    assert all(len(r["scores"]) == 4 and len(set(r["scores"])) == 4 for r in recs)


def test_metrics_equal_the_formulas_on_the_scores_file(clip_run):
    out, results, _, _ = clip_run
    recs = records(out)
    for task, metrics in results["tasks"].items():
        rows = [r for r in recs if r["task"] == task]
        scores, labels = [r["scores"] for r in rows], [r["labels"] for r in rows]
        assert metrics["n"] == 6
        assert metrics["ranking"] == formulas.ranking_metrics(scores, labels)
        predicted = formulas.top_k_labels(scores, labels)
        assert metrics["binary"] == formulas.binary_metrics(predicted, labels)
        types = [r["caption_types"] for r in rows]
        assert metrics["pairwise"] == formulas.pairwise_preferences(scores, types)


def test_engine_scores_equal_the_per_datapoint_loop(clip_run, tiny_clip, built_dataset):
    """Batching, shared images, cached sentences and dynamic padding do not change any score."""
    out, _, _, _ = clip_run
    points = load_bla(str(built_dataset), limit=2)
    logits = per_datapoint_loop(tiny_clip, points)
    scale = CLIPModel.from_pretrained(tiny_clip).logit_scale.exp().item()
    by_id = {(r["task"], r["id"]): r["scores"] for r in records(out)}
    for point, row in zip(points, logits, strict=True):
        assert by_id[(point.task, point.id)] == pytest.approx([v / scale for v in row], abs=1e-5)


class CountingScorer(Scorer):
    """A real (trivial) scorer: the number of words, and a record of what it was asked."""

    kind = "count"

    def __init__(self) -> None:
        super().__init__(ResolvedModel("word-count", "word-count", "count"))
        self.prepared: list[tuple[int, int]] = []
        self.sentences: list[str] = []

    def prepare_image(self, image):
        self.prepared.append(image.size)
        return image.size

    def score(self, images, queries):
        for group in queries:
            self.sentences.extend(q.sentence for q in group)
        return Scored([[float(len(q.sentence.split())) for q in group] for group in queries])


def test_each_image_is_prepared_once_across_tasks(built_dataset):
    points = load_bla(str(built_dataset), ["co", "rc"], limit=120)
    distinct_images = {p.images[0].key for p in points}
    assert len(distinct_images) < len(points)  # coordination and relative clause share images
    scorer, seen = CountingScorer(), []
    score_items(scorer, points, lambda p, s, a: seen.append((p, s[0])), images_per_batch=16)
    assert len(scorer.prepared) == len(distinct_images)
    assert sorted(p.id for p, _ in seen) == sorted(p.id for p in points)
    assert all(s == [float(len(c.split())) for c in p.captions] for p, s in seen)
    per_image = {}
    for p in points:
        per_image.setdefault(p.images[0].key, set()).update(p.captions)
    assert len(scorer.sentences) == sum(len(v) for v in per_image.values())
    assert decode_image(points[0], points[0].images[0]).mode == "RGB"


def test_resume_after_a_crash_gives_the_same_results(clip_run, tiny_clip, built_dataset, tmp_path):
    out, results, _, config = clip_run
    shutil.copy(out / "run.json", tmp_path / "run.json")
    lines = (out / SCORES_FILE).read_text(encoding="utf-8").splitlines(keepends=True)
    # a crash after 7 datapoints, in the middle of writing the 8th line
    (tmp_path / SCORES_FILE).write_text("".join(lines[:7]) + lines[7][:25], encoding="utf-8")
    resumed = evaluate(config.with_(output_dir=tmp_path, resume=True))
    assert resumed["timings"]["datapoints_resumed"] == 7
    assert resumed["timings"]["datapoints_scored"] == 11
    assert resumed["tasks"] == results["tasks"]
    before = {(r["task"], r["id"]): r for r in records(out)}
    after = {(r["task"], r["id"]): r for r in records(tmp_path)}
    assert after.keys() == before.keys()
    for key, record in after.items():
        assert record["scores"] == pytest.approx(before[key]["scores"], abs=1e-6)
        assert record["labels"] == before[key]["labels"]


def test_resume_refuses_changed_settings(clip_run, tiny_clip, built_dataset, tmp_path):
    out, _, _, config = clip_run
    shutil.copytree(out, tmp_path / "run")
    with pytest.raises(ValueError, match="similarity"):
        evaluate(config.with_(output_dir=tmp_path / "run", resume=True, similarity="clipscore"))


def test_without_resume_a_new_run_starts_fresh(clip_run, tiny_clip, built_dataset, tmp_path):
    out, _, _, config = clip_run
    shutil.copytree(out, tmp_path / "run")
    again = evaluate(config.with_(output_dir=tmp_path / "run", tasks=("ap",), limit=2))
    assert again["timings"]["datapoints_scored"] == 2
    assert len(records(tmp_path / "run")) == 2


def _write_dataset(rows: list[dict], out: Path, config: str = "active_passive") -> Path:
    data = out / "data" / config
    data.mkdir(parents=True)
    datasets.Dataset.from_list(rows).to_parquet(str(data / "test-00000-of-00001.parquet"))
    return out


def test_missing_image_is_named(built_dataset, tiny_clip, tmp_path):
    ds = datasets.load_dataset(str(built_dataset), "active_passive", split="test").select(range(3))
    ds = ds.cast_column("image", datasets.Image(decode=False))
    rows = [dict(r) for r in ds]
    rows[1]["image"] = {"bytes": None, "path": str(tmp_path / "gone.jpg")}
    data = _write_dataset(rows, tmp_path / "broken")
    with pytest.raises(ValueError, match=f"{rows[1]['id']}.*cannot be read"):
        evaluate(RunConfig(str(tiny_clip), tmp_path / "out", data=str(data), tasks=("ap",)))


def test_dataset_without_expected_fields_is_named(built_dataset, tiny_clip, tmp_path):
    ds = datasets.load_dataset(str(built_dataset), "active_passive", split="test").select(range(2))
    rows = [{k: v for k, v in r.items() if k not in ("captions", "image")} for r in ds]
    data = _write_dataset(rows, tmp_path / "fields")
    with pytest.raises(ValueError, match="lacks the field.*captions"):
        evaluate(RunConfig(str(tiny_clip), tmp_path / "out", data=str(data), tasks=("ap",)))


def test_unknown_model_kind_is_named(tmp_path):
    from transformers import ViTConfig

    ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=f"unknown model kind for '{tmp_path}'.*vit"):
        detect_kind(str(tmp_path))
