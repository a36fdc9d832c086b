"""The region-ITM kind (``bla_eval.scorers.region_itm``): transformers' LXMERT and VOLTA's
controlled LXMERT and ViLBERT scored on region features (``--regions``).

VOLTA's own model code (run outside the repository on micro weights saved in VOLTA's key names:
``tests/fixtures/regions``) is reproduced within 1e-5; the strict loaders consume the real
checkpoints' key lists completely; ``bla-eval`` at default settings with a TSV gives each pair
the model's forward on the same inputs (VOLTA's ``vil_logit`` index 0, LXMERT's
``cross_relationship_score`` index 1); the runs resume, refuse other regions, run as a sweep's
cell, and compare, export and the Space read them.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from bla_eval.benchmarks import get_benchmark, load_items
from bla_eval.cli import main as bla_eval
from bla_eval.regions.tsv import RegionTable
from bla_eval.scorers import volta
from bla_eval.scorers.resolve import resolve
from bla_eval.testing.region_models import dataset_images, write_region_tsv

from tests.bla_eval.commands import call, eval_args, killed_mid_run, refused, snapshot

pytestmark = pytest.mark.usefixtures("one_thread")
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "regions"
ROWS = ("lxmert-itm", "volta-lxmert", "volta-vilbert")
LIMIT = 3
"""Datapoints per task of the runs."""


@pytest.fixture(scope="module")
def models(built_dataset: Path, tiny_model) -> dict[str, Path]:
    """The tiny rows, their tokenizers trained on the scored sentences."""
    bench = get_benchmark("bla")
    items = load_items(bench, str(built_dataset), bench.task_names(), "test", 10)
    texts = [c for item in items for c in item.captions]
    return {name: tiny_model(name, texts) for name in ROWS}


@pytest.fixture(scope="module")
def tsv(built_dataset: Path, tmp_path_factory) -> Path:
    """Region features of the images of the first 10 datapoints of each task."""
    images = dataset_images(str(built_dataset), None, 10)
    return write_region_tsv(tmp_path_factory.mktemp("regions") / "regions.tsv", images)


@pytest.fixture(scope="module")
def runs(models, tsv, built_dataset, tmp_path_factory) -> dict[str, Path]:
    """A finished run of each row at default settings with the TSV."""
    out = {}
    for name in ROWS:
        folder = tmp_path_factory.mktemp(name) / "run"
        argv = eval_args(models[name], built_dataset, folder, "--limit", LIMIT)
        assert bla_eval([*argv, "--regions", str(tsv)]) == 0
        out[name] = folder
    return out


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ----------------------------------------------------------------------------- upstream forward
@pytest.mark.parametrize("name", ["ctrl_vilbert", "ctrl_lxmert"])
def test_voltas_own_forward_is_reproduced(name: str) -> None:
    """The folder VOLTA's ``BertForVLPreTraining`` loaded strictly: the same ``vil_logit``."""
    golden = json.loads((FIXTURES / "volta_golden" / "golden.json").read_text())[name]
    folder = FIXTURES / "volta_golden" / name
    model = volta.load(str(folder), volta.volta_config(str(folder)))
    ids = torch.tensor(golden["input_ids"])
    with torch.no_grad():
        got = model(
            ids,
            torch.tensor(golden["attention_mask"]),
            torch.zeros_like(ids),
            torch.tensor(golden["features"]),
            torch.tensor(golden["boxes"]),
            torch.tensor(golden["region_mask"]),
        )
    want = torch.tensor(golden["vil_logit"])
    assert torch.allclose(got, want, atol=1e-5, rtol=0), (got, want)
    assert not torch.allclose(want[0], want[1], atol=1e-4, rtol=0)  # the inputs matter


