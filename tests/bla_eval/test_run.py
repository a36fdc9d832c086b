"""The engine end to end with a tiny random CLIP on the real dataset: results, resume, errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import datasets
import pytest
from bla_eval.batching import PREFETCH_THREADS
from bla_eval.benchmarks.bla import load_bla
from bla_eval.cli import main as bla_eval
from bla_eval.config import RunConfig
from bla_eval.items import decode_image
from bla_eval.outputs import OWNER_FILE
from bla_eval.performance.dual_encoder import per_datapoint_loop
from bla_eval.report import markdown_table, paper_tables
from bla_eval.run import evaluate
from bla_eval.runs import RESULTS_FILE, SCORES_FILE, RunFolder
from bla_eval.runs.files import LOCK_FILE
from bla_eval.scorers import (
    Capabilities,
    Scored,
    Scorer,
    detect_kind,
    register_kind,
    unregister_kind,
)
from bla_eval.scorers.resolved_model import ResolvedModel
from bla_eval.scoring import score_items
from transformers import CLIPModel

from bla_metric import formulas
from tests.bla_eval.commands import LIMIT, call, copy_run, eval_args, refused, snapshot, user_folder

pytestmark = pytest.mark.usefixtures("one_thread")

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
    "confidence_intervals",
    "provenance",
    "score",
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
    score_items(scorer, points, lambda p, s, a, t: seen.append((p, s[0])), images_per_batch=16)
    assert len(scorer.prepared) == len(distinct_images)
    assert sorted(p.id for p, _ in seen) == sorted(p.id for p in points)
    assert all(s == [float(len(c.split())) for c in p.captions] for p, s in seen)
    per_image = {}
    for p in points:
        per_image.setdefault(p.images[0].key, set()).update(p.captions)
    assert len(scorer.sentences) == sum(len(v) for v in per_image.values())
    assert decode_image(points[0], points[0].images[0]).mode == "RGB"


def test_a_run_that_fails_mid_scoring_leaves_no_prefetching_thread(built_dataset):
    """An error while scoring (here: writing a record) closes the prefetching at once, while
    the error and its traceback are still held: nothing is left for the garbage collector to
    close later in another thread."""
    points = load_bla(str(built_dataset), ["co", "rc"], limit=60)

    def full_disk(item, *_):
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left") as raised:
        score_items(CountingScorer(), points, full_disk, images_per_batch=2)
    deadline = time.monotonic() + 10
    while any(t.name.startswith(PREFETCH_THREADS) for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the prefetching threads outlived the failed run"
        time.sleep(0.01)
    assert raised.traceback  # still held


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


def _users_results(tmp_path: Path) -> tuple[Path, Path, str]:
    folder = user_folder(tmp_path / "mine")
    return folder, folder, "is not empty and is not a bla-eval run folder (it holds results.json"


def _another_commands_output(tmp_path: Path) -> tuple[Path, Path, str]:
    folder = tmp_path / "analysis"
    folder.mkdir()
    (folder / "report.md").write_text("# my analysis\n", encoding="utf-8")
    marker = {"command": "bla-eval analyze", "files": ["report.md"]}
    (folder / OWNER_FILE).write_text(json.dumps(marker), encoding="utf-8")
    return folder, folder, "holds the output of `bla-eval analyze`"


def _working_directory(tmp_path: Path) -> tuple[Path, Path, str]:
    folder = user_folder(tmp_path / "cwd")
    os.chdir(folder)
    return Path("."), folder, "is the working directory or holds it"


def _symlink(tmp_path: Path) -> tuple[Path, Path, str]:
    folder = user_folder(tmp_path / "real")
    (tmp_path / "link").symlink_to(folder, target_is_directory=True)
    return tmp_path / "link", folder, "is a symbolic link"


@pytest.mark.parametrize(
    "make",
    [_users_results, _another_commands_output, _working_directory, _symlink],
    ids=["user's own results.json", "another command's output", "working directory", "symlink"],
)
def test_bla_eval_writes_only_into_its_own_run_folders(
    make, tiny_clip, built_dataset, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    output, protected, message = make(tmp_path)
    before = snapshot(protected)
    argv = eval_args(tiny_clip, built_dataset, output, "--tasks", "co", "--limit", "2")
    refused(bla_eval, argv, capsys, message)
    assert snapshot(protected) == before


def test_bla_eval_reruns_into_its_own_folder_but_not_a_run_json_without_marker(
    co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    run = copy_run(co_run, tmp_path)
    argv = eval_args(tiny_clip, built_dataset, run, "--tasks", "co", "--limit", LIMIT)
    assert call(bla_eval, [*argv, "--overwrite"], capsys)[0] == 0
    assert json.loads((run / OWNER_FILE).read_text())["command"] == "bla-eval"
    (run / OWNER_FILE).unlink()  # a folder of the user's holding the files of a run
    before = snapshot(run)
    refused(bla_eval, [*argv, "--overwrite"], capsys, f"output {run} is not empty and is not")
    assert snapshot(run) == before


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
    before = (out / SCORES_FILE).read_bytes()
    in_use = rf"{out}.*in use.*process {os.getpid()}"
    # held here: a second holder (another open of the file) stops at once
    with RunFolder(out).lock(), pytest.raises(ValueError, match=in_use):
        evaluate(config.with_(output_dir=out))
    assert (out / SCORES_FILE).read_bytes() == before
    # a lock file no process holds is taken over (the pid in it, even a live one, proves nothing)
    (out / LOCK_FILE).write_text(f"{os.getpid()}\n")
    results = evaluate(config.with_(output_dir=out, overwrite=True))
    assert results["tasks"]["coordination"]["n"] == 3 and not (out / LOCK_FILE).exists()


def test_a_lock_file_that_is_a_symbolic_link_is_refused(small_run, tmp_path):
    config, _ = small_run
    out = tmp_path / "run"
    shutil.copytree(config.output_dir, out)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    (out / LOCK_FILE).symlink_to(victim)
    with pytest.raises(ValueError, match=rf"{out / LOCK_FILE} is a symbolic link"):
        evaluate(config.with_(output_dir=out))
    assert victim.read_text() == "mine\n" and (out / LOCK_FILE).is_symlink()


@pytest.mark.slow
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
    def matches_name(cls, model: Capabilities) -> bool:
        return model.path == "nan-maker"

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


def test_caption_pmi_chooses_alpha_on_no_more_datapoints_than_the_run_scores(
    tiny_llava, built_dataset, tmp_path, capsys
):
    """``--limit 3``: alpha is chosen on 3 learning datapoints per task, not 100; the output,
    results.json's ``score`` and every printed table say which score and alpha made them."""
    out = tmp_path / "run"
    argv = eval_args(tiny_llava, built_dataset, out, "--tasks", "co", "--limit", 3)
    code, err = call(bla_eval, [*argv, "--score", "caption-pmi", "--table-format", "csv"], capsys)
    assert code == 0, err
    score = json.loads((out / RESULTS_FILE).read_text(encoding="utf-8"))["score"]
    assert score["name"] == "caption-pmi" and isinstance(score["alpha"], float)
    assert "coordination_learning/validation (3)" in score["alpha_source"]
    assert "at most --limit 3 per task" in score["alpha_source"]
    assert f"caption-pmi: alpha {score['alpha']:g} chosen on" in err
    results = json.loads((out / RESULTS_FILE).read_text(encoding="utf-8"))
    heading = f"Score: caption-pmi, alpha {score['alpha']:g} (chosen on"
    assert markdown_table(results).startswith(heading)
    assert all(heading in table.title for table in paper_tables(results))


