"""Builder outputs: a build replaces only a folder it wrote itself; one card and manifest format
for release and construct (publish takes both); check_unique reads its rows once; construct with
no surviving set writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bla_eval.outputs import check_replaceable

from bla_metric.tasks import TASKS
from builders.__main__ import main
from builders.construct.config import ConstructConfig
from builders.construct.pipeline import construct
from builders.construct.writer import NothingConstructed, write_result
from builders.records import Datapoint
from builders.release import build_release, read_release
from builders.source import ReleaseError, ReleaseSource
from builders.validate import check_unique

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "vg"
OFF = ConstructConfig(grammar_scorer="none")
CONSTRUCT = [
    "construct",
    "--vg",
    str(FIXTURES / "release"),
    "--task",
    "ap",
    "--grammar-scorer",
    "none",
    "--quiet",
]


@pytest.fixture(scope="module")
def constructed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("constructed") / "ap"
    assert main([*CONSTRUCT, "--out", str(out)]) == 0
    return out


# ----------------------------------------------------------------------------- output folders


def _foreign(out: Path) -> None:
    """The repro of issue 14: a manifest.json that is not ours, and a file of the user's."""
    (out / "src").mkdir(parents=True)
    (out / "src" / "important.txt").write_text("keep me")
    (out / "manifest.json").write_text('{"name": "my project"}')


def _ours_plus_one(out: Path, build) -> None:
    """A build of ours, then one file it did not write."""
    build(out)
    (out / "data" / "notes.txt").write_text("keep me")


@pytest.mark.parametrize("kind", ["release", "construct"])
@pytest.mark.parametrize("prepare", ["foreign", "ours-plus-one"])
def test_build_refuses_a_folder_it_did_not_write_alone(
    small, tmp_path, capsys, kind, prepare, tree_bytes
):
    out = tmp_path / "out"
    args = ["release", "--source", str(small), "--quiet"] if kind == "release" else CONSTRUCT
    if prepare == "foreign":
        _foreign(out)
        kept = "(it holds manifest.json, src)"
    else:
        _ours_plus_one(out, lambda o: main([*args, "--out", str(o)]))
        kept = "data/notes.txt"
    before = tree_bytes(out)
    capsys.readouterr()
    assert main([*args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and kept in err, err
    assert tree_bytes(out) == before  # nothing deleted, nothing changed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temp folder left


def test_a_build_of_another_subcommand_is_not_replaced(
    small, constructed, tmp_path, capsys, tree_bytes
):
    release_out = tmp_path / "bla"
    build_release(small, release_out, progress=False)
    before = tree_bytes(release_out)
    capsys.readouterr()
    assert main([*CONSTRUCT, "--out", str(release_out)]) == 2
    assert "holds the output of `python -m builders release`" in capsys.readouterr().err
    assert main(["release", "--source", str(small), "--quiet", "--out", str(constructed)]) == 2
    assert "holds the output of `python -m builders construct`" in capsys.readouterr().err
    assert tree_bytes(release_out) == before


def test_a_build_of_an_earlier_version_is_replaced_by_its_builder_only(
    small, tmp_path, capsys, tree_bytes
):
    out = tmp_path / "bla"
    build_release(small, out, progress=False)
    first = tree_bytes(out)
    manifest = json.loads((out / "manifest.json").read_text())
    marker = json.loads((out / ".bla-output.json").read_text())
    assert marker == {"command": "python -m builders release", "files": sorted(first)[1:]}
    assert sorted(first)[1:] == sorted([*manifest["files"], "manifest.json"])
    (out / ".bla-output.json").unlink()  # as the builders wrote a folder before the marker
    capsys.readouterr()
    assert main([*CONSTRUCT, "--out", str(out)]) == 2
    assert "holds the output of `python -m builders release`" in capsys.readouterr().err
    build_release(small, out, progress=False)
    assert tree_bytes(out) == first


def test_own_build_is_replaced_keeping_hidden_files(small, tmp_path, tree_bytes):
    out = tmp_path / "bla"
    build_release(small, out, progress=False)
    first = tree_bytes(out)
    (out / ".gitignore").write_text("*\n")
    (out / "README.md").write_text("edited")  # a listed file, edited: replaced
    build_release(small, out, progress=False)
    files = tree_bytes(out)
    assert files.pop(".gitignore") == b"*\n"
    assert files == first


def test_folder_that_is_a_file_or_has_no_manifest(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError, match="is not a folder"):
        check_replaceable(tmp_path / "file")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "a.txt").write_text("x")
    with pytest.raises(FileExistsError, match="a.txt"):
        check_replaceable(tmp_path / "mine")
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / ".git").mkdir()
    check_replaceable(tmp_path / "hidden", keep_hidden=True)  # only hidden entries: built into