@pytest.mark.parametrize("name", ["ctrl_vilbert", "ctrl_lxmert"])
def test_the_real_checkpoints_keys_are_consumed_completely(name: str) -> None:
    """Every key of the released checkpoint is used or is a pre-training head, and every
    weight of the model is given, each at its shape (on the meta device: no memory)."""
    fixture = json.loads((FIXTURES / "volta_checkpoint_keys.json").read_text())
    doc, shapes = fixture["configs"][name], fixture["keys"][name]
    checkpoint = {k: torch.empty(s, device="meta") for k, s in shapes.items()}
    with torch.device("meta"):
        model = volta.build(doc)
    state = volta.convert(doc, checkpoint)
    wanted = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert {k: tuple(v.shape) for k, v in state.items()} == wanted
    dropped = [k for k in shapes if k.startswith(volta.DROPPED)]
    mapped = set(volta.key_map(doc))
    used = [k for k in shapes if k.rpartition(".")[0] in mapped]
    assert sorted(dropped + used) == sorted(shapes)
    assert {k.split(".")[1] for k in dropped} == {"predictions", "imagePredictions"}
    layers = volta.lxmert_layers(doc)
    assert layers == ((9, 5, 5) if name == "ctrl_lxmert" else None)


def test_a_checkpoint_key_neither_used_nor_a_head_is_refused(models, tmp_path) -> None:
    folder = tmp_path / "volta"
    shutil.copytree(models["volta-vilbert"], folder)
    checkpoint = torch.load(folder / volta.WEIGHTS, weights_only=True)
    torch.save({**checkpoint, "bert.extra.weight": torch.zeros(1)}, folder / volta.WEIGHTS)
    doc = volta.volta_config(str(folder))
    with pytest.raises(ValueError, match="'bert.extra.weight' is neither used nor a known head"):
        volta.load(str(folder), doc)
    del checkpoint["bert.v_pooler.dense.bias"]
    torch.save(checkpoint, folder / volta.WEIGHTS)
    with pytest.raises(ValueError, match="'head.v_pooler.bias' is not in the checkpoint"):
        volta.load(str(folder), doc)


def test_the_kind_is_read_from_the_models_own_files(models) -> None:
    for name in ROWS:
        assert resolve(str(models[name])).kind == "region-itm"
    assert volta.volta_config(str(models["lxmert-itm"])) is None  # a transformers config


# ----------------------------------------------------------------------------- scores
def expected(model_dir: Path, name: str, regions, sentence: str) -> float:
    """The match probability of one pair by the model's own forward, one pair at a time."""
    from transformers import AutoTokenizer, BertTokenizer, LxmertForPreTraining

    if name == "lxmert-itm":
        model = LxmertForPreTraining.from_pretrained(model_dir).eval()
        tokens = AutoTokenizer.from_pretrained(model_dir)(
            sentence, truncation=True, max_length=38, return_tensors="pt"
        )
        with torch.no_grad():
            out = model(
                input_ids=tokens["input_ids"],
                attention_mask=tokens["attention_mask"],
                visual_feats=torch.from_numpy(regions.features)[None],
                visual_pos=torch.from_numpy(regions.normalised_boxes())[None],
            )
        return out.cross_relationship_score.softmax(-1)[0, 1].item()
    model = volta.load(str(model_dir), volta.volta_config(str(model_dir)))
    ids = BertTokenizer.from_pretrained(model_dir)(
        sentence, truncation=True, max_length=38, return_tensors="pt"
    )["input_ids"]
    features, boxes = regions.volta_view()
    with torch.no_grad():
        logit = model(
            ids,
            torch.ones_like(ids),
            torch.zeros_like(ids),
            torch.from_numpy(features)[None],
            torch.from_numpy(boxes)[None],
            torch.ones(1, len(features), dtype=torch.long),
        )
    return logit.softmax(-1)[0, 0].item()