def test_a_table_names_the_score_its_kind_computes(co_run):
    """A dual encoder's run records its cosine, not the yes-no of ``--score``'s default (kept
    in ``protocol``, where none is asked); a run of an earlier version shows what it recorded."""
    results = json.loads((co_run / RESULTS_FILE).read_text(encoding="utf-8"))
    assert results["score"] == {"name": "cosine"}
    assert markdown_table(results).startswith("Score: cosine\n")
    older = {**results, "score": {"name": "yes-no"}}
    assert markdown_table(older).startswith("Score: yes-no\n")


def test_each_kind_names_what_it_computes():
    import transformers as tf
    from bla_eval.scorers import ResolvedModel
    from bla_eval.scorers.registry import scorer_class

    def name(kind, config=None, score="yes-no", similarity="cosine", prompted=False):
        model = ResolvedModel("m", "m", kind, config)
        return scorer_class(kind).score_name(model, score, similarity, prompted)

    itm = tf.BlipConfig(architectures=["BlipForImageTextRetrieval"])
    pair = tf.BridgeTowerConfig(architectures=["BridgeTowerForContrastiveLearning"])
    assert name("text") == "mean log-probability" and name("text", prompted=True) == "yes-no"
    assert name("contrastive") == "cosine" and name("open_clip", similarity="clipscore") == (
        "clipscore"
    )
    assert name("itm", itm) == "match probability" and name("itm", pair) == "cosine"
    assert name("generative") == "yes-no" and name("generative", score="caption") == "caption"
    assert name("openai-api", score="caption-pmi") == "caption-pmi"
