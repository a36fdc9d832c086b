"""``python -m builders publish`` against the stand-in Hub, through the real ``huggingface_hub``:
``main`` changes in one commit holding exactly the build, the tag names that commit, a failure
in the middle leaves ``main`` and the tags as they were, a second publish is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from bla_eval.outputs import OWNER_FILE

from bla_metric.schema import DATASET_VERSION

TAG = f"v{DATASET_VERSION}"
REPO = "bla-org/bla"


def _seed_old_release(hub) -> str:
    """A dataset repo whose main holds files of an older layout; returns its head."""
    old = {"data/old/test-00000-of-00001.parquet": b"old rows", "notes.txt": b"old notes"}
    return hub.seed("dataset", REPO, old, "old layout")


def _publish(run_cli, built: Path):
    return run_cli(
        "-m", "builders", "publish", "--repo-id", REPO, "--tag", TAG, "--source", str(built)
    )


def _error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    return lines[0]


@pytest.mark.slow
def test_publish_is_one_commit_tagged_once(hub, run_cli, built_dataset: Path) -> None:
    old_head = _seed_old_release(hub)
    repo = hub.repo("dataset", REPO)

    hub.fail("PUT", "lfs_upload", 403, skip=3)  # the fourth parquet upload is refused
    line = _error_line(_publish(run_cli, built_dataset))
    assert "failed before main changed" in line and "HTTP 403" in line, line
    assert hub.head("dataset", REPO) == old_head and not repo.refs.keys() - {"refs/heads/main"}

    hub.fail("POST", "commit", 500)  # every file uploaded, the commit itself fails
    line = _error_line(_publish(run_cli, built_dataset))
    assert "failed before main changed" in line and "HTTP 500" in line, line
    assert hub.head("dataset", REPO) == old_head and len(repo.commits) == 2

    result = _publish(run_cli, built_dataset)
    assert result.returncode == 0, result.stderr[-3000:]
    head = hub.head("dataset", REPO)
    assert head != old_head and len(repo.commits) == 3  # one commit made main the build
    assert repo.refs[f"refs/tags/{TAG}"] == head
    assert f"published {REPO} at {TAG} (commit {head})" in result.stdout
    built = {
        p.relative_to(built_dataset).as_posix(): p.read_bytes()
        for p in built_dataset.rglob("*")
        if p.is_file() and p.name != OWNER_FILE  # the folder's local marker is not published
    }
    at_tag = hub.files("dataset", REPO, TAG)
    assert at_tag.pop(".gitattributes")  # managed by the Hub, kept
    assert at_tag.keys() == built.keys()  # the old layout's files are gone
    assert all(at_tag[name] == data for name, data in built.items())
    assert all(e.lfs for p, e in repo.commits[head].items() if p.endswith(".parquet"))

    line = _error_line(_publish(run_cli, built_dataset))
    assert line.startswith("python -m builders publish: error: tag") and "never moved" in line
    assert hub.head("dataset", REPO) == head and len(repo.commits) == 3
    assert repo.refs[f"refs/tags/{TAG}"] == head


def test_publish_without_token_is_refused(hub, run_cli, built_dataset: Path) -> None:
    result = run_cli(
        "-m",
        "builders",
        "publish",
        "--repo-id",
        REPO,
        "--tag",
        TAG,
        "--source",
        str(built_dataset),
        env={"HF_TOKEN": None},
    )
    line = _error_line(result)
    assert "set HF_TOKEN" in line, line
    assert hub.calls == []  # refused before any request
