"""A finished run read back: results.json, the score records, and the dataset rows they score.

Nothing here writes into the run folder; the analyses write theirs with
:func:`bla_eval.outputs.staged` (a hidden folder renamed into place).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..runs import RunFolder

ROW_COLUMNS = (
    "id",
    "image_id",
    "captions",
    "labels",
    "caption_types",
    "predicate",
    "grammar_scores",
)
"""Dataset columns the analyses read (the image is read only for the extreme cases)."""


@dataclass
class Run:
    """One finished run: its results document and per task the score records in dataset order."""

    path: Path
    results: dict[str, Any]
    records: dict[str, list[dict[str, Any]]]
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def tasks(self) -> list[str]:
        return list(self.records)

    @property
    def model(self) -> str:
        return str(self.results.get("model", "?"))


def load_run(path: str | Path, any_benchmark: bool = False) -> Run:
    """Read a finished BLA run folder written by ``bla-eval`` (``any_benchmark``: a run of any
    benchmark), checked by :meth:`bla_eval.runs.RunFolder.open` (results.json agrees with
    scores.jsonl); records per task sorted by id."""
    finished = RunFolder.open(path)
    if finished.benchmark != "bla" and not any_benchmark:
        raise ValueError(
            f"{finished.path} is a run of the benchmark {finished.benchmark!r}: the analyses "
            "are BLA's"
        )
    records = {
        task: sorted(recs, key=lambda r: str(r["id"])) for task, recs in finished.records.items()
    }
    return Run(path=finished.path, results=finished.results, records=records)


def _local_files(data: Path, config: str, split: str) -> list[Path]:
    return sorted((data / "data" / config).glob(f"{split}-*.parquet"))


def load_rows(data: str, config: str, split: str = "test", image: bool = False) -> list[dict]:
    """Rows of one dataset config and split (local dataset folder or Hub id), images left as
    bytes when ``image`` (else not read)."""
    columns = [*ROW_COLUMNS, "image"] if image else list(ROW_COLUMNS)
    if Path(data).is_dir():
        import pyarrow.parquet as pq

        files = _local_files(Path(data), config, split)
        if not files:
            raise FileNotFoundError(f"dataset {data} has no {config}/{split} parquet files")
        rows = []
        for file in files:
            schema = pq.read_schema(file)
            present = [c for c in columns if c in schema.names]
            rows += pq.read_table(file, columns=present).to_pylist()
        return rows
    import datasets

    ds = datasets.load_dataset(data, config, split=split)
    keep = [c for c in columns if c in ds.column_names]
    ds = ds.select_columns(keep)
    if "image" in keep:
        ds = ds.cast_column("image", datasets.Image(decode=False))
    return list(ds)


def attach_rows(run: Run, data: str | None = None) -> Run:
    """Join each score record with its dataset row (captions, predicate, grammar scores)."""
    data = data or run.results.get("dataset")
    if not data:
        raise ValueError(f"{run.path}/results.json names no dataset: give one with --data")
    split = run.results.get("split") or "test"
    for task, records in run.records.items():
        rows = {str(r["id"]): r for r in load_rows(str(data), task, split)}
        missing = [r["id"] for r in records if str(r["id"]) not in rows]
        if missing:
            raise ValueError(
                f"dataset {data} {task}/{split} lacks the run's datapoint {missing[0]} "
                f"({len(missing)} missing): give the dataset the run scored with --data"
            )
        run.rows[task] = [rows[str(r["id"])] for r in records]
        _check_labels(run, task, data)
    run.results["_analysis_data"] = str(data)
    return run


def _check_labels(run: Run, task: str, data: str) -> None:
    """The run's labels are the dataset's (a scores.jsonl edited by hand is named)."""
    for record, row in zip(run.records[task], run.rows[task], strict=True):
        if list(record["labels"]) != list(row["labels"]):
            raise ValueError(
                f"{run.path}/scores.jsonl: datapoint {task}/{record['id']} has labels "
                f"{record['labels']}, the dataset {data} has {list(row['labels'])} (a record "
                "edited by hand, or another dataset): analyses use the dataset's labels only"
            )


def images_of(data: str, config: str, split: str, ids: set[str]) -> dict[str, dict]:
    """{datapoint id: image {"bytes", "path"}} for the given ids of one config."""
    if not ids:
        return {}
    return {
        str(r["id"]): r["image"]
        for r in load_rows(data, config, split, image=True)
        if str(r["id"]) in ids
    }
