"""Publishing: the dry run prints the exact Hub calls; bad tags and edited files are refused."""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import pytest
from bla_eval.outputs import OWNER_FILE

from bla_metric.schema import DATASET_VERSION
from builders.__main__ import main
from builders.publish import plan_publish, publish

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
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Dry run: nothing is sent.")
    numbered = [line for line in out if line[:1].isdigit()]
    calls = [ast.parse(line.split(". ", 1)[1], mode="eval").body for line in numbered]
    assert [c.func.attr for c in calls] == [
        "create_repo",
        "list_repo_refs",
        "repo_info",
        "list_repo_files",
        "create_commit",
        "create_tag",
    ]
    kwargs = [{k.arg: k.value for k in c.keywords} for c in calls]
    assert {k: ast.literal_eval(v) for k, v in kwargs[0].items()} == {
        "repo_id": "bla-org/bla",
        "repo_type": "dataset",
        "exist_ok": True,
        "private": False,
    }
    commit = kwargs[4]
    assert ast.literal_eval(commit["revision"]) == "main"
    assert ast.literal_eval(commit["parent_commit"]).startswith("<head of main")
    adds = [op for op in commit["operations"].elts if isinstance(op, ast.Call)]
    added = {
        ast.literal_eval(op.keywords[0].value): ast.literal_eval(op.keywords[1].value)
        for op in adds
    }
    written = {
        p.relative_to(built_dataset).as_posix(): str(p.resolve())
        for p in built_dataset.rglob("*")
        if p.is_file() and p.name != OWNER_FILE
    }
    assert added == written  # one commit with every file of the build, not the local marker
    assert "CommitOperationDelete" in ast.literal_eval(commit["operations"].elts[-1])
    assert ast.literal_eval(kwargs[5]["tag"]) == TAG
    assert ast.literal_eval(kwargs[5]["revision"]).startswith("<oid of the create_commit")
    listed = [line.split()[0] for line in out if line.startswith("  ")]
    assert listed == sorted(written)


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