# ----------------------------------------------------------------------------- one format


def test_construct_folder_has_the_release_card_and_manifest(constructed, small, tmp_path):
    manifest = json.loads((constructed / "manifest.json").read_text())
    build_release(small, tmp_path / "rel", progress=False)
    released = json.loads((tmp_path / "rel" / "manifest.json").read_text())
    assert manifest["builder"] == "python -m builders construct"
    assert set(released) <= set(manifest)  # same format, plus construct's own keys
    assert manifest["dataset_version"] == released["dataset_version"]
    assert manifest["configs"] == {"active_passive": {"test": 7}}
    assert set(manifest["files"]) == {
        "README.md",
        "construct_report.json",
        "data/active_passive/test-00000-of-00001.parquet",
    }
    card = (constructed / "README.md").read_text()
    assert card.startswith("---\n") and "## Provenance" in card and "## Fields" in card
    assert "dataset_info:" in card and "default: true" in card


def test_publish_dry_run_on_a_constructed_folder(constructed, capsys):
    capsys.readouterr()
    argv = [
        "publish",
        "--source",
        str(constructed),
        "--repo-id",
        "org/bla-ap-vg",
        "--tag",
        "v1.0.0",
        "--dry-run",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "create_repo" in out and "create_commit" in out and "create_tag" in out
    assert "upload_folder" not in out  # one commit holds the whole build
    assert "construct_report.json" in out


def test_no_surviving_set_is_an_error_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "none"
    argv = [*CONSTRUCT, "--min-person-area", "0.9", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "no active_passive caption set survived" in err and "person too small" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []
    result = construct(
        FIXTURES / "release",
        "ap",
        ConstructConfig(grammar_scorer="none", min_person_area=0.9),
        progress=False,
    )
    with pytest.raises(NothingConstructed, match="nothing was written"):
        write_result(result, "ap", out, None, {})
    assert not out.exists()


# ----------------------------------------------------------------------------- check_unique


def _dp(id_: str, image_id: str) -> Datapoint:
    return Datapoint(id_, image_id, ("a", "b"), (1, 0), ("TA", "FA"), "", None, f"row {id_}")


def test_check_unique_checks_image_ids_of_a_one_pass_iterator():
    rows = [_dp("ap-0000", "1"), _dp("ap-0001", "1")]
    with pytest.raises(ReleaseError, match="duplicate image_id '1'"):
        check_unique(iter(rows), "config active_passive_learning")
    with pytest.raises(ReleaseError, match="duplicate id 'ap-0000'"):
        check_unique(iter([_dp("ap-0000", "1"), _dp("ap-0000", "2")]), "x")


def test_learning_splits_share_no_image_in_the_real_release(release_dir):
    with ReleaseSource(release_dir) as source:
        tables = read_release(source)
    for task in TASKS.values():
        splits = tables[task.learning_config]
        assert set(splits) == {"train", "validation", "test"}
        seen: dict[str, str] = {}
        for split, rows in splits.items():
            for dp in rows:
                assert seen.setdefault(dp.image_id, split) == split, (task.code, dp.image_id)
        check_unique((dp for rows in splits.values() for dp in rows), task.learning_config)


# ----------------------------------------------------------------------------- calibration


def test_calibration_reads_the_release_through_the_validated_reader(
    release_dir, tmp_path, small_release
):
    from builders.construct.calibrate import release_sets

    sets = release_sets(release_dir)
    with ReleaseSource(release_dir) as source:
        tables = read_release(source)
    assert {c: len(s) for c, s in sets.items()} == {
        "active_passive": 613,
        "coordination": 654,
        "relative_clause": 672,
    }
    for config, groups in sets.items():
        assert groups == [list(dp.captions) for dp in tables[config]["test"]]
    broken = small_release(release_dir, tmp_path / "broken")
    records = json.loads((broken / "annotations/coordination_captions.json").read_text())
    group = records[0]["caption_group"][0]
    group["False1"] = group["True1"]  # the old parser took this without a word
    (broken / "annotations/coordination_captions.json").write_text(json.dumps(records))
    with pytest.raises(ReleaseError, match="coordination_captions.json, record 0 .*not distinct"):
        release_sets(broken)
