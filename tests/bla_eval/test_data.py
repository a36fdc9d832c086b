"""Where a run's dataset is: a local folder or a Hub id, never a missing folder taken for one."""

from __future__ import annotations

from pathlib import Path

import pytest
from bla_eval.data import check_dataset


@pytest.mark.parametrize("name", ["aro_dataset", "./aro_dataset", "a/b/c", "/no/such/folder"])
def test_a_folder_that_does_not_exist_is_never_a_hub_id(name: str, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=f"dataset folder {name} does not exist"):
        check_dataset(name)


def test_a_folder_or_an_org_name_id_is_a_dataset(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "aro_dataset").mkdir()
    check_dataset("aro_dataset")
    check_dataset("bla-benchmark/bla")
    (tmp_path / "notes.txt").write_text("mine\n")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        check_dataset("notes.txt")
