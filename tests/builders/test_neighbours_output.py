"""The other benchmarks' builders (VALSE, VL-CheckList, Winoground, SugarCrepe(++), ARO, MMVP-VLM)
replace only a build of their own: ``--out`` pointing at a BLA release build (or another
neighbour's) is refused in one line, before anything is read, and the shared writer refuses it
again if called directly."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from builders import aro, mmvp_vlm, sugarcrepe, sugarcrepe_pp, valse, vl_checklist, winoground
from builders.__main__ import main as builders_main
from builders.release import build_release


@pytest.fixture(scope="module")
def bla_build(small: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BLA release build of the miniature release (what a user's ./bla_dataset holds)."""
    out = tmp_path_factory.mktemp("bla") / "bla_dataset"
    build_release(small, out, progress=False)
    return out


def _image_ids(small: Path) -> list[str]:
    return sorted(p.stem for p in (small / "images").iterdir())


def valse_inputs(small: Path, tmp: Path) -> tuple[Callable, list[str], list]:
    """One validated VALSE record on an image of the release."""
    folder = tmp / "valse"
    folder.mkdir(parents=True)
    record = {
        "caption": "A man rides a horse.",
        "foil": "A horse rides a man.",
        "image_file": f"v7w_{_image_ids(small)[0]}.jpg",
        "mturk": {"caption": 3, "foil": 0, "other": 0},
    }
    (folder / "existence.json").write_text(json.dumps({"1": record}), encoding="utf-8")
    images = small / "images"
    argv = ["valse", "--annotations", str(folder), "--images", str(images)]
    return valse.build_valse, argv, [folder, [images]]


def vl_checklist_inputs(small: Path, tmp: Path) -> tuple[Callable, list[str], list]:
    """One item of one VL-CheckList corpus, its Visual Genome image in a flat folder."""
    folder = tmp / "vlc"
    path = folder / vl_checklist.corpus_file("Object_Size_large_vg_obj")
    path.parent.mkdir(parents=True)
    item = [f"VG_100K/{_image_ids(small)[0]}.jpg", {"POS": ["a large dog"], "NEG": ["a cat"]}]
    path.write_text(json.dumps([item]), encoding="utf-8")
    images = small / "images"
    argv = ["vl-checklist", "--annotations", str(folder), "--images", str(images)]
    return vl_checklist.build_vl_checklist, argv, [folder, [images]]


def winoground_inputs(small: Path, tmp: Path) -> tuple[Callable, list[str], list]:
    """One Winoground example with its two images."""
    images = tmp / "wino_images"
    images.mkdir(parents=True)
    first, second = _image_ids(small)[:2]
    shutil.copy(small / "images" / f"{first}.jpg", images / "ex_0_img_0.jpg")
    shutil.copy(small / "images" / f"{second}.jpg", images / "ex_0_img_1.jpg")
    example = {
        "id": 0,
        "image_0": "ex_0_img_0",
        "image_1": "ex_0_img_1",
        "caption_0": "a dog chases a cat",
        "caption_1": "a cat chases a dog",
    }
    examples = tmp / "examples.jsonl"
    examples.write_text(json.dumps(example) + "\n", encoding="utf-8")
    argv = ["winoground", "--examples", str(examples), "--images", str(images)]
    return winoground.build_winoground, argv, [examples, images]


def sugarcrepe_inputs(
    small: Path, tmp: Path, plus: bool = False
) -> tuple[Callable, list[str], list]:
    """One SugarCrepe (or SugarCrepe++) item on an image of the release, named as COCO's are."""
    folder = tmp / "sugar"
    folder.mkdir(parents=True)
    item = {"id": 0, "filename": f"{_image_ids(small)[0]}.jpg", "caption": "a dog on a mat"}
    item.update(caption2="on a mat is a dog", negative_caption="a mat on a dog")
    (folder / "swap_obj.json").write_text(json.dumps([item] if plus else {"0": item}))
    images = small / "images"
    module = sugarcrepe_pp if plus else sugarcrepe
    build = module.build_sugarcrepe_pp if plus else module.build_sugarcrepe
    name = "sugarcrepe-pp" if plus else "sugarcrepe"
    argv = [name, "--annotations", str(folder), "--images", str(images)]
    return build, argv, [folder, images]


def aro_inputs(small: Path, tmp: Path) -> tuple[Callable, list[str], list]:
    """One VG-Relation item on an image of the release."""
    folder = tmp / "aro"
    folder.mkdir(parents=True)
    item = {"image_path": f"{_image_ids(small)[0]}.jpg", "bbox_x": 0, "bbox_y": 0, "bbox_w": 8}
    item.update(bbox_h=8, relation_name="on", true_caption="a on b", false_caption="b on a")
    (folder / "visual_genome_relation.json").write_text(json.dumps([item]))
    images = small / "images"
    argv = ["aro", "--annotations", str(folder), "--images", str(images)]
    return aro.build_aro, argv, [folder, images]


def mmvp_inputs(small: Path, tmp: Path) -> tuple[Callable, list[str], list]:
    """One MMVP-VLM pair, its images from the release."""
    source = tmp / "mmvp"
    folder = source / mmvp_vlm.IMAGES / "Color"
    folder.mkdir(parents=True)
    first, second = _image_ids(small)[:2]
    shutil.copy(small / "images" / f"{first}.jpg", folder / "1.jpg")
    shutil.copy(small / "images" / f"{second}.jpg", folder / "2.jpg")
    rows = "Question ID,Type,Statement\n1,Color,the dog is red\n2,Color,the dog is blue\n"
    (source / "Questions.csv").write_text(rows)
    return mmvp_vlm.build_mmvp_vlm, ["mmvp-vlm", "--source", str(source)], [source]


BUILDERS = {
    "valse": valse_inputs,
    "vl-checklist": vl_checklist_inputs,
    "winoground": winoground_inputs,
    "sugarcrepe": sugarcrepe_inputs,
    "sugarcrepe-pp": lambda small, tmp: sugarcrepe_inputs(small, tmp, plus=True),
    "aro": aro_inputs,
    "mmvp-vlm": mmvp_inputs,
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_a_neighbour_builder_never_replaces_a_bla_build(
    name, bla_build, small, tree_bytes, tmp_path, capsys
):
    build, argv, args = BUILDERS[name](small, tmp_path)
    before = tree_bytes(bla_build)
    capsys.readouterr()
    assert builders_main([*argv, "--out", str(bla_build)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds the output of `python -m builders release`" in err[0], err
    with pytest.raises(FileExistsError, match="python -m builders release"):
        build(*args, bla_build)  # the writer itself refuses too, right before its swap
    assert tree_bytes(bla_build) == before
    assert sorted(p.name for p in bla_build.parent.iterdir()) == ["bla_dataset"]


@pytest.mark.parametrize("name", list(BUILDERS))
def test_a_neighbour_builder_replaces_its_own_build(name, small, tmp_path, capsys):
    _, argv, _ = BUILDERS[name](small, tmp_path)
    out = tmp_path / "out"
    assert builders_main([*argv, "--out", str(out)]) == 0
    assert builders_main([*argv, "--out", str(out)]) == 0
    other = next(n for n in BUILDERS if n != name)
    _, argv, _ = BUILDERS[other](small, tmp_path / "other")
    capsys.readouterr()
    assert builders_main([*argv, "--out", str(out)]) == 2
    assert f"holds the output of `python -m builders {name}`" in capsys.readouterr().err
