"""The BLA benchmark's default data comes from the working directory and the environment, never
from where the code is installed: ``$BLA_DATASET``, ``./bla_dataset``, the Hub id."""

from __future__ import annotations

from bla_eval.benchmarks.bla import default_data

from bla_metric.hub_ids import DATASET as HUB_DATASET_ID


def test_dataset_default_env_then_working_directory_then_hub(tmp_path, monkeypatch):
    monkeypatch.delenv("BLA_DATASET", raising=False)
    monkeypatch.chdir(tmp_path)
    assert default_data() == HUB_DATASET_ID
    (tmp_path / "bla_dataset").mkdir()
    assert default_data() == HUB_DATASET_ID  # a folder without a build is not a dataset
    (tmp_path / "bla_dataset" / "data").mkdir()
    assert default_data() == str(tmp_path / "bla_dataset")
    monkeypatch.setenv("BLA_DATASET", "org/other")
    assert default_data() == "org/other"