@pytest.mark.parametrize("name", ROWS)
@pytest.mark.slow
def test_scores_are_the_models_forward_on_the_tsvs_regions(name, runs, models, tsv, built_dataset):
    bench = get_benchmark("bla")
    items = {
        (i.task, i.id): i
        for i in load_items(bench, str(built_dataset), bench.task_names(), "test", LIMIT)
    }
    records = lines(runs[name] / "scores.jsonl")
    assert len(records) == 3 * LIMIT
    scores = [s for r in records for s in r["scores"]]
    assert all(math.isfinite(s) and 0 < s < 1 for s in scores) and len(set(scores)) > 1
    table = RegionTable(tsv)
    for record in records[::LIMIT]:  # the first datapoint of each task, every sentence
        item = items[(record["task"], record["id"])]
        regions = table.get(item.images[0].key.removeprefix("id:"))
        for sentence, score in zip(item.captions, record["scores"], strict=True):
            assert score == pytest.approx(expected(models[name], name, regions, sentence), abs=1e-5)
    # image-dependent: the same sentence with another image's regions scores otherwise
    first, other = records[0], records[LIMIT]
    sentence = items[(first["task"], first["id"])].captions[0]
    other_image = items[(other["task"], other["id"])].images[0].key.removeprefix("id:")
    moved = expected(models[name], name, table.get(other_image), sentence)
    assert abs(moved - first["scores"][0]) > 1e-6
    results = json.loads((runs[name] / "results.json").read_text())
    assert results["kind"] == "region-itm"
    assert results["protocol"]["regions"]["tsv_sha256"] == table.sha256
    assert results["protocol"]["text_max_length"] == 38
    index = 1 if name == "lxmert-itm" else 0
    assert results["protocol"]["score"].endswith(f"[{index}]")
    recorded = json.loads((runs[name] / "run.json").read_text())
    assert table.sha256 in json.dumps(recorded)


@pytest.mark.slow
def test_regions_are_needed_by_the_kind_and_refused_by_others(
    models, tiny_clip, tsv, built_dataset, tmp_path, capsys
) -> None:
    out = tmp_path / "run"
    argv = eval_args(models["volta-vilbert"], built_dataset, out, "--limit", 1)
    refused(bla_eval, argv, capsys, "model kind 'region-itm' reads region features: pass --regions")
    assert not out.exists()
    argv = eval_args(tiny_clip, built_dataset, out, "--limit", 1, "--regions", tsv)
    refused(bla_eval, argv, capsys, "model kind 'contrastive' reads images, not region features")
    assert not out.exists()
    argv = eval_args(models["volta-vilbert"], built_dataset, out, "--limit", 1)
    refused(bla_eval, [*argv, "--regions", tmp_path / "none.tsv"], capsys, "none.tsv: no such file")
    assert not out.exists()


@pytest.mark.slow
def test_an_image_the_tsv_lacks_is_named(models, built_dataset, tmp_path, capsys) -> None:
    tsv = write_region_tsv(tmp_path / "few.tsv", dataset_images(str(built_dataset), ["ap"], 1))
    argv = eval_args(models["volta-lxmert"], built_dataset, tmp_path / "run", "--tasks", "co")
    refused(bla_eval, [*argv, "--limit", 1, "--regions", tsv], capsys, "has no row for image_id")


# ----------------------------------------------------------------------------- resume
@pytest.mark.slow
def test_a_resume_with_other_regions_is_refused_and_keeps_the_scores(
    runs, models, built_dataset, tsv, tmp_path, capsys
) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["volta-vilbert"], run)
    before = snapshot(run)
    other = write_region_tsv(
        tmp_path / "other.tsv", dataset_images(str(built_dataset), None, 10), seed=1
    )
    argv = eval_args(models["volta-vilbert"], built_dataset, run, "--limit", LIMIT, "--resume")
    refused(bla_eval, [*argv, "--regions", other], capsys, "regions")
    assert snapshot(run) == before
    moved = tmp_path / "moved.tsv"  # the same features elsewhere: the same regions
    shutil.copy(tsv, moved)
    code, err = call(bla_eval, [*argv, "--regions", moved], capsys)
    assert code == 0, err
    assert (run / "scores.jsonl").read_bytes() == before["scores.jsonl"]


@pytest.mark.slow
def test_a_killed_run_resumed_equals_an_uninterrupted_one(models, tsv, built_dataset, tmp_path):
    """SIGKILL a real ``bla-eval`` process of a VOLTA model mid-run, resume it: the scores'
    bytes are those of a run never stopped."""
    argv = ["--model", str(models["volta-vilbert"]), "--data", str(built_dataset)]
    argv += ["--regions", str(tsv), "--limit", "10", "--device", "cpu"]
    argv += ["--batch-size", "1", "--images-per-batch", "1"]
    killed = tmp_path / "killed"
    written = killed_mid_run(argv, killed, 6, {"OMP_NUM_THREADS": "1"})
    scores = killed / "scores.jsonl"
    assert 6 <= written < 30 and not (killed / "results.json").exists()
    assert bla_eval([*argv, "--output", str(killed), "--resume"]) == 0
    assert bla_eval([*argv, "--output", str(tmp_path / "whole")]) == 0
    assert scores.read_bytes() == (tmp_path / "whole" / "scores.jsonl").read_bytes()
    resumed = json.loads((killed / "results.json").read_text(encoding="utf-8"))
    assert resumed["timings"]["datapoints_resumed"] >= 6


