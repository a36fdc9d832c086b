"""A fresh machine: ``builders release`` downloads the public release zip, checks every file
against the pinned sha256 list, caches it and builds; a corrupted copy is refused.

The "public" zip is served by a local HTTP server on 127.0.0.1 (no network in tests), built from
the real release."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import threading
import zipfile
from pathlib import Path

import pytest

from builders.__main__ import main
from builders.download import (
    CHECKSUMS,
    ZIP_NAME,
    fetch_release,
    pinned_checksums,
)
from builders.source import ReleaseError


@pytest.fixture(scope="module")
def served(release_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """(base URL, folder) of a local HTTP server holding the release zip and a corrupted copy."""
    folder = tmp_path_factory.mktemp("www")
    good = folder / ZIP_NAME
    with zipfile.ZipFile(good, "w", zipfile.ZIP_STORED) as archive:
        for path in sorted(release_dir.rglob("*")):
            if path.is_file():
                archive.write(path, "BLA_Benchmark/" + path.relative_to(release_dir).as_posix())
    # the corrupted copy: one byte of one image changed, the zip itself kept valid
    image = sorted((release_dir / "images").iterdir())[10]
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(folder / "corrupt.zip", "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/" + image.name):
                data = data[:500] + bytes([data[500] ^ 1]) + data[501:]
            dst.writestr(info, data)
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", image.name
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def test_pinned_list_covers_every_file_the_build_reads(release_dir):
    pinned = pinned_checksums()  # the build's own list of what it read: see the next test
    assert pinned == {
        rel: hashlib.sha256((release_dir / rel).read_bytes()).hexdigest() for rel in pinned
    }
    assert len([p for p in pinned if p.startswith("images/")]) == 1275
    assert {p for p in pinned if p.startswith("annotations/")} >= {
        "annotations/active_passive_captions.json",
        "annotations/coordination_captions.json",
        "annotations/relative_clause_captions.json",
    }
    assert CHECKSUMS.parent.name == "data"


@pytest.mark.slow
def test_release_without_source_downloads_checks_caches_and_builds(
    served, tmp_path, monkeypatch, capsys
):
    """A fresh clone: no --source and no $BLA_RELEASE_DIR, so the release is downloaded."""
    base, _ = served
    cache = tmp_path / "cache"
    monkeypatch.setenv("BLA_RELEASE_URL", f"{base}/{ZIP_NAME}")
    monkeypatch.setenv("BLA_CACHE_DIR", str(cache))
    monkeypatch.delenv("BLA_RELEASE_DIR", raising=False)
    assert main(["release", "--out", str(tmp_path / "bla")]) == 0
    captured = capsys.readouterr()
    assert "BLA release: 100%" in captured.err  # the download's progress bar
    assert "wrote BLA 1.0.0" in captured.out
    assert [p.name for p in cache.iterdir()] == [ZIP_NAME]  # no temporary file left
    manifest = json.loads((tmp_path / "bla" / "manifest.json").read_text())
    assert manifest["source_files"] == pinned_checksums()
    # a second build uses the cache: the server is not asked again
    monkeypatch.setenv("BLA_RELEASE_URL", f"{base}/gone.zip")
    assert fetch_release(progress=False) == cache / ZIP_NAME


def test_corrupted_download_is_refused_and_not_cached(served, tmp_path, monkeypatch, capsys):
    base, image = served
    cache = tmp_path / "cache"
    with pytest.raises(ReleaseError, match=f"images/{image}: sha256 .* differs from the pinned"):
        fetch_release(f"{base}/corrupt.zip", cache, progress=False)
    assert list(cache.iterdir()) == []  # neither the zip nor a temporary file
    monkeypatch.setenv("BLA_RELEASE_URL", f"{base}/corrupt.zip")
    monkeypatch.setenv("BLA_CACHE_DIR", str(cache))
    monkeypatch.delenv("BLA_RELEASE_DIR", raising=False)
    assert main(["release", "--out", str(tmp_path / "bla"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "damaged or altered download, refused" in err
    assert not (tmp_path / "bla").exists()


def test_offline_says_where_to_put_the_zip(tmp_path):
    cache = tmp_path / "cache"
    with pytest.raises(ReleaseError, match=f"put it at {cache / ZIP_NAME}"):
        fetch_release("http://127.0.0.1:9/BLA_benchmark.zip", cache, progress=False)
    assert list(cache.iterdir()) == []


def test_source_url_and_a_zip_put_in_the_cache_by_hand(served, tmp_path, monkeypatch, capsys):
    base, image = served
    cache = tmp_path / "cache"
    monkeypatch.setenv("BLA_CACHE_DIR", str(cache))
    assert (
        main(
            [
                "release",
                "--source",
                f"{base}/corrupt.zip",
                "--out",
                str(tmp_path / "bla"),
                "--quiet",
            ]
        )
        == 2
    )
    assert f"images/{image}: sha256" in capsys.readouterr().err
    cache.mkdir(exist_ok=True)
    with zipfile.ZipFile(cache / ZIP_NAME, "w") as archive:  # put by hand, incomplete
        archive.writestr("BLA_Benchmark/annotations/active_passive_captions.json", "[]")
    with pytest.raises(ReleaseError, match="differs from the pinned"):
        fetch_release(f"{base}/{ZIP_NAME}", cache, progress=False)
