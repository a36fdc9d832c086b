"""Every builders entry point turns a bad argument, path or record into one line naming it, exit
code 2, and nothing written; ``--debug`` shows the traceback instead."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from builders.__main__ import main
from builders.source import ReleaseError

REPO_ROOT = Path(__file__).resolve().parents[2]
VG = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "vg" / "release"
AP_FILE = "annotations/active_passive_captions.json"


@pytest.fixture(scope="module")
def bad(
    release_dir: Path, tmp_path_factory: pytest.TempPathFactory, small_release, zip_release
) -> dict[str, Path]:
    """The bad inputs, made once: files, damaged releases, broken Visual Genome records."""
    root = tmp_path_factory.mktemp("bad")
    small = small_release(release_dir, root / "small")
    text = root / "notes.txt"
    text.write_text("not a release")
    # a valid zip whose annotation member is damaged (CRC mismatch)
    damaged = zip_release(small, root / "damaged.zip", "BLA_Benchmark/")
    data = bytearray(damaged.read_bytes())
    at = data.find(b'"caption_group"')
    data[at + 2] ^= 0x20
    damaged.write_bytes(bytes(data))
    # a release whose record lost its caption_group
    missing = small_release(release_dir, root / "missing_key")
    records = json.loads((missing / AP_FILE).read_text())
    del records[1]["caption_group"]
    (missing / AP_FILE).write_text(json.dumps(records))
    # Visual Genome relationships without a subject
    vg = root / "vg"
    shutil.copytree(VG, vg)
    rels = json.loads((vg / "relationships.json").read_text())
    del rels[0]["relationships"][0]["subject"]
    (vg / "relationships.json").write_text(json.dumps(rels))
    scores = root / "scores.json"
    scores.write_text("{}")
    other = root / "other_scores.json"  # an earlier calibration of other sentences
    other.write_text(
        json.dumps(
            {
                "scorer": "lm-slor:x",
                "sentence_scores": {"a cat": 1.0},
                "model_load_s": 0,
                "scoring_s": 0,
            }
        )
    )
    return {
        "small": small,
        "text": text,
        "damaged": damaged,
        "missing": missing,
        "vg": vg,
        "scores": scores,
        "other": other,
        "nowhere": root / "does-not-exist",
    }


CONSTRUCT = ["construct", "--vg", "{vg_ok}", "--task", "ap", "--grammar-scorer", "none", "--quiet"]

CASES = {
    # name: (argv with {placeholders}, text the one line must contain)
    "release-out-is-a-file": (
        ["release", "--source", "{small}", "--out", "{text}", "--quiet"],
        "{text} exists and is not a folder",
    ),
    "release-source-missing": (
        ["release", "--source", "{nowhere}", "--out", "{out}"],
        "release not found: {nowhere}",
    ),
    "release-source-not-a-zip": (
        ["release", "--source", "{text}", "--out", "{out}"],
        "{text} is neither a folder nor a zip file",
    ),
    "release-damaged-zip-member": (
        ["release", "--source", "{damaged}", "--out", "{out}", "--quiet"],
        "active_passive_captions.json cannot be read",
    ),
    "release-record-missing-key": (
        ["release", "--source", "{missing}", "--out", "{out}", "--quiet"],
        "active_passive_captions.json, record 1",
    ),
    "release-unknown-option": (["release", "--bogus"], "unrecognized arguments: --bogus"),
    "publish-no-manifest": (
        ["publish", "--source", "{small}", "--repo-id", "o/b", "--tag", "v1.0.0", "--dry-run"],
        "{small} has no manifest.json",
    ),
    "publish-source-is-a-file": (
        ["publish", "--source", "{text}", "--repo-id", "o/b", "--tag", "v1.0.0", "--dry-run"],
        "{text} has no manifest.json",
    ),
    "publish-no-tag": (["publish", "--repo-id", "o/b"], "the following arguments are required"),
    "construct-negative-limit": (
        [*CONSTRUCT, "--out", "{out}", "--limit", "-1"],
        "--limit: must be at least 1, got -1",
    ),
    "construct-limit-not-a-number": (
        [*CONSTRUCT, "--out", "{out}", "--limit", "many"],
        "--limit: not an integer: 'many'",
    ),
    "construct-vg-missing": (
        ["construct", "--vg", "{nowhere}", "--task", "ap", "--out", "{out}"],
        "--vg: not a folder: {nowhere}",
    ),
    "construct-unknown-task": (
        ["construct", "--vg", "{vg_ok}", "--task", "xx", "--out", "{out}"],
        "invalid choice: 'xx'",
    ),
    "construct-out-is-a-file": (
        [*CONSTRUCT, "--out", "{text}"],
        "{text} exists and is not a folder",
    ),
    "construct-vg-record-missing-key": (
        [
            "construct",
            "--vg",
            "{vg}",
            "--task",
            "ap",
            "--grammar-scorer",
            "none",
            "--quiet",
            "--out",
            "{out}",
        ],
        "missing key 'subject'",
    ),
    "construct-area-out-of-range": (
        [*CONSTRUCT, "--out", "{out}", "--min-person-area", "2"],
        "--min-person-area: must be in (0, 1], got 2.0",
    ),
    "construct-unknown-scorer": (
        [*CONSTRUCT[:-3], "--grammar-scorer", "gruen", "--out", "{out}"],
        "unknown --grammar-scorer 'gruen'",
    ),
    "construct-uncalibrated-scorer": (
        [*CONSTRUCT[:-3], "--grammar-scorer", "lm-mean", "--out", "{out}"],
        "lm-mean:SmolLM2-135M-Instruct.Q4_1.gguf has no recorded calibration",
    ),
    "calibrate-release-missing": (
        ["calibrate", "--release", "{nowhere}"],
        "release not found: {nowhere}",
    ),
    "calibrate-keep-out-of-range": (
        ["calibrate", "--release", "{small}", "--keep", "1.5"],
        "--keep: must be in (0, 1], got 1.5",
    ),
    "calibrate-limit-zero": (
        ["calibrate", "--release", "{small}", "--limit", "0"],
        "--limit: must be at least 1, got 0",
    ),
    "calibrate-bad-scores-file": (
        ["calibrate", "--release", "{small}", "--scores", "{scores}"],
        "--scores {scores}: not the --out of an earlier calibration",
    ),
    "calibrate-scores-of-other-sentences": (
        ["calibrate", "--release", "{small}", "--scores", "{other}"],
        "have no score for the release sentence",
    ),
}


def _fill(text: str, paths: dict[str, Path]) -> str:
    return text.format(**{k: str(v) for k, v in paths.items()})


def _tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.mark.parametrize("name", list(CASES))
def test_bad_argument_is_one_line_exit_2_nothing_written(bad, tmp_path, capsys, name):
    argv, expected = CASES[name]
    paths = {**bad, "out": tmp_path / "out", "vg_ok": VG}
    before = {p: _tree(p.parent) for p in (tmp_path / "out", bad["small"])}
    capsys.readouterr()
    code = _run([_fill(a, paths) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"python -m builders {argv[0]}: error: "), err
    assert _fill(expected, paths) in lines[0], lines[0]
    assert "Traceback" not in err
    assert {p: _tree(p.parent) for p in before} == before  # nothing written, nothing left


def _run(argv: list[str]) -> int:
    """``main(argv)``'s exit code, also when argparse exits (bad usage)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_real_process_damaged_zip_one_line_and_debug_traceback(bad, tmp_path):
    argv = [
        sys.executable,
        "-m",
        "builders",
        "release",
        "--source",
        str(bad["damaged"]),
        "--out",
        str(tmp_path / "out"),
        "--quiet",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "cannot be read" in done.stderr, done.stderr
    with pytest.raises(ReleaseError, match="cannot be read"):  # --debug: the exception itself
        main(["--debug", *argv[3:]])
    with pytest.raises(ReleaseError, match="cannot be read"):  # also after the subcommand
        main([*argv[3:], "--debug"])
    assert not (tmp_path / "out").exists()
    with zipfile.ZipFile(bad["damaged"]) as archive:  # the damage is in one member only
        assert archive.testzip() is not None
