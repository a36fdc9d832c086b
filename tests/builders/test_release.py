"""The release converter: every row equals the release, the card and manifest match the files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from bla_eval.outputs import OWNER_FILE

from bla_metric.schema import BLA_ROWS, COLUMNS, DATASET_VERSION, config_names, sentence_configs
from builders.card import features_of
from builders.release import build_release, data_file

TASK_FILES = {
    "active_passive": "active_passive_captions.json",
    "coordination": "coordination_captions.json",
    "relative_clause": "relative_clause_captions.json",
}
LEARNING_DIRS = {
    "active_passive": "active_passive",
    "coordination": "coord",
    "relative_clause": "rc",
}
LEARNING_FILES = {"train": "train.json", "validation": "valid.json", "test": "test.json"}
CAPTION_KEYS = ["True1", "True2", "False1", "False2"]


def release_json(release: Path, rel: str):
    return json.loads((release / "annotations" / rel).read_text())


def read_rows(repo: Path, config: str, split: str) -> list[dict]:
    return pq.read_table(repo / data_file(config, split)).to_pylist()


def card_header(repo: Path) -> dict:
    text = (repo / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_row_counts(built_dataset: Path, release_dir: Path) -> None:
    counts = {
        c: {
            s: pq.ParquetFile(built_dataset / data_file(c, s)).metadata.num_rows
            for s in ("test", "train", "validation")
            if (built_dataset / data_file(c, s)).exists()
        }
        for c in config_names()
    }
    assert counts["active_passive"] == {"test": 613}
    assert counts["coordination"] == {"test": 654}
    assert counts["relative_clause"] == {"test": 672}
    for task, folder in LEARNING_DIRS.items():
        # The paper says 100 validation rows; the release's valid.json files hold 200 each.
        assert counts[task + "_learning"] == {"train": 100, "validation": 200, "test": 200}
        for split, name in LEARNING_FILES.items():
            file = f"finetune/finetune_random/{folder}/{name}"
            assert counts[task + "_learning"][split] == len(release_json(release_dir, file))


@pytest.mark.parametrize("config", list(TASK_FILES))
def test_benchmark_rows_equal_release(built_dataset: Path, release_dir: Path, config: str) -> None:
    records = release_json(release_dir, TASK_FILES[config])
    rows = read_rows(built_dataset, config, "test")
    assert len(rows) == len(records)
    short = {"active_passive": "ap", "coordination": "co", "relative_clause": "rc"}[config]
    for position, (row, record) in enumerate(zip(rows, records, strict=True)):
        group = record["caption_group"][0]
        assert tuple(row) == COLUMNS
        assert row["id"] == f"{short}-{position:04d}"
        assert row["image_id"] == str(record["image_id"])
        assert row["captions"] == [group[k] for k in CAPTION_KEYS]
        assert row["labels"] == [1, 1, 0, 0]
        assert row["grammar_scores"] == group.get("score")
        assert row["predicate"] == group.get("predicate", "")
    types = {tuple(r["caption_types"]) for r in rows}
    assert (
        types == {("TA", "TP", "FA", "FP")}
        if config == "active_passive"
        else types == {("TP1", "TP2", "FP1", "FP2")}
    )


@pytest.mark.parametrize("config", list(TASK_FILES))
def test_learning_rows_equal_release(built_dataset: Path, release_dir: Path, config: str) -> None:
    records = {
        str(r["image_id"]): r["caption_group"][0]
        for r in release_json(release_dir, TASK_FILES[config])
    }
    bench_ids = {r["image_id"]: r["id"] for r in read_rows(built_dataset, config, "test")}
    for split, name in LEARNING_FILES.items():
        folder = LEARNING_DIRS[config]
        entries = release_json(release_dir, f"finetune/finetune_random/{folder}/{name}")
        rows = read_rows(built_dataset, config + "_learning", split)
        assert [r["image_id"] for r in rows] == list(entries)
        for row in rows:
            group = records[row["image_id"]]
            assert row["captions"] == entries[row["image_id"]]
            assert row["labels"] == [
                int(c in (group["True1"], group["True2"])) for c in row["captions"]
            ]
            assert row["id"] == bench_ids[row["image_id"]]
            if "score" in group:
                assert row["grammar_scores"] == [
                    group["score"][[group[k] for k in CAPTION_KEYS].index(c)]
                    for c in row["captions"]
                ]
            else:
                assert row["grammar_scores"] is None
            assert sorted(row["labels"]) == ([0, 1] if split == "train" else [0, 0, 1, 1])


def test_images_are_the_release_bytes(built_dataset: Path, release_dir: Path) -> None:
    checked = 0
    for config in config_names():
        for path in sorted((built_dataset / "data" / config).glob("*.parquet")):
            table = pq.read_table(path, columns=["image_id", "image"])
            for image_id, image in zip(
                table["image_id"].to_pylist(), table["image"].to_pylist(), strict=True
            ):
                original = (release_dir / "images" / f"{image_id}.jpg").read_bytes()
                assert image["bytes"] == original, f"{config} {path.name} image {image_id}"
                assert image["path"] == f"{image_id}.jpg"
                checked += 1
    assert checked == 613 + 654 + 672 + 3 * 500


def test_parquet_schema_carries_the_features(built_dataset: Path) -> None:
    schema = pq.read_schema(built_dataset / data_file("coordination", "test"))
    features = BLA_ROWS.features()
    assert schema.remove_metadata() == features.arrow_schema.remove_metadata()
    assert json.loads(schema.metadata[b"huggingface"])["info"]["features"] == features.to_dict()


def test_card_yaml_matches_files(built_dataset: Path) -> None:
    header = card_header(built_dataset)
    assert header["license"] == ["mit", "cc-by-4.0"]
    assert [c["config_name"] for c in header["configs"]] == config_names() + sentence_configs()
    for entry in header["configs"]:
        for data in entry["data_files"]:
            assert data["path"] == data_file(entry["config_name"], data["split"])
    infos = {i["config_name"]: i for i in header["dataset_info"]}
    assert list(infos) == config_names() + sentence_configs()
    for config, info in infos.items():
        assert info["features"] == features_of(config)._to_yaml_list()
        sizes = 0
        for split in info["splits"]:
            path = built_dataset / data_file(config, split["name"])
            table = pq.read_table(path)
            assert split["num_examples"] == table.num_rows
            assert split["num_bytes"] == table.nbytes
            sizes += path.stat().st_size
        assert info["download_size"] == sizes
        assert info["dataset_size"] == sum(s["num_bytes"] for s in info["splits"])


def test_card_statistics_are_computed_from_the_data(built_dataset: Path, release_dir: Path) -> None:
    text = (built_dataset / "README.md").read_text(encoding="utf-8")
    for config, file in TASK_FILES.items():
        groups = [r["caption_group"][0] for r in release_json(release_dir, file)]
        sentences = [g[k] for g in groups for k in CAPTION_KEYS]
        vocab = len({w for s in sentences for w in s.lower().split()})
        length = sum(len(s.split()) for s in sentences) / len(sentences)
        row = next(line for line in text.splitlines() if line.startswith(f"| {config} | "))
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == str(len(groups))
        assert cells[3] == str(vocab)
        assert cells[5] == f"{length:.2f}"
        scores = [s for g in groups for s in g.get("score", [])]
        assert cells[7] == (f"{sum(scores) / len(scores):.3f}" if scores else "n/a")
    assert "@inproceedings{chen-etal-2023-bla" in text


def test_manifest_hashes_every_file(built_dataset: Path, release_dir: Path) -> None:
    manifest = json.loads((built_dataset / "manifest.json").read_text())
    assert manifest["dataset_version"] == DATASET_VERSION
    written = sorted(
        p.relative_to(built_dataset).as_posix() for p in built_dataset.rglob("*") if p.is_file()
    )
    assert written[0] == OWNER_FILE  # the marker of the folder: not part of the dataset
    assert sorted([*manifest["files"], "manifest.json"]) == written[1:]
    for rel, entry in manifest["files"].items():
        data = (built_dataset / rel).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    sources = manifest["source_files"]
    assert sum(rel.startswith("images/") for rel in sources) == 1275
    assert sum(rel.startswith("annotations/") for rel in sources) == 3 + 9
    for rel, digest in sources.items():
        assert hashlib.sha256((release_dir / rel).read_bytes()).hexdigest() == digest, rel
    assert manifest["configs"]["coordination"] == {"test": 654}


@pytest.mark.slow
def test_full_rebuild_is_byte_identical(
    built_dataset: Path, release_dir: Path, tmp_path: Path
) -> None:
    again = tmp_path / "again"
    manifest = build_release(release_dir, again, progress=False)
    assert (again / "manifest.json").read_bytes() == (built_dataset / "manifest.json").read_bytes()
    assert manifest == json.loads((built_dataset / "manifest.json").read_text())
