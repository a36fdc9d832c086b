"""Fixtures of the builders' tests: miniature copies of the real release, byte snapshots of a
folder, the released sentence sets, and the Sentence-BERT model of the construction pipeline."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

ANNOTATIONS = "annotations"
MAIN_FILES = {
    "ap": "active_passive_captions.json",
    "co": "coordination_captions.json",
    "rc": "relative_clause_captions.json",
}
LEARNING_FOLDERS = {"ap": "active_passive", "co": "coord", "rc": "rc"}
RANDOM_SPLITS = "finetune/finetune_random"
PAIR_IMAGES = {73, 115, 235, 418, 3298, 498102}


def _load(root: Path, rel: str):
    return json.loads((root / ANNOTATIONS / rel).read_text())


def _save(root: Path, rel: str, obj) -> None:
    path = root / ANNOTATIONS / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def _link_images(release: Path, dst: Path, image_ids: set[str] | None = None) -> None:
    """The release's images in ``dst/images``, hard links (copies across file systems): a
    builder refuses a symbolic link out of the image folder it is given."""
    (dst / "images").mkdir(parents=True)
    for image in sorted((release / "images").iterdir()):
        if image_ids is None or image.stem in image_ids:
            try:
                os.link(image.resolve(), dst / "images" / image.name)
            except OSError:
                shutil.copyfile(image, dst / "images" / image.name)


def _small_release(release: Path, dst: Path, per_split: int = 2) -> Path:
    used: set[str] = set()
    for task, folder in LEARNING_FOLDERS.items():
        keep: set[str] = set()
        for name in ("train.json", "valid.json", "test.json"):
            entries = _load(release, f"{RANDOM_SPLITS}/{folder}/{name}")
            subset = dict(list(entries.items())[:per_split])
            _save(dst, f"{RANDOM_SPLITS}/{folder}/{name}", subset)
            keep |= set(subset)
        records = [r for r in _load(release, MAIN_FILES[task]) if str(r["image_id"]) in keep]
        _save(dst, MAIN_FILES[task], records)
        used |= keep
    _link_images(release, dst, used)
    return dst


def _writable_copy(release: Path, dst: Path) -> Path:
    for src in sorted((release / ANNOTATIONS).rglob("*.json")):
        rel = src.relative_to(release / ANNOTATIONS).as_posix()
        _save(dst, rel, json.loads(src.read_text()))
    _link_images(release, dst)
    return dst


def _zip_release(folder: Path, path: Path, top: str) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, top + file.relative_to(folder).as_posix())
    return path


def _tree_bytes(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="session")
def small_release() -> Callable[..., Path]:
    """``small_release(release, dst, per_split=2)``: a consistent miniature release in ``dst``
    (the first ``per_split`` entries of each learning split, their records, their images
    symlinked)."""
    return _small_release


@pytest.fixture(scope="session")
def writable_copy() -> Callable[[Path, Path], Path]:
    """``writable_copy(release, dst)``: the release with its annotations copied (writable) and
    its images symlinked."""
    return _writable_copy


@pytest.fixture(scope="session")
def zip_release() -> Callable[[Path, Path, str], Path]:
    """``zip_release(folder, path, top)``: ``folder`` zipped into ``path``, member names prefixed
    with ``top`` (``"BLA_Benchmark/"`` or ``""``)."""
    return _zip_release


@pytest.fixture(scope="session")
def tree_bytes() -> Callable[[Path], dict[str, bytes]]:
    """``tree_bytes(folder)``: relative path -> bytes of every file under ``folder``."""
    return _tree_bytes


@pytest.fixture(scope="module")
def small(release_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A miniature release (two entries per learning split), made once per test module."""
    return _small_release(release_dir, tmp_path_factory.mktemp("small") / "BLA_Benchmark")


@pytest.fixture(scope="session")
def released_sets(release_dir: Path) -> Callable[[str], dict[int, list[str]]]:
    """``released_sets(task)``: image id -> the released four sentences (True1, True2, False1,
    False2) of the task's test config."""

    from bla_metric.tasks import get_task

    def read(task: str) -> dict[int, list[str]]:
        out = {}
        path = release_dir / ANNOTATIONS / f"{get_task(task).config}_captions.json"
        for record in json.loads(path.read_text()):
            group = record["caption_group"][0]
            keys = ("True1", "True2", "False1", "False2")
            out[int(record["image_id"])] = [group[k] for k in keys]
        return out

    return read


@pytest.fixture(scope="session")
def reproduced_images() -> dict[str, set[int]]:
    """Per task, the images of ``tests/fixtures/vg/release`` whose released sentence set the
    construction pipeline reproduces."""
    return {
        "ap": {411, 675, 963, 4419, 2410115, 713804, 2404886},
        "co": PAIR_IMAGES,
        "rc": PAIR_IMAGES,
    }


@pytest.fixture(scope="session")
def embedder():
    """One Sentence-BERT model (the package's all-MiniLM-L6-v2) for every run of the session."""
    from builders.construct.attributes import Embedder
    from builders.construct.config import ConstructConfig

    return Embedder(ConstructConfig().sbert_model)
