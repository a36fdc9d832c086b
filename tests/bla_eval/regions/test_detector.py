"""The bottom-up-attention detector (``bla_eval.regions.detector``) on tiny random weights in the
released checkpoint's layout.

The golden outputs (``tests/fixtures/regions/butd_golden.*``) were made outside the repository by
the reference itself: transformers' research-project Faster R-CNN (``lxmert/modeling_frcnn.py``)
loading the tiny folder strictly, its regions chosen by bottom-up-attention's
``generate_tsv.py`` (36 boxes); ``butd_golden.json`` holds the recipe of the weights and images.
``frcnn_vg_finetuned_keys.json`` lists the keys and shapes of the released checkpoint (the
reference's state dict at the released sizes).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from bla_eval.regions import RegionFeatures
from bla_eval.regions.detector import (
    CONFIG,
    WEIGHTS,
    BottomUpDetector,
    checkpoint_key,
    load_plan,
    unused_reason,
)
from bla_eval.testing.butd import (
    RELEASED,
    detector_config,
    random_image,
    save_detector,
    tiny_config,
)
from PIL import Image

pytestmark = pytest.mark.usefixtures("one_thread")
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "regions"
RECIPE = json.loads((FIXTURES / "butd_golden.json").read_text(encoding="utf-8"))
SMALL = {"min_size": 200, "max_size": 333}
"""A small resize for the checks that do not need the default one (tiny CPU time)."""


@pytest.fixture(scope="module")
def tiny(tiny_model) -> Path:
    """The golden fixture's tiny detector: seed 0, the released layout at tiny sizes."""
    return tiny_model("butd-golden", [], lambda folder, _: save_detector(folder, tiny_config()))


def _digest(state: dict[str, torch.Tensor]) -> str:
    import hashlib

    digest = hashlib.sha256()
    for key in sorted(state):
        digest.update(key.encode() + b"\0" + state[key].numpy().tobytes())
    return digest.hexdigest()


def _image(case: dict, release_dir: Path) -> Image.Image:
    if "seed" in case:
        return random_image(case["seed"], *case["size"])
    return Image.open(release_dir / "images" / f"{case['image_id']}.jpg")


def test_the_tiny_weights_are_the_golden_fixtures(tiny):
    state = torch.load(tiny / WEIGHTS, weights_only=True)
    assert _digest(state) == RECIPE["weights_digest"], "the builder changed: remake the fixture"


@pytest.mark.parametrize("case", RECIPE["cases"], ids=[c["name"] for c in RECIPE["cases"]])
def test_regions_equal_the_reference_detector(case, tiny, release_dir):
    """The reference's 36 boxes (as fractions of the image, the view the models read) and
    features within 1e-5, in its order; the default resize and 800/1333 both."""
    golden = np.load(FIXTURES / "butd_golden.npz")
    min_size, max_size = case["resize"]
    detector = BottomUpDetector.from_pretrained(str(tiny), min_size=min_size, max_size=max_size)
    (got,) = detector.detect([_image(case, release_dir)])
    height, width = case["image_size"]
    assert got.image_size == (height, width)
    scale = np.array([width, height, width, height], dtype=np.float32)
    want_boxes = golden[f"{case['name']}/boxes"]
    np.testing.assert_allclose(got.boxes / scale, want_boxes / scale, rtol=0, atol=1e-5)
    np.testing.assert_allclose(got.features, golden[f"{case['name']}/features"], rtol=0, atol=1e-5)


def test_the_proposals_equal_the_reference_proposals(tiny):
    """The stage before the choice: the RPN's 300 proposals of the resized image, in order."""
    from bla_eval.regions.preprocess import detector_input

    case = RECIPE["cases"][0]
    detector = BottomUpDetector.from_pretrained(str(tiny))
    pixels, size = detector_input(
        random_image(case["seed"], *case["size"]),
        600,
        1000,
        detector.cfg.pixel_mean,
        detector.cfg.pixel_std,
    )
    with torch.inference_mode():
        proposals = detector.rpn(detector.backbone(pixels), size, 36).numpy()
    want = np.load(FIXTURES / "butd_golden.npz")[f"{case['name']}/proposals"]
    np.testing.assert_allclose(proposals / 1000, want / 1000, rtol=0, atol=1e-6)


