"""Default paths come from the working directory and the environment, never from where the code
is installed: the BLA data (``$BLA_DATASET``, ``./bla_dataset``, the Hub id), the builders'
``--out`` (``./bla_dataset``) and release (``--source``, ``$BLA_RELEASE_DIR``, else download)."""

from __future__ import annotations

from pathlib import Path

from bla_eval.benchmarks.bla import default_data

from bla_metric.hub_ids import DATASET as HUB_DATASET_ID
from builders.__main__ import build_parser, default_release


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


def test_builders_write_to_the_working_directory_and_never_guess_a_release(monkeypatch):
    release = build_parser(["release"]).parse_args(["release"])
    publish = build_parser(["publish"]).parse_args(["publish", "--repo-id", "o/b", "--tag", "v1"])
    assert release.out == publish.source == Path("bla_dataset")  # relative: the working directory
    monkeypatch.delenv("BLA_RELEASE_DIR", raising=False)
    assert default_release() is None  # release then downloads the public zip
    monkeypatch.setenv("BLA_RELEASE_DIR", "/data/BLA_Benchmark")
    assert default_release() == Path("/data/BLA_Benchmark")
