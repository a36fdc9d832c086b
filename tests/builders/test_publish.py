"""Publishing: the dry run prints the exact Hub calls; bad tags and edited files are refused."""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import pytest

from builders.__main__ import main
from builders.publish import plan_publish, publish
from builders.schema import DATASET_VERSION

TAG = f"v{DATASET_VERSION}"


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_dry_run_prints_the_exact_operations(
    built_dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "publish",
            "--repo-id",
            "bla-org/bla",
            "--tag",
            TAG,
            "--source",
            str(built_dataset),
            "--dry-run",
        ]
    )
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Dry run: nothing is sent.")
    calls = [ast.parse(line.split(". ", 1)[1], mode="eval").body for line in lines[1:]]
    assert [c.func.attr for c in calls] == ["create_repo", "upload_folder", "create_tag"]
    kwargs = [{k.arg: ast.literal_eval(k.value) for k in c.keywords} for c in calls]
    assert kwargs[0] == {
        "repo_id": "bla-org/bla",
        "repo_type": "dataset",
        "exist_ok": True,
        "private": False,
    }
    upload = kwargs[1]
    assert upload["repo_id"] == "bla-org/bla" and upload["repo_type"] == "dataset"
    assert Path(upload["folder_path"]) == built_dataset.resolve()
    written = sorted(
        p.relative_to(built_dataset).as_posix() for p in built_dataset.rglob("*") if p.is_file()
    )
    assert upload["allow_patterns"] == written
    assert upload["delete_patterns"] == ["data/**"]
    assert kwargs[2]["tag"] == TAG and kwargs[2]["repo_type"] == "dataset"


@pytest.mark.parametrize("tag", ["v9.9.9", "1.0.0", "latest"])
def test_tag_must_be_the_built_version(
    built_dataset: Path, tag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match=f"use --tag {TAG}|expected {TAG}"):
        plan_publish(built_dataset, "bla-org/bla", tag)
    code = main(
        [
            "publish",
            "--repo-id",
            "bla-org/bla",
            "--tag",
            tag,
            "--source",
            str(built_dataset),
            "--dry-run",
        ]
    )
    assert code == 2
    assert "error: tag" in capsys.readouterr().err


def test_repo_id_needs_an_owner(built_dataset: Path) -> None:
    with pytest.raises(ValueError, match="ORG/NAME"):
        plan_publish(built_dataset, "bla", TAG)


def test_edited_build_is_refused(built_dataset: Path, tmp_path: Path) -> None:
    copy = tmp_path / "bla"
    shutil.copytree(built_dataset, copy, copy_function=os.link)
    (copy / "README.md").unlink()
    (copy / "README.md").write_text("edited by hand\n")
    with pytest.raises(ValueError, match="README.md: sha256 differs from the manifest"):
        publish(copy, "bla-org/bla", TAG, dry_run=True)


def test_folder_without_manifest_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no manifest.json"):
        publish(tmp_path, "bla-org/bla", TAG, dry_run=True)