# ----------------------------------------------------------------------------- readers
@pytest.mark.slow
def test_a_sweep_cell_with_regions_scores_as_bla_eval(models, tsv, built_dataset, tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"""
models: [{{model: {models["volta-lxmert"]}, name: volta, regions: {tsv}}}]
benchmarks: [{{benchmark: bla, data: {built_dataset}, tasks: [ap]}}]
options: {{device: cpu, limit: 2}}
""",
        encoding="utf-8",
    )
    assert bla_eval(["sweep", str(plan), "--output", str(tmp_path / "sweep")]) == 0
    cells = list((tmp_path / "sweep").rglob("scores.jsonl"))
    assert len(cells) == 1
    argv = eval_args(models["volta-lxmert"], built_dataset, tmp_path / "alone", "--tasks", "ap")
    assert bla_eval([*argv, "--limit", "2", "--regions", str(tsv), "--name", "volta"]) == 0
    assert cells[0].read_bytes() == (tmp_path / "alone" / "scores.jsonl").read_bytes()
    assert RegionTable(tsv).sha256 in (cells[0].parent / "run.json").read_text()
    assert bla_eval(["sweep", str(plan), "--output", str(tmp_path / "sweep")]) == 0  # done


@pytest.mark.slow
def test_compare_export_and_the_space_read_the_runs(runs, tmp_path, capsys) -> None:
    from bla_space import results_store
    from bla_space.runner import CLI_ONLY_NOTE, space_kinds

    pair = [str(runs["volta-lxmert"]), str(runs["volta-vilbert"])]
    code, err = call(bla_eval, ["compare", *pair, "--output", str(tmp_path / "cmp")], capsys)
    assert code == 0, err
    assert (tmp_path / "cmp" / "compare.json").is_file()
    argv = ["export", pair[1], "--output", str(tmp_path / "exp"), "--format", "model-index"]
    code, err = call(bla_eval, [*argv, "--allow-partial"], capsys)
    assert code == 0, err
    root = tmp_path / "results"
    for name, run in runs.items():
        shutil.copytree(run, root / name)
    listed = results_store.list_runs(root)
    assert sorted(r.path.name for r in listed) == sorted(runs)
    assert {r.results["kind"] for r in listed} == {"region-itm"}
    assert "region-itm" not in space_kinds() and "--regions" in CLI_ONLY_NOTE
    from bla_space.config import SpaceConfig
    from bla_space.runner import AUTO, resolve_model

    space = SpaceConfig.from_env({"BLA_ALLOW_LOCAL_MODELS": "1", "BLA_RESULTS_DIR": str(root)})
    model = Path(json.loads((runs["volta-lxmert"] / "results.json").read_text())["model"])
    with pytest.raises(ValueError, match="is of kind region-itm. LXMERT and VOLTA"):
        resolve_model(space, str(model), AUTO)  # the Space says to score it from the CLI
    assert np.isfinite([r.results["tasks"]["active_passive"]["n"] for r in listed]).all()


@pytest.mark.slow
def test_reproduce_runs_the_vilbert_row_given_a_volta_folder_and_regions(
    models, tsv, built_dataset, tmp_path, capsys
) -> None:
    out = tmp_path / "row"
    base = ["reproduce", "vilbert", "--output", out, "--data", built_dataset, "--device", "cpu"]
    base += ["--limit", LIMIT, "--resamples", "0"]
    refused(bla_eval, [*base, "--model", models["volta-vilbert"]], capsys, "needs --regions: ")
    capsys.readouterr()
    assert bla_eval([str(a) for a in [*base, "--regions", tsv]]) == 0  # says what is missing
    assert "missing here: the checkpoint" in capsys.readouterr().out
    assert not out.exists()
    code, err = call(
        bla_eval, [*base, "--model", models["volta-vilbert"], "--regions", tsv], capsys
    )
    assert code in (0, 1), err
    assert json.loads((out / "results.json").read_text())["kind"] == "region-itm"
