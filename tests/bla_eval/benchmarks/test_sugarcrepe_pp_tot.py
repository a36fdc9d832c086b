"""SugarCrepe++'s text-only task (TOT) beside ITT: the formula against the authors' rule, and runs
of tiny random dual encoders (transformers' CLIP, open_clip's CLIP) on a small copy of the
authors' release, converted by the builder. Each recorded similarity is recomputed here from the
model's own text features, one caption at a time as the authors encode them, and TOT from those;
a kind without a text encoder (BLIP's ITM head) gives no TOT and its results say so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from bla_metric.neighbours import sugarcrepe
from tests.bla_eval.benchmarks.runs import records_by_task, run_bla_eval
from tests.bla_eval.commands import refused

pytestmark = pytest.mark.usefixtures("one_thread")

SUBSET = "replace_rel"
NOUNS = ["dog", "cat", "horse", "bird", "car", "boat", "tree"]
FIELD = "text_similarities"


def _triplets() -> list[dict]:
    """The release's records: six with three different captions, one whose second positive is
    the first (right by construction: sim(P1, P2) is a caption with itself), one whose negative
    is the first positive (wrong by construction: sim(P1, N) is)."""
    records = [
        {
            "id": k,
            "filename": f"00000000000{k}.jpg",
            "caption": f"a {NOUNS[k]} on a {NOUNS[k + 1]}",
            "caption2": f"on a {NOUNS[k + 1]} is a {NOUNS[k]}",
            "negative_caption": f"a {NOUNS[k]} under a {NOUNS[k + 1]}",
        }
        for k in range(6)
    ]
    same = "a horse near a bird"
    records.append(
        {
            "id": 6,
            "filename": "000000000000.jpg",
            "caption": same,
            "caption2": same,
            "negative_caption": "a bird near a horse",
        }
    )
    records.append(
        {
            "id": 7,
            "filename": "000000000001.jpg",
            "caption": "a boat behind a car",
            "caption2": "behind a car is a boat",
            "negative_caption": "a boat behind a car",
        }
    )
    return records


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """The SugarCrepe++ dataset repo of ``python -m builders sugarcrepe-pp``."""
    from PIL import Image

    from builders.__main__ import main as builders_main

    root = tmp_path_factory.mktemp("sugarcrepe_pp_tot")
    coco = root / "val2017"
    coco.mkdir()
    for k in range(6):
        image = Image.new("RGB", (36 + 4 * k, 32), (40 * k, 200 - 30 * k, 90))
        image.putpixel((k, k), (255, 255, 255))
        image.save(coco / f"00000000000{k}.jpg", format="JPEG")
    data = root / "SugarCrepe_pp" / "data"
    data.mkdir(parents=True)
    (data / f"{SUBSET}.json").write_text(json.dumps(_triplets()))
    out = root / "repo"
    argv = ["sugarcrepe-pp", "--annotations", str(data), "--images", str(coco), "--out", str(out)]
    assert builders_main(argv) == 0
    return out


@pytest.fixture(scope="module")
def vocabulary() -> list[str]:
    """Every caption of the release (the tiny models' tokenizers are trained on them)."""
    found = {r[k] for r in _triplets() for k in ("caption", "caption2", "negative_caption")}
    return sorted(found)


def _run(model: Path | str, repo: Path, out: Path, *extra: str) -> dict:
    return run_bla_eval(Path(model), repo, out, "sugarcrepe-pp", "--tasks", SUBSET, *extra)


def _records(run: Path) -> list[dict]:
    return records_by_task(run)[SUBSET]


def _authors_tot(cosines: np.ndarray) -> bool:
    """The authors' rule on [P1, P2, N]: ``p1_p2 > p1_ref and p1_p2 > p2_ref``."""
    return bool(cosines[0, 1] > cosines[0, 2] and cosines[0, 1] > cosines[1, 2])


def _check_run(results: dict, records: list[dict], cosines: list[np.ndarray]) -> None:
    """The recorded similarities are the independent cosines; TOT is the authors' rule on them
    (designed items: 6 right, 7 wrong); ITT is still both positives above the negative."""
    assert sorted(int(r["id"]) for r in records) == list(range(8))  # in the order of images
    for record, own in zip(records, cosines, strict=True):
        assert set(record) == {"task", "id", "scores", "labels", "caption_types", FIELD}
        assert np.asarray(record[FIELD]) == pytest.approx(own, abs=1e-5)
    margins = sugarcrepe.text_only_margins([r[FIELD] for r in records], [[1, 1, 0]] * 8)
    assert np.abs(margins).min() > 1e-4  # no outcome turns on the last bits
    right = [_authors_tot(c) for c in cosines]
    designed = {r["id"]: ok for r, ok in zip(records, right, strict=True)}
    assert designed["6"] and not designed["7"]
    tot = results["tasks"][SUBSET]["tot"]
    assert tot == {"tot": pytest.approx(np.mean(right)), "ties": 0, "n": 8}
    itt = [min(r["scores"][:2]) > r["scores"][2] for r in records]
    assert results["tasks"][SUBSET]["itt"]["itt"] == pytest.approx(np.mean(itt))


# ----------------------------------------------------------------------------- formula


def test_tot_is_the_authors_rule_strict_with_ties_counted() -> None:
    rng = np.random.default_rng(0)
    matrices, expected = [], []
    for _ in range(200):
        values = np.round(rng.uniform(-1, 1, 3), 1)  # coarse: many ties
        p1p2, p1n, p2n = values
        matrix = [[1.0, p1p2, p1n], [p1p2, 1.0, p2n], [p1n, p2n, 1.0]]
        matrices.append(matrix)
        expected.append(bool(p1p2 > p1n and p1p2 > p2n))
    labels = [[1, 1, 0]] * len(matrices)
    outcomes = sugarcrepe.text_only_outcomes(matrices, labels)
    assert outcomes.tolist() == [float(e) for e in expected]
    found = sugarcrepe.text_only_accuracy(matrices, labels)
    ties = sum(m[0][1] == max(m[0][2], m[1][2]) for m in matrices)
    assert found == {"tot": pytest.approx(np.mean(expected)), "ties": ties, "n": 200}
    assert ties > 0
    # the captions in any order: the labels say which are the positives
    moved = [[[m[i][j] for j in (2, 0, 1)] for i in (2, 0, 1)] for m in matrices]
    assert sugarcrepe.text_only_outcomes(moved, [[0, 1, 1]] * 200).tolist() == (outcomes.tolist())


@pytest.mark.parametrize(
    ("matrix", "labels", "fragment"),
    [
        ([[1.0, 0.5], [0.5, 1.0]], [1, 1, 0], "3 x 3"),
        ([[1.0, 0.5, 0.2], [0.5, 1.0, 0.1], [0.2, 0.1, 1.0]], [1, 0, 0], "two true captions"),
        ([[1.0, 0.5, 0.2], [0.5, 1.0, 0.1], [0.2, 0.1, 1.0]], [1, 1, 1], "two true captions"),
    ],
)
def test_tot_refuses_items_it_cannot_read(matrix, labels, fragment) -> None:
    with pytest.raises(ValueError, match=fragment):
        sugarcrepe.text_only_accuracy([matrix], [labels])
    with pytest.raises(ValueError, match="empty"):
        sugarcrepe.text_only_accuracy([], [])


# ----------------------------------------------------------------------------- runs


def test_only_sugarcrepe_pp_asks_for_text_similarities() -> None:
    """The records of every other benchmark keep their fields (and bytes)."""
    from bla_eval.benchmarks import benchmark_names, get_benchmark

    asking = [name for name in benchmark_names() if get_benchmark(name).text_similarities]
    assert asking == ["sugarcrepe-pp"]


def test_a_contrastive_clip_records_its_text_cosines_and_gets_tot(
    repo, vocabulary, tiny_model, tmp_path
) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    clip = tiny_model("clip", vocabulary)
    run = tmp_path / "clip"
    results = _run(clip, repo, run)
    records = _records(run)
    model = AutoModel.from_pretrained(clip).eval()
    tokenizer = AutoTokenizer.from_pretrained(clip)
    cosines = []
    with torch.inference_mode():
        for record in records:
            source = next(t for t in _triplets() if str(t["id"]) == record["id"])
            captions = [source["caption"], source["caption2"], source["negative_caption"]]
            feats = []
            for caption in captions:  # one at a time, as the authors encode them
                out = model.get_text_features(**tokenizer([caption], return_tensors="pt"))
                out = out if isinstance(out, torch.Tensor) else out.pooler_output
                feats.append(torch.nn.functional.normalize(out.float(), dim=-1)[0])
            stacked = torch.stack(feats)
            cosines.append((stacked @ stacked.T).numpy())
    _check_run(results, records, cosines)


def test_an_open_clip_model_records_the_cosines_open_clip_gives(
    repo, vocabulary, tiny_model, tmp_path
) -> None:
    import open_clip
    import torch
    from bla_eval.testing.dual_encoders import build_open_clip

    folder = tiny_model("open_clip", vocabulary, build_open_clip)  # open_clip's own tokenizer
    run = tmp_path / "run"
    results = _run(folder, repo, run)
    assert results["kind"] == "open_clip"
    records = _records(run)
    name = f"local-dir:{folder}"
    model, _, _ = open_clip.create_model_and_transforms(name)
    model.eval()
    tokenizer = open_clip.get_tokenizer(name)
    cosines = []
    with torch.inference_mode():
        for record in records:
            source = next(t for t in _triplets() if str(t["id"]) == record["id"])
            captions = [source["caption"], source["caption2"], source["negative_caption"]]
            feats = torch.cat([model.encode_text(tokenizer(c), normalize=True) for c in captions])
            cosines.append((feats @ feats.T).float().numpy())
    _check_run(results, records, cosines)


def test_a_kind_without_a_text_encoder_gives_no_tot_and_says_so(
    repo, vocabulary, tiny_model, tmp_path
) -> None:
    from bla_eval.report import markdown_table

    itm = tiny_model("blip-itm", vocabulary)
    results = _run(itm, repo, tmp_path / "itm")
    records = _records(tmp_path / "itm")
    assert all(FIELD not in r for r in records)
    task = results["tasks"][SUBSET]
    assert "tot" not in task["tot"]
    assert "not computed: 8 of 8 records hold no text_similarities" in task["tot"]["not_computed"]
    itt = [min(r["scores"][:2]) > r["scores"][2] for r in records]
    assert task["itt"]["itt"] == pytest.approx(np.mean(itt))
    table = markdown_table(results)
    tot_block = table.split("TOT, text encoder only", 1)[1].split("\n\n")[1]
    assert tot_block.splitlines()[2].endswith("(itm) | – |")  # the view is there, its cell empty


def test_a_resumed_run_gives_the_same_similarities_and_checks_kept_ones(
    repo, vocabulary, tiny_model, tmp_path, capsys
) -> None:
    from bla_eval.cli import main as bla_eval

    clip = tiny_model("clip", vocabulary)
    whole = tmp_path / "whole"
    _run(clip, repo, whole, "--images-per-batch", "1")
    lines = (whole / "scores.jsonl").read_text().splitlines(keepends=True)
    cut = tmp_path / "cut"
    shutil.copytree(whole, cut)
    (cut / "results.json").unlink()
    (cut / "scores.jsonl").write_text("".join(lines[:3]))
    _run(clip, repo, cut, "--images-per-batch", "1", "--resume")
    assert (cut / "scores.jsonl").read_bytes() == (whole / "scores.jsonl").read_bytes()
    bad = tmp_path / "bad"
    shutil.copytree(whole, bad)
    (bad / "results.json").unlink()
    first = json.loads(lines[0])
    first[FIELD] = first[FIELD][:2]
    (bad / "scores.jsonl").write_text(json.dumps(first) + "\n")
    argv = ["--benchmark", "sugarcrepe-pp", "--model", clip, "--data", repo, "--output", bad]
    argv += ["--device", "cpu", "--tasks", SUBSET, "--images-per-batch", "1", "--resume"]
    refused(bla_eval, [str(a) for a in argv], capsys, "line 1", FIELD, "3 row(s) of 3 values")


def test_a_controls_tot_is_the_runs(repo, vocabulary, tiny_model, tmp_path) -> None:
    """The text encoder sees no image: against a shuffled control image TOT stays the run's."""
    clip = tiny_model("clip", vocabulary)
    results = _run(clip, repo, tmp_path / "control", "--control", "shuffled")
    control = results["control"]["tasks"][SUBSET]["metrics"]
    assert control["tot"] == results["tasks"][SUBSET]["tot"]
    assert "n" in control["tot"] and control["tot"]["n"] == 8
