"""Region features (``bla_eval.regions``): the authors' TSV layout read directly, with one-line
errors naming the file and the row; the store keyed by image content hash; what ``--regions``
names, resolved."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from bla_eval.items import ImageHandle, ImageRef, Item
from bla_eval.regions import RegionFeatures
from bla_eval.regions.source import (
    DetectedRegions,
    StoredRegions,
    TsvRegions,
    open_regions,
    regions_record,
)
from bla_eval.regions.store import STORE_FILE, RegionStore, image_hash
from bla_eval.regions.tsv import COLUMNS, RegionTable, encode_row
from bla_eval.testing.region_models import region_rows


def regions(seed: int = 0, count: int = 3, dim: int = 8) -> RegionFeatures:
    rng = np.random.default_rng(seed)
    boxes = np.array([[1, 2, 30, 40], [0, 0, 64, 48], [10, 5, 20, 25]][:count], np.float32)
    return RegionFeatures(rng.random((count, dim), np.float32), boxes, (48, 64))


def item(image_id: str | None, data: bytes = b"png") -> ImageHandle:
    key = f"id:{image_id}" if image_id is not None else "sha1:abc"
    ref = ImageRef(key, {"bytes": data})
    return ImageHandle(Item("bla", "active_passive", "ap-0", (ref,), ("s",), ((1,),)), ref)


def test_a_tsv_row_reads_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "r.tsv"
    path.write_text(encode_row("7", regions(0)) + "\n" + encode_row("9", regions(1)) + "\n")
    table = RegionTable(path)
    got = table.get("9")
    assert np.array_equal(got.features, regions(1).features)
    assert np.array_equal(got.boxes, regions(1).boxes) and got.image_size == (48, 64)
    assert len(table) == 2 and "7" in table
    import hashlib

    assert table.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_generated_fixture_is_deterministic_and_inside_its_images() -> None:
    rows = region_rows([("1", (100, 200)), ("2", (50, 60))], seed=3)
    assert rows == region_rows([("1", (100, 200)), ("2", (50, 60))], seed=3)
    assert rows != region_rows([("1", (100, 200)), ("2", (50, 60))], seed=4)
    cells = rows[1].split("\t")
    boxes = np.frombuffer(base64.b64decode(cells[COLUMNS.index("boxes")]), np.float32)
    boxes = boxes.reshape(-1, 4)
    assert len(boxes) == 36 and (boxes >= 0).all()
    assert (boxes[:, 2] <= 60).all() and (boxes[:, 3] <= 50).all()
    assert (boxes[:, 2] > boxes[:, 0]).all() and (boxes[:, 3] > boxes[:, 1]).all()


def _row(**changes: str) -> str:
    cells = dict(zip(COLUMNS, encode_row("5", regions()).split("\t"), strict=True))
    cells.update(changes)
    return "\t".join(cells[c] for c in COLUMNS)


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (_row(boxes="%%%"), "row 2: boxes is not base64"),
        (_row(num_boxes="4"), "row 2: boxes holds"),
        (_row(img_h="0"), "row 2: img_h must be an integer"),
        (_row(features=base64.b64encode(b"abc").decode()), "row 2: features holds 3 bytes"),
        (_row(img_w="-3"), "row 2: img_w must be an integer"),
        ("5\t1\t2", "row 2: has 3 columns, not 10"),
        (
            _row(features=base64.b64encode(np.full(24, np.nan, np.float32).tobytes()).decode()),
            "row 2: region features and boxes must be finite",
        ),
    ],
)
def test_a_bad_row_is_one_line_naming_the_file_and_row(tmp_path, line, fragment) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(encode_row("4", regions()) + "\n" + line + "\n")
    table = RegionTable(path)
    with pytest.raises(ValueError) as err:
        table.get("5")
    message = str(err.value)
    assert fragment in message and str(path) in message and "\n" not in message


def test_a_repeated_id_or_an_empty_file_is_refused_when_read(tmp_path) -> None:
    path = tmp_path / "twice.tsv"
    path.write_text(encode_row("4", regions()) + "\n" + encode_row("4", regions(1)) + "\n")
    with pytest.raises(ValueError, match=r"twice.tsv row 2: img_id '4' repeats row 1"):
        RegionTable(path)
    (tmp_path / "empty.tsv").write_text("")
    with pytest.raises(ValueError, match="holds no rows"):
        RegionTable(tmp_path / "empty.tsv")


def test_the_tsv_source_looks_images_up_by_their_dataset_id(tmp_path) -> None:
    path = tmp_path / "r.tsv"
    path.write_text(encode_row("12", regions()) + "\n")
    source = open_regions(str(path))
    assert isinstance(source, TsvRegions)
    assert np.array_equal(source.lookup(item("12")).features, regions().features)
    assert source.record() == {"tsv_sha256": source.table.sha256} == regions_record(str(path))
    with pytest.raises(ValueError, match=r"has no row for image_id '13' \(active_passive item"):
        source.lookup(item("13"))
    with pytest.raises(ValueError, match="has no image_id to look up in a TSV"):
        source.lookup(item(None))


def test_the_store_keeps_regions_by_content_hash_atomically(tmp_path) -> None:
    record = {"detector": "d", "revision": None, "min_size": 600, "max_size": 1000, "boxes": 36}
    store = RegionStore.create(tmp_path / "s", record)
    sha = image_hash(b"png")
    assert store.get(sha) is None
    store.put(sha, regions())
    assert np.array_equal(store.get(sha).features, regions().features)
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == [sha[:2], STORE_FILE]
    assert [p.name for p in (tmp_path / "s" / sha[:2]).iterdir()] == [f"{sha}.npz"]
    with pytest.raises(ValueError, match="was made by"):
        RegionStore.create(tmp_path / "s", {**record, "boxes": 10})
    source = open_regions(str(tmp_path / "s"))
    assert isinstance(source, StoredRegions) and source.record() == record
    assert source.lookup(item("1")).count == 3
    with pytest.raises(ValueError, match="has no regions of the image of active_passive"):
        source.lookup(item("1", b"other"))
    store.path(sha).write_bytes(b"broken")
    with pytest.raises(ValueError, match=f"region file .*{sha}.npz cannot be read"):
        store.get(sha)


def test_a_detector_folder_is_recorded_by_its_content_and_settings(tmp_path) -> None:
    folder = tmp_path / "detector"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"a": 1}))
    source = open_regions(str(folder), store_root=tmp_path / "cache")
    assert isinstance(source, DetectedRegions)
    first = source.record()
    assert first["min_size"] == 600 and first["max_size"] == 1000 and first["boxes"] == 36
    import io

    from bla_eval.regions.source import Pending
    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (8, 6), (1, 2, 3)).save(png, format="PNG")
    found = source.lookup(item("1", png.getvalue()))  # not stored yet: waits for the detector
    assert isinstance(found, Pending) and found.sha256 == image_hash(png.getvalue())
    assert found.image.size == (8, 6)
    source.store.put(found.sha256, regions())
    assert source.lookup(item("1", png.getvalue())).count == 3  # the store answers now
    (folder / "config.json").write_text(json.dumps({"a": 2}))
    assert regions_record(str(folder))["revision"] != first["revision"]


@pytest.mark.parametrize("spec", ["missing.tsv", "./no/such/folder", "not a detector"])
def test_a_region_source_that_is_none_is_one_line(spec, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=f"--regions {spec}: ") as err:
        open_regions(spec)
    assert "\n" not in str(err.value)
