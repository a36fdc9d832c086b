"""The builders' default paths come from the working directory and the environment, never from
where the code is installed: ``--out`` (``./bla_dataset``) and the release (``--source``,
``$BLA_RELEASE_DIR``, else download)."""

from __future__ import annotations

from pathlib import Path

from builders.__main__ import build_parser, default_release


def test_builders_write_to_the_working_directory_and_never_guess_a_release(monkeypatch):
    release = build_parser(["release"]).parse_args(["release"])
    publish = build_parser(["publish"]).parse_args(["publish", "--repo-id", "o/b", "--tag", "v1"])
    assert release.out == publish.source == Path("bla_dataset")  # relative: the working directory
    monkeypatch.delenv("BLA_RELEASE_DIR", raising=False)
    assert default_release() is None  # release then downloads the public zip
    monkeypatch.setenv("BLA_RELEASE_DIR", "/data/BLA_Benchmark")
    assert default_release() == Path("/data/BLA_Benchmark")