def test_the_released_checkpoints_keys_are_each_used_or_listed_unused():
    """The key list of unc-nlp/frcnn-vg-finetuned (the reference's state dict at the released
    sizes): every key fills one of the detector's tensors with its shape, or is one the module
    lists as unused (the batch-norm counters, class box regression, the attribute head)."""
    listed = json.loads((FIXTURES / "frcnn_vg_finetuned_keys.json").read_text(encoding="utf-8"))
    shapes = {key: tuple(shape) for key, shape in listed["keys"].items()}
    with torch.device("meta"):
        detector = BottomUpDetector(detector_config(RELEASED))
    plan = load_plan(detector, shapes)
    unused = set(shapes) - set(plan.values())
    assert len(plan) == len(detector.state_dict()) and set(plan.values()) <= set(shapes)
    assert all(unused_reason(key) for key in unused)
    assert {key for key in unused if not key.endswith("num_batches_tracked")} == {
        f"roi_heads.box_predictor.{name}"
        for name in (
            "bbox_pred.weight",
            "bbox_pred.bias",
            "cls_embedding.weight",
            "fc_attr.weight",
            "fc_attr.bias",
            "attr_score.weight",
            "attr_score.bias",
        )
    }
    assert len(shapes) == 640 and detector.cfg.feature_dim == 2048
    assert shapes[checkpoint_key("rpn.cell_anchors")] == (12, 4)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.update({"roi_heads.extra.weight": torch.zeros(1)}), "unknown keys roi_heads"),
        (lambda s: s.pop("backbone.res3.0.conv2.weight"), "lacks backbone.res3.0.conv2.weight"),
        (
            lambda s: s.update({"roi_heads.box_predictor.cls_score.bias": torch.zeros(3)}),
            r"has roi_heads.box_predictor.cls_score.bias \[3\] \(expected \[21\]\)",
        ),
    ],
    ids=["unknown key", "missing key", "wrong shape"],
)
def test_a_checkpoint_that_differs_is_refused_in_one_line(tiny, tmp_path, change, message):
    folder = tmp_path / "changed"
    folder.mkdir()
    (folder / CONFIG).write_bytes((tiny / CONFIG).read_bytes())
    state = torch.load(tiny / WEIGHTS, weights_only=True)
    change(state)
    torch.save(state, folder / WEIGHTS)
    with pytest.raises(ValueError, match=message) as err:
        BottomUpDetector.from_pretrained(str(folder))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "size",
    [(480, 640), (640, 480), (32, 32), (1, 1), (40, 900), (900, 40), (3, 700), (1500, 2000)],
)
def test_every_image_gives_exactly_36_finite_regions_inside_it(tiny, size):
    """Sizes and aspect ratios from a pixel to 2000 wide, 30:1 and 230:1 strips included."""
    detector = BottomUpDetector.from_pretrained(str(tiny), **SMALL)
    (regions,) = detector.detect([random_image(7, *size)])
    _check(regions, size)


def test_grey_palette_and_transparent_images_are_read_as_their_rgb(tiny):
    detector = BottomUpDetector.from_pretrained(str(tiny), **SMALL)
    grey = random_image(4, 120, 160).convert("L")
    for image in (grey, grey.convert("P"), grey.convert("RGBA")):
        (got,), (want,) = detector.detect([image]), detector.detect([image.convert("RGB")])
        assert np.array_equal(got.features, want.features) and got.count == 36


def test_too_few_proposals_after_their_nms_are_filled_up_with_the_best_suppressed(tiny):
    """With 10 proposals kept by the RPN's NMS, the next 26 are the best it suppressed."""
    import dataclasses

    from bla_eval.regions.preprocess import detector_input

    detector = BottomUpDetector.from_pretrained(str(tiny), **SMALL)
    few = BottomUpDetector(dataclasses.replace(detector.cfg, rpn_post_nms=10), **SMALL)
    few.load_checkpoint(torch.load(tiny / WEIGHTS, weights_only=True))
    image = random_image(3, 200, 300)
    pixels, size = detector_input(image, 200, 333, few.cfg.pixel_mean, few.cfg.pixel_std)
    with torch.inference_mode():
        res4 = few.backbone(pixels)
        kept, filled = detector.rpn(res4, size, 36), few.rpn(res4, size, 36)
    assert len(kept) == 300 and len(filled) == 36
    assert torch.equal(filled[:10], kept[:10]) and not torch.equal(filled[10:], kept[10:36])
    (regions,) = few.detect([image])
    _check(regions, (200, 300))


@pytest.mark.slow
def test_a_sample_of_bla_images_gives_36_regions_each_at_the_default_resize(tiny, release_dir):
    images = sorted((release_dir / "images").glob("*.jpg"))[::250]
    detector = BottomUpDetector.from_pretrained(str(tiny))
    opened = [Image.open(path) for path in images]
    for image, regions in zip(opened, detector.detect(opened), strict=True):
        _check(regions, (image.height, image.width))
    assert len(images) >= 5


def _check(regions: RegionFeatures, size: tuple[int, int]) -> None:
    height, width = size
    assert regions.image_size == size
    assert regions.features.shape == (36, 128) and regions.boxes.shape == (36, 4)
    assert np.isfinite(regions.features).all() and np.isfinite(regions.boxes).all()
    x1, y1, x2, y2 = regions.boxes.T
    assert (x1 >= 0).all() and (y1 >= 0).all() and (x2 <= width).all() and (y2 <= height).all()
    assert (x1 <= x2).all() and (y1 <= y2).all()


