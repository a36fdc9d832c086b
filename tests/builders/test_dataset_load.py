"""Loading the built repo with `datasets`, offline, as users do."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from bla_metric.schema import BLA_ROWS
from builders.release import data_file

LOAD_SCRIPT = """
import json, datasets
ds = datasets.load_dataset("bla_dataset", "coordination", split="test")
first = ds[0]
print(json.dumps({"n": ds.num_rows, "ids": list(ds["id"]), "captions": list(ds["captions"]),
                  "labels": list(ds["labels"]), "image_type": type(first["image"]).__name__,
                  "size": list(first["image"].size), "features": ds.features.to_dict()}))
"""


def test_load_dataset_offline_by_folder_name(built_dataset: Path, tmp_path: Path) -> None:
    """`load_dataset("bla_dataset", ...)` from the folder holding it, with HF_HUB_OFFLINE=1."""
    (tmp_path / "bla_dataset").symlink_to(built_dataset)
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf_home"),
    }
    done = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    expected = pq.read_table(
        built_dataset / data_file("coordination", "test"), columns=["id", "captions", "labels"]
    ).to_pydict()
    assert got["n"] == 654
    assert got["ids"] == expected["id"]
    assert got["captions"] == expected["captions"]
    assert got["labels"] == expected["labels"]
    assert got["image_type"].endswith("ImageFile")
    assert got["features"] == BLA_ROWS.features().to_dict()


def test_loaded_images_decode_to_the_release_images(
    built_dataset: Path, release_dir: Path, tmp_path: Path
) -> None:
    bla = datasets.load_dataset(
        str(built_dataset), "active_passive_learning", cache_dir=str(tmp_path / "cache")
    )
    assert {s: bla[s].num_rows for s in bla} == {"train": 100, "validation": 200, "test": 200}
    train = bla["train"]
    assert train.features == BLA_ROWS.features()
    for row in train.select(range(0, 100, 10)):
        assert isinstance(row["image"], Image.Image)
        original = Image.open(
            io.BytesIO((release_dir / "images" / f"{row['image_id']}.jpg").read_bytes())
        )
        assert np.array_equal(np.asarray(row["image"]), np.asarray(original))
        assert len(row["captions"]) == 2 and sorted(row["labels"]) == [0, 1]
