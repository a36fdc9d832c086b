"""Hostile and careless inputs of the other benchmarks' builders (``builders/neighbours.py``'s
shared checks): an annotation's image path that is absolute, climbs out with ``..`` or leads
out through a link; ids given twice or of no id type; values of the wrong type; JSON nested
100,000 deep; ARO boxes that are infinite, NaN or huge; parquet columns of the wrong type and
empty parquet files; U+2028 inside valid CSV and JSON Lines; a missing image's name holding a
newline. Each is one line naming the file and the item, exit 2, and nothing written; the valid
ones build."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from builders.__main__ import main as builders_main
from tests.bla_eval.commands import refused

Inputs = Callable[[Path, str], tuple[list[str], str]]


def _jpeg(path: Path, size: tuple[int, int] = (24, 16)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (120, 30, 200)).save(path, format="JPEG")
    return path


def _png_bytes(k: int = 0) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (40 * k, 90, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def _write_json(path: Path, document: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _coco(root: Path) -> Path:
    images = root / "val2017"
    _jpeg(images / "0.jpg")
    return images


# --------------------------------------------------------------- one input per builder
def sugarcrepe(root: Path, name: str) -> tuple[list[str], str]:
    images = _coco(root)
    item = {"filename": name, "caption": "a dog on a mat", "negative_caption": "a mat on a dog"}
    path = _write_json(root / "ann" / "replace_obj.json", {"0": item})
    return ["sugarcrepe", "--annotations", str(path.parent), "--images", str(images)], (
        f"{path} item 0"
    )


def sugarcrepe_pp(root: Path, name: str) -> tuple[list[str], str]:
    images = _coco(root)
    item = {"id": 7, "filename": name, "caption": "a dog", "caption2": "a dog it is"}
    path = _write_json(root / "ann" / "replace_rel.json", [{**item, "negative_caption": "a cat"}])
    return ["sugarcrepe-pp", "--annotations", str(path.parent), "--images", str(images)], (
        f"{path} item 7"
    )


def valse(root: Path, name: str) -> tuple[list[str], str]:
    images = _coco(root)
    votes = {"caption": 3, "foil": 0, "other": 0}
    item = {"caption": "a dog", "foil": "a cat", "image_file": name, "mturk": votes}
    path = _write_json(root / "ann" / "existence.json", {"v1": item})
    return ["valse", "--annotations", str(path.parent), "--images", str(images)], (
        f"{path} record 'v1'"
    )


def winoground(root: Path, name: str) -> tuple[list[str], str]:
    images = _coco(root)
    stem = name.removesuffix(".jpg")
    record = {"id": 0, "image_0": stem, "image_1": "0", "caption_0": "a b", "caption_1": "b a"}
    path = root / "examples.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return ["winoground", "--examples", str(path), "--images", str(images)], f"{path} line 1"


def aro(root: Path, name: str) -> tuple[list[str], str]:
    images = _coco(root)
    item = {"image_path": name, "bbox_x": 1, "bbox_y": 1, "bbox_w": 10, "bbox_h": 8}
    item |= {"relation_name": "on", "true_caption": "a on b", "false_caption": "b on a"}
    path = _write_json(root / "ann" / "visual_genome_relation.json", [item])
    return ["aro", "--annotations", str(path.parent), "--images", str(images)], f"{path} item 0"


def vl_checklist(root: Path, name: str) -> tuple[list[str], str]:
    images = _coco(root)
    path = _write_json(
        root / "ann" / "data" / "Relation" / "vg" / "spatial.json",
        [[name, {"POS": ["a dog on a mat"], "NEG": ["a mat on a dog"]}]],
    )
    return ["vl-checklist", "--annotations", str(root / "ann"), "--images", str(images)], (
        f"{path} item 0"
    )


BUILDERS: dict[str, Inputs] = {
    "vl-checklist": vl_checklist,
    "sugarcrepe": sugarcrepe,
    "sugarcrepe-pp": sugarcrepe_pp,
    "valse": valse,
    "winoground": winoground,
    "aro": aro,
}


def build(argv: list[str], out: Path, capsys) -> int:
    from tests.bla_eval.commands import call

    return call(builders_main, [*argv, "--out", str(out)], capsys)[0]


# --------------------------------------------------------------- paths out of the folder
@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("how", ["dotdot", "absolute", "link"])
def test_an_image_path_out_of_the_image_folder_is_refused(builder, how, tmp_path, capsys):
    private = _jpeg(tmp_path / "private" / "me.jpg")
    name = {"dotdot": "../private/me.jpg", "absolute": str(private), "link": "me.jpg"}[how]
    argv, where = BUILDERS[builder](tmp_path, name)
    if how == "link":
        (tmp_path / "val2017" / "me.jpg").symlink_to(private)
    out = tmp_path / "out"
    line = refused(builders_main, [*argv, "--out", out], capsys, where)
    said = {"dotdot": "climbs out of", "absolute": "is not a relative path", "link": "leads out"}
    assert said[how] in line and not out.exists()


def test_a_loop_of_links_is_one_line(tmp_path, capsys):
    argv, where = sugarcrepe(tmp_path, "me.jpg")
    (tmp_path / "val2017" / "me.jpg").symlink_to(tmp_path / "val2017" / "loop.jpg")
    (tmp_path / "val2017" / "loop.jpg").symlink_to(tmp_path / "val2017" / "me.jpg")
    line = refused(builders_main, [*argv, "--out", tmp_path / "out"], capsys, where)
    assert "cannot be resolved" in line


def test_a_link_inside_the_image_folder_is_followed(tmp_path, capsys):
    argv, _ = sugarcrepe(tmp_path, "me.jpg")
    (tmp_path / "val2017" / "me.jpg").symlink_to(tmp_path / "val2017" / "0.jpg")
    assert build(argv, tmp_path / "out", capsys) == 0


def test_a_mmvp_type_that_climbs_out_is_refused(tmp_path, capsys):
    source = tmp_path / "MMVP_VLM"
    for qid in (1, 2):
        _jpeg(source / "private" / f"{qid}.jpg")
    _questions(source, [["1", "../private", "a dog"], ["2", "../private", "a cat"]])
    out = tmp_path / "out"
    argv = ["mmvp-vlm", "--source", source, "--out", out]
    refused(builders_main, argv, capsys, "Questions.csv pair 1", "'../private/1.jpg' climbs out")
    assert not out.exists()


def _questions(source: Path, rows: list[list[str]]) -> Path:
    source.mkdir(parents=True, exist_ok=True)
    path = source / "Questions.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["Question ID", "Type", "Statement"], *rows])
    return path


# --------------------------------------------------------------- ids and types
def test_a_sugarcrepe_key_given_twice_is_refused(tmp_path, capsys):
    images = _coco(tmp_path)
    item = '{"filename": "0.jpg", "caption": "a dog", "negative_caption": "a cat"}'
    path = tmp_path / "ann" / "swap_att.json"
    path.parent.mkdir()
    path.write_text(f'{{"5": {item}, "5": {item}}}', encoding="utf-8")
    argv = ["sugarcrepe", "--annotations", path.parent, "--images", images]
    line = refused(builders_main, [*argv, "--out", tmp_path / "out"], capsys, str(path))
    assert "the key '5' is given twice" in line and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("ids", "said"),
    [
        ([1, "1"], "item 1: the id '1' is given twice (first at"),
        ([1, None], "the id None is not an integer"),
        ([1, True], "the id True is not an integer"),
        ([1, 2.5], "the id 2.5 is not an integer"),
    ],
)
def test_sugarcrepe_pp_ids_are_unique_and_typed(ids, said, tmp_path, capsys):
    images = _coco(tmp_path)
    item = {"filename": "0.jpg", "caption": "a", "caption2": "b", "negative_caption": "c"}
    path = _write_json(tmp_path / "ann" / "swap_obj.json", [{**item, "id": i} for i in ids])
    argv = ["sugarcrepe-pp", "--annotations", path.parent, "--images", images]
    refused(builders_main, [*argv, "--out", tmp_path / "out"], capsys, str(path), said)
    assert not (tmp_path / "out").exists()


def _naturalbench(root: Path, changes: dict | None = None, rows: int = 2) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: dict[str, list] = {
        "Index": list(range(rows)),
        "Image_0": [{"bytes": _png_bytes(k), "path": None} for k in range(rows)],
        "Image_1": [{"bytes": _png_bytes(k + 1), "path": None} for k in range(rows)],
        "Question_0": ["Is it red?"] * rows,
        "Image_0_Question_0": ["Yes"] * rows,
        "Image_1_Question_0": ["No"] * rows,
        "Question_1": ["Is it blue?"] * rows,
        "Image_0_Question_1": ["No"] * rows,
        "Image_1_Question_1": ["Yes"] * rows,
        "Question Type": ["yes_no"] * rows,
        "Source": ["flickr"] * rows,
    }
    columns |= changes or {}
    folder = root / "NaturalBench" / "data"
    folder.mkdir(parents=True)
    pq.write_table(pa.table(columns), folder / "train-00000-of-00001.parquet")
    return folder.parent


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"Index": [3, 3]}, "row 1: the id '3' is given twice (first at"),
        ({"Index": ["3", "3"]}, "row 1: the id '3' is given twice"),
        ({"Question_0": ["Is it red?", None]}, "'Question_0' must be a non-empty string, not None"),
        ({"Image_0_Question_0": ["Yes", "Maybe"]}, "Image_0_Question_0: a yes_no answer must be"),
        ({"Image_0_Question_0": ["Yes", None]}, "'Image_0_Question_0' must be a non-empty string"),
        ({"Image_0_Question_0": [True, False]}, "'Image_0_Question_0' must be a non-empty string"),
        ({"Image_0": ["not an image", "x"]}, "Image_0 holds no embedded image (str)"),
        ({"Image_1": [1, 2]}, "Image_1 holds no embedded image (int)"),
        ({"Question Type": [1, 2]}, "unknown question type 1"),
    ],
)
def test_naturalbench_values_are_typed_by_the_schema(changes, said, tmp_path, capsys):
    source = _naturalbench(tmp_path, changes)
    out = tmp_path / "out"
    refused(builders_main, ["naturalbench", "--source", source, "--out", out], capsys, said)
    assert not out.exists()


def test_naturalbench_builds_its_typed_rows(tmp_path, capsys):
    import pyarrow.parquet as pq

    source = _naturalbench(tmp_path, {"Source": ["flickr", None]})
    assert build(["naturalbench", "--source", str(source)], tmp_path / "out", capsys) == 0
    table = pq.read_table(next((tmp_path / "out" / "data" / "yes_no").glob("*.parquet")))
    assert table.column("source").to_pylist() == ["flickr", ""]
    assert table.column("answers").to_pylist()[0] == [["Yes", "No"], ["No", "Yes"]]


@pytest.mark.parametrize("config", ["coco_order", "naturalbench"])
def test_an_empty_parquet_is_named_as_empty(config, tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "download" / "data"
    folder.mkdir(parents=True)
    from builders.aro import ORDER_TEXTS
    from builders.naturalbench import REQUIRED

    names = ["images", *ORDER_TEXTS] if config == "coco_order" else [*REQUIRED, "Question Type"]
    path = folder / "test-00000.parquet"
    pq.write_table(pa.table({n: pa.array([], pa.string()) for n in names}), path)
    if config == "coco_order":
        argv = ["aro", "--coco-order", folder.parent]
    else:
        argv = ["naturalbench", "--source", folder.parent]
    line = refused(builders_main, [*argv, "--out", tmp_path / "out"], capsys, str(path))
    assert "holds no row" in line and "--images" not in line


def test_an_aro_order_column_of_the_wrong_type_is_one_line(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "order" / "data"
    folder.mkdir(parents=True)
    columns = {"images": ["a path, not an image"], "correct_caption": ["a dog on a mat"]}
    columns |= {f"hard_text_{k}": [k] for k in range(1, 5)}
    pq.write_table(pa.table(columns), folder / "test.parquet")
    argv = ["aro", "--coco-order", folder.parent, "--out", tmp_path / "out"]
    refused(builders_main, argv, capsys, "test.parquet row 0: images holds no embedded image")


# --------------------------------------------------------------- numbers and nesting
@pytest.mark.parametrize(
    ("box", "said"),
    [
        ({"bbox_w": "inf"}, "must be finite numbers"),
        ({"bbox_h": float("nan")}, "must be finite numbers"),
        ({"bbox_x": True}, "must be finite numbers"),
        ({"bbox_w": 60000, "bbox_h": 60000}, "the box of 60000 x 60000 is over the"),
        ({"bbox_w": 0}, "the box has no area"),
    ],
)
def test_an_aro_box_out_of_bounds_is_one_line(box, said, tmp_path, capsys):
    argv, where = aro(tmp_path, "0.jpg")
    path = Path(argv[2]) / "visual_genome_relation.json"
    (item,) = json.loads(path.read_text())
    path.write_text(json.dumps([{**item, **box}]), encoding="utf-8")  # NaN as json writes it
    refused(builders_main, [*argv, "--out", tmp_path / "out"], capsys, where, said)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("builder", ["sugarcrepe", "aro", "valse"])
def test_json_nested_100000_deep_is_one_line(builder, tmp_path, capsys):
    argv, _ = BUILDERS[builder](tmp_path, "0.jpg")
    path = next(Path(argv[2]).glob("*.json"))
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    refused(builders_main, [*argv, "--out", tmp_path / "out"], capsys, str(path), "nested deeper")


def test_winoground_json_lines_nested_100000_deep_is_one_line(tmp_path, capsys):
    argv, where = winoground(tmp_path, "0.jpg")
    Path(argv[2]).write_text('{"id": ' + "[" * 100_000 + "\n", encoding="utf-8")
    refused(builders_main, [*argv, "--out", tmp_path / "out"], capsys, where, "nested deeper")


# --------------------------------------------------------------- text
def test_u2028_inside_a_winoground_caption_is_text(tmp_path, capsys):
    import pyarrow.parquet as pq

    argv, _ = winoground(tmp_path, "0.jpg")
    path = Path(argv[2])
    record = json.loads(path.read_text())
    record["caption_0"] = "a b\u2028c"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    assert build(argv, tmp_path / "out", capsys) == 0, capsys.readouterr().err
    table = pq.read_table(next((tmp_path / "out" / "data").rglob("*.parquet")))
    assert table.column("caption_0").to_pylist() == ["a b\u2028c"]


def test_u2028_inside_a_mmvp_statement_is_text(tmp_path, capsys):
    import pyarrow.parquet as pq

    source = tmp_path / "MMVP_VLM"
    for qid in (1, 2):
        _jpeg(source / "MLLM_VLM Images" / "Color" / f"{qid}.jpg")
    _questions(source, [["1", "Color", "a red\u2028dog"], ["2", "Color", "a blue dog"]])
    argv = ["mmvp-vlm", "--source", str(source)]
    assert build(argv, tmp_path / "out", capsys) == 0, capsys.readouterr().err
    table = pq.read_table(next((tmp_path / "out" / "data").rglob("*.parquet")))
    assert table.column("caption_0").to_pylist() == ["a red\u2028dog"]


def test_a_missing_image_name_cannot_forge_a_summary_line(tmp_path, capsys):
    argv, _ = sugarcrepe(tmp_path, "0.jpg")
    path = Path(argv[2]) / "replace_obj.json"
    good = json.loads(path.read_text())["0"]
    forged = {**good, "filename": "gone.jpg\n  swap_att: 999 items, 0 image(s) missing"}
    path.write_text(json.dumps({"0": good, "1": forged}), encoding="utf-8")
    capsys.readouterr()
    assert builders_main([*argv, "--out", str(tmp_path / "out")]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(printed) == 2 and "swap_att" not in printed[0]
    assert "(e.g. gone.jpg\\n  swap_att: 999 items" in printed[1]