def test_a_second_detection_of_an_image_gives_the_same_regions(tiny):
    detector = BottomUpDetector.from_pretrained(str(tiny), **SMALL)
    image = random_image(5, 300, 400)
    first, second = detector.detect([image, image.copy()])
    (third,) = detector.detect([image])
    for other in (second, third):
        assert np.array_equal(first.features, other.features)
        assert np.array_equal(first.boxes, other.boxes)
    assert not np.array_equal(
        first.features, detector.detect([random_image(6, 300, 400)])[0].features
    )


def test_describe_names_the_folder_its_files_hash_and_the_settings(tiny):
    import hashlib

    detector = BottomUpDetector.from_pretrained(str(tiny), min_size=800, max_size=1333, boxes=10)
    digest = hashlib.sha256()
    for name in (CONFIG, WEIGHTS):
        digest.update(name.encode() + b"\0" + (tiny / name).read_bytes() + b"\0")
    assert detector.describe() == {
        "detector": str(tiny),
        "revision": None,
        "sha256": digest.hexdigest(),
        "resize": [800, 1333],
        "boxes": 10,
    }
    assert detector.detect([random_image(1, 100, 120)])[0].count == 10


def test_a_hub_id_loads_from_the_local_cache_with_its_revision(tiny, tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "models--org--tiny-butd"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for name in (CONFIG, WEIGHTS):
        (snapshot / name).write_bytes((tiny / name).read_bytes())
    detector = BottomUpDetector.from_pretrained("org/tiny-butd", **SMALL)
    assert detector.describe()["revision"] == commit and detector.describe()["sha256"] is None
    with pytest.raises(ValueError, match="detector 'org/absent' could not be fetched"):
        BottomUpDetector.from_pretrained("org/absent")


def test_a_folder_without_the_checkpoint_is_refused_in_one_line_naming_it(tiny, tmp_path):
    folder = tmp_path / "detector"
    folder.mkdir()
    (folder / CONFIG).write_bytes((tiny / CONFIG).read_bytes())
    with pytest.raises(ValueError) as err:
        BottomUpDetector.from_pretrained(str(folder))
    assert str(err.value).startswith(f"detector folder {folder} has no {WEIGHTS} ")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=f"detector folder {tmp_path} has no {CONFIG} "):
        BottomUpDetector.from_pretrained(str(tmp_path))
    with pytest.raises(ValueError, match="'./no-such' is not a local folder and not a Hub id"):
        BottomUpDetector.from_pretrained("./no-such")
    with pytest.raises(ValueError, match="unknown --device 'gpu'"):
        BottomUpDetector.from_pretrained(str(tiny), device="gpu")
    (folder / WEIGHTS).write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=f"{folder / WEIGHTS}: not a readable PyTorch"):
        BottomUpDetector.from_pretrained(str(folder))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["RESNETS"].pop("DEPTH"), "no setting RESNETS.DEPTH"),
        (lambda c: c["RESNETS"].update(OUT_FEATURES=["res5"]), "OUT_FEATURES must be"),
        (lambda c: c["RESNETS"].update(NORM="GN"), "NORM must be BN or FrozenBN"),
    ],
)
def test_a_config_the_detector_cannot_build_is_refused_naming_the_setting(
    tiny, tmp_path, edit, message
):
    config = tiny_config()
    edit(config)
    (tmp_path / CONFIG).write_text(yaml.safe_dump(config), encoding="utf-8")
    (tmp_path / WEIGHTS).write_bytes((tiny / WEIGHTS).read_bytes())
    with pytest.raises(ValueError, match=f"{tmp_path / CONFIG}: .*{message}"):
        BottomUpDetector.from_pretrained(str(tmp_path))


def test_lower_case_keys_and_python_tuples_read_as_the_reference_reads_them(tiny, tmp_path):
    """The reference aliases every key to its upper case and reads YAML with tuple tags."""
    text = (tiny / CONFIG).read_text(encoding="utf-8").replace("RESNETS:", "resnets:")
    weights = "BBOX_REG_WEIGHTS:\n  - 1.0\n  - 1.0\n  - 1.0\n  - 1.0"
    assert weights in text
    text = text.replace(weights, "BBOX_REG_WEIGHTS: !!python/tuple [1.0, 1.0, 1.0, 1.0]")
    (tmp_path / CONFIG).write_text(text, encoding="utf-8")
    (tmp_path / WEIGHTS).write_bytes((tiny / WEIGHTS).read_bytes())
    loaded = BottomUpDetector.from_pretrained(str(tmp_path), **SMALL)
    assert loaded.cfg == BottomUpDetector.from_pretrained(str(tiny), **SMALL).cfg


@pytest.mark.slow
def test_the_tiny_command_builds_the_detector_row(tmp_path, capsys):
    from bla_eval.testing.tiny import main as build_tiny

    folder = tmp_path / "butd"
    assert build_tiny(["--architecture", "butd", "--out", str(folder)]) == 0
    assert "kind regions" in capsys.readouterr().out
    (regions,) = BottomUpDetector.from_pretrained(str(folder), **SMALL).detect(
        [random_image(1, 64, 64)]
    )
    assert regions.count == 36
