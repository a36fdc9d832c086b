"""Build safety: zip or folder sources; corrupt releases fail clearly; no half-written --out."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from builders.__main__ import main
from builders.io import staged_folder
from builders.release import build_release
from builders.source import ReleaseError

ANN = "annotations"
MAIN = {
    "ap": "active_passive_captions.json",
    "co": "coordination_captions.json",
    "rc": "relative_clause_captions.json",
}
RANDOM = "finetune/finetune_random"


def load(root: Path, rel: str):
    return json.loads((root / ANN / rel).read_text())


def save(root: Path, rel: str, obj) -> None:
    path = root / ANN / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


@pytest.fixture(scope="module")
def small_build(small: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("small_build") / "bla"
    build_release(small, out, progress=False)
    return out


def test_small_release_builds_all_configs(small_build: Path) -> None:
    manifest = json.loads((small_build / "manifest.json").read_text())
    assert manifest["configs"]["coordination_learning"] == {"train": 2, "validation": 2, "test": 2}
    assert manifest["configs"]["coordination"] == {"test": 6}


def test_two_builds_are_byte_identical(
    small: Path, small_build: Path, tmp_path: Path, tree_bytes
) -> None:
    build_release(small, tmp_path / "again", progress=False)
    assert tree_bytes(tmp_path / "again") == tree_bytes(small_build)


@pytest.mark.parametrize("top", ["BLA_Benchmark/", ""], ids=["top-folder", "no-top-folder"])
def test_zip_source_gives_the_same_repo(
    small: Path, small_build: Path, tmp_path: Path, top: str, tree_bytes, zip_release
) -> None:
    archive = zip_release(small, tmp_path / "BLA_Benchmark.zip", top)
    build_release(archive, tmp_path / "from_zip", progress=False)
    assert tree_bytes(tmp_path / "from_zip") == tree_bytes(small_build)


def test_folder_holding_the_release_folder(
    small: Path, small_build: Path, tmp_path: Path, tree_bytes
) -> None:
    parent = tmp_path / "download"
    parent.mkdir()
    os.symlink(small, parent / "BLA_Benchmark")
    build_release(parent, tmp_path / "out", progress=False)
    assert tree_bytes(tmp_path / "out") == tree_bytes(small_build)


def _missing_image(root: Path) -> None:
    image_id = load(root, MAIN["ap"])[5]["image_id"]
    (root / "images" / f"{image_id}.jpg").unlink()


def _three_true(root: Path, position: int = 7) -> None:
    records = load(root, MAIN["co"])
    group = records[position]["caption_group"][0]
    group["True3"] = group.pop("False1")
    save(root, MAIN["co"], records)


def _duplicate_record(root: Path) -> None:
    records = load(root, MAIN["rc"])
    save(root, MAIN["rc"], [*records, records[3]])


def _duplicate_learning_id(root: Path) -> None:
    train = load(root, f"{RANDOM}/coord/train.json")
    test = load(root, f"{RANDOM}/coord/test.json")
    image_id = next(iter(train))
    group = next(r for r in load(root, MAIN["co"]) if str(r["image_id"]) == image_id)[
        "caption_group"
    ][0]
    test[image_id] = [group[k] for k in ("True1", "True2", "False1", "False2")]
    save(root, f"{RANDOM}/coord/test.json", test)


def _train_two_true(root: Path) -> None:
    train = load(root, f"{RANDOM}/active_passive/train.json")
    image_id = next(iter(train))
    group = next(r for r in load(root, MAIN["ap"]) if str(r["image_id"]) == image_id)[
        "caption_group"
    ][0]
    train[image_id] = [group["True1"], group["True2"]]
    save(root, f"{RANDOM}/active_passive/train.json", train)


def _repeated_caption(root: Path) -> None:
    records = load(root, MAIN["ap"])
    group = records[2]["caption_group"][0]
    group["False2"] = group["True1"]
    save(root, MAIN["ap"], records)


def _unknown_learning_caption(root: Path) -> None:
    valid = load(root, f"{RANDOM}/rc/valid.json")
    first = next(iter(valid))
    valid[first][0] = "the cat who reads a book wears a hat"
    save(root, f"{RANDOM}/rc/valid.json", valid)


def _renamed_key(root: Path) -> None:
    records = load(root, MAIN["rc"])
    group = records[4]["caption_group"][0]
    group["True3"] = group.pop("True2")
    save(root, MAIN["rc"], records)


def _truncated_image(root: Path) -> None:
    image = sorted((root / "images").iterdir())[0]
    data = image.read_bytes()
    image.unlink()
    image.write_bytes(data[: len(data) // 2])


CORRUPTIONS: dict[str, tuple[Callable[[Path], None], str]] = {
    "missing-image": (
        _missing_image,
        r"active_passive_captions\.json, record 5 \(image_id \d+\): "
        r"image missing: .*images/\d+\.jpg",
    ),
    "three-true": (
        _three_true,
        r"coordination_captions\.json, record 7 \(image_id \d+\): "
        r"3 true and 1 false captions",
    ),
    "duplicate-record": (
        _duplicate_record,
        r"duplicate image_id '\d+' in .*relative_clause_"
        r"captions\.json.*record 3 .* and .*record 672 ",
    ),
    "duplicate-learning-id": (
        _duplicate_learning_id,
        r"duplicate id 'co-\d{4}' in config "
        r"coordination_learning: .*train\.json",
    ),
    "train-two-true": (
        _train_two_true,
        r"active_passive/train\.json, image_id \d+: 2 true and 0 "
        r"false captions; a train row needs 1 true and 1 false",
    ),
    "repeated-caption": (
        _repeated_caption,
        r"active_passive_captions\.json, record 2 .*: "
        r"captions are not distinct",
    ),
    "unknown-learning-caption": (
        _unknown_learning_caption,
        r"rc/valid\.json, image_id \d+: caption 'the cat who.*"
        r"is not in record",
    ),
    "renamed-key": (
        _renamed_key,
        r"relative_clause_captions\.json, record 4 .*: unknown caption "
        r"keys \['True3'\]",
    ),
    "truncated-image": (
        _truncated_image,
        r"record \d+ \(image_id \d+\): .*images/\d+\.jpg: "
        r"image cannot be decoded",
    ),
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_corrupted_release_fails_and_writes_nothing(
    release_dir: Path, tmp_path: Path, name: str, writable_copy
) -> None:
    corrupt, message = CORRUPTIONS[name]
    source = writable_copy(release_dir, tmp_path / "release")
    corrupt(source)
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    with pytest.raises(ReleaseError, match=message):
        build_release(source, outputs / "bla", progress=False)
    assert list(outputs.iterdir()) == []


def test_failed_build_leaves_previous_build_untouched(
    small: Path, small_build: Path, tmp_path: Path, tree_bytes, small_release
) -> None:
    out = tmp_path / "bla"
    build_release(small, out, progress=False)
    before = tree_bytes(out)
    broken = small_release(small, tmp_path / "broken")
    _three_true(broken, position=1)
    with pytest.raises(ReleaseError, match="3 true and 1 false"):
        build_release(broken, out, progress=False)
    assert tree_bytes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bla", "broken"]


def test_crash_while_writing_keeps_out_and_leaves_no_temp(tmp_path: Path, tree_bytes) -> None:
    out = tmp_path / "bla"
    out.mkdir()
    ours = b'{"builder": "python -m builders release", "files": {}}'
    (out / "manifest.json").write_bytes(ours)
    with pytest.raises(RuntimeError), staged_folder(out, "python -m builders release") as stage:
        (stage / "README.md").write_text("half")
        raise RuntimeError("disk full")
    assert tree_bytes(out) == {"manifest.json": ours}
    assert [p.name for p in tmp_path.iterdir()] == ["bla"]


def test_rebuild_replaces_stale_files_and_keeps_gitignore(
    small: Path, small_build: Path, tmp_path: Path, tree_bytes
) -> None:
    out = tmp_path / "bla_dataset"
    out.mkdir()
    (out / ".gitignore").write_text("*\n!.gitignore\n")
    build_release(small, out, progress=False)
    (out / "data" / "coordination" / "test-00000-of-00001.parquet").write_bytes(b"stale")
    build_release(small, out, progress=False)
    files = tree_bytes(out)
    assert files.pop(".gitignore") == b"*\n!.gitignore\n"
    assert files == tree_bytes(small_build)


def test_refuses_to_replace_a_folder_that_is_not_a_build(
    small: Path, tmp_path: Path, tree_bytes
) -> None:
    out = tmp_path / "home"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not written by `python -m builders release`.*notes"):
        build_release(small, out, progress=False)
    assert tree_bytes(out) == {"notes.txt": b"mine"}


def test_cli_release(
    small: Path,
    small_build: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tree_bytes,
    small_release,
) -> None:
    out = tmp_path / "cli"
    assert main(["release", "--source", str(small), "--out", str(out), "--quiet"]) == 0
    assert "wrote BLA 1.0.0" in capsys.readouterr().out
    assert tree_bytes(out) == tree_bytes(small_build)
    broken = small_release(small, tmp_path / "broken")
    _missing_image(broken)
    assert main(["release", "--source", str(broken), "--out", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"^python -m builders release: error: .*record 5 .*image missing", err, re.M)
    assert not (tmp_path / "x").exists()


def test_python_m_builders_release(
    small: Path, small_build: Path, tmp_path: Path, tree_bytes
) -> None:
    """The exact command form of the docs, as a new process, with its progress bars."""
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "builders", "release", "--source", str(small), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert "images: 100%" in done.stderr and "parquet: 100%" in done.stderr
    assert tree_bytes(out) == tree_bytes(small_build)
