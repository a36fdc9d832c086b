"""What the builders of the other benchmarks share: image look-up with missing-image counts, and
writing a dataset repo (parquet per config, card, manifest) atomically and reproducibly through
:mod:`builders.io` and :mod:`builders.manifest`, in the rows of its benchmark's schema
(:data:`bla_metric.schema.BENCHMARK_ROWS`).

Every row carries its image(s) as the original file bytes. A config's items whose image the user
does not have are left out and counted; the card and the manifest say how many per config.
"""

from __future__ import annotations

import csv
import hashlib
import io as text_io
import math
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any

import yaml
from bla_eval import tables
from bla_eval.cli_common import option
from bla_eval.outputs import check_replaceable, parse_json, read_regular
from bla_eval.tables import Table

from bla_metric.schema import BENCHMARK_ROWS
from builders import io
from builders.card import dataset_info, size_category
from builders.io import dump_json, staged_folder, write_text
from builders.manifest import make_manifest
from builders.validate import check_decodable

NEIGHBOURS_VERSION = "1.0.0"
"""Version of the layout of these dataset repos (bump on any change to content or layout)."""

SPLIT = "test"
"""Every config holds its whole benchmark part as split ``test``."""


class BuildError(ValueError):
    """A bad input file or record; the message is one line naming it."""


@dataclass
class ConfigRows:
    """One config: its rows, how many items were left out, and why."""

    rows: list[dict] = field(default_factory=list)
    missing_images: int = 0
    left_out: dict[str, int] = field(default_factory=dict)
    """Other reasons items were left out (e.g. VALSE's ``not validated``): reason -> count."""
    missing_examples: list[str] = field(default_factory=list)
    """The first few missing image paths, for the report."""


class ImageStore:
    """Image bytes by path, each file read and checked to decode once."""

    def __init__(self) -> None:
        self._cache: dict[Path, bytes] = {}
        self.read: dict[str, str] = {}
        """image name -> sha256 of every image read (the manifest's ``source_files``)."""

    def get(self, path: Path, where: str, name: str | None = None) -> bytes:
        """The bytes of ``path``; ``name`` (default: the file name) keys it in :attr:`read`,
        so the manifest never holds the machine's own folders."""
        if path not in self._cache:
            data = _read(path, where)
            check_decodable(data, f"{where}: {path}")
            self._cache[path] = data
            self.read[name or path.name] = hashlib.sha256(data).hexdigest()
        return self._cache[path]


def inside(folder: Path, name: str, where: str) -> Path:
    """``folder / name`` for a path ``name`` read from an annotation (an image's file name):
    refused in one line naming ``where`` and the path when it is absolute, climbs out with
    ``..``, or leads out of ``folder`` through a symbolic link (of the file or of a folder on
    the way): a build embeds only the images of the folders it was given."""
    parts = name.replace("\\", "/").split("/")
    if not name or "\0" in name or os.path.isabs(name) or name.startswith(("/", "\\")):
        raise BuildError(f"{where}: the image path {name!r} is not a relative path")
    if ".." in parts:
        raise BuildError(f"{where}: the image path {name!r} climbs out of {folder} (..)")
    path = Path(folder) / name
    if os.path.lexists(path):
        try:
            real, root = path.resolve(), Path(folder).resolve()
        except (OSError, RuntimeError) as err:  # a loop of links
            raise BuildError(
                f"{where}: the image path {name!r} cannot be resolved: {err}"
            ) from None
        if not real.is_relative_to(root):
            raise BuildError(
                f"{where}: the image path {name!r} leads out of {folder} (a symbolic link to "
                f"{real})"
            )
    return path


def first_existing(candidates: Iterable[Path]) -> Path | None:
    """The first candidate path that is a file."""
    for path in candidates:
        if path.is_file():
            return path
    return None


def _read(path: Path, what: str | Path) -> bytes:
    """The bytes of the regular file ``path`` (a FIFO or device is refused, never waited on);
    errors name ``what``."""
    try:
        return read_regular(path)
    except OSError as err:
        raise BuildError(f"{what}: {path} cannot be read ({err.strerror})") from err
    except ValueError as err:
        raise BuildError(f"{what}: {err}") from None


def read_text(path: Path) -> str:
    """A neighbour's annotation file as text; an unreadable or non-UTF-8 file is named."""
    data = _read(path, path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BuildError(f"{path}: not UTF-8 text (byte {err.start + 1})") from None


def parse_document(text: str, where: str | Path) -> Any:
    """One JSON document of an annotation file: bounded (nesting, numbers: ``parse_json``),
    each object's keys given once (a key given twice would lose an item); an error names
    ``where``."""
    try:
        return parse_json(text, unique_keys=True)
    except ValueError as err:
        raise BuildError(f"{where}: not valid JSON ({err})") from None


def read_json(path: Path) -> Any:
    """A JSON file (:func:`parse_document`); an error names the file and the position."""
    return parse_document(read_text(path), path)


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, document) of every non-blank line of a JSON Lines file: lines end at
    ``\\n`` only, as the format says (a U+2028 inside a string is text)."""
    for number, line in enumerate(read_text(path).split("\n"), 1):
        if line.strip():
            yield number, parse_document(line, f"{path} line {number}")


def csv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of every row of a CSV file, read as the csv module reads a file
    opened with ``newline=""`` (rows end at ``\\n`` or ``\\r\\n``; a quoted cell may hold
    either; a U+2028 is text)."""
    reader = csv.reader(text_io.StringIO(read_text(path), newline=""))
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as err:
        raise BuildError(f"{path} line {reader.line_num}: not valid CSV ({err})") from None


def item_id(value: object, where: str) -> str:
    """An item's id as the dataset keeps it (a string): an integer or a non-empty string in
    the release; anything else (null, a boolean, a number with a fraction) is refused."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or value == "":
        raise BuildError(f"{where}: the id {value!r} is not an integer or a non-empty string")
    return str(value)


class UniqueIds:
    """The ids of one builder's items so far; a repeat (``1`` and ``"1"`` included: ids are
    compared as the dataset keeps them) is refused naming both places."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def add(self, key: str, where: str) -> str:
        if key in self.seen:
            raise BuildError(f"{where}: the id {key!r} is given twice (first at {self.seen[key]})")
        self.seen[key] = where
        return key


def text_field(record: dict, name: str, where: str, required: bool = True) -> str:
    """The string ``record[name]``: non-empty when ``required``; else absent or null reads as
    ``""``. Any other type (a number, a boolean, a list) is refused: a value is never turned
    into text by ``str()``."""
    value = record.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        kind = "a non-empty string" if required else "a string or null"
        raise BuildError(f"{where}: {name!r} must be {kind}, not {_shown(value)}")
    return value


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def embedded_image(value: object, where: str, column: str) -> dict[str, Any]:
    """An image of a parquet download (``{"bytes": ..., "path": ...}``), its bytes decodable;
    a column of another type is refused naming the column."""
    if not isinstance(value, dict) or not isinstance(value.get("bytes"), bytes | bytearray):
        raise BuildError(f"{where}: {column} holds no embedded image ({type(value).__name__})")
    if not value["bytes"]:
        raise BuildError(f"{where}: {column} holds no image bytes")
    path = value.get("path")
    check_decodable(bytes(value["bytes"]), f"{where}: {column}")
    return {"bytes": bytes(value["bytes"]), "path": path if isinstance(path, str) else None}


def parquet_rows(path: Path, required: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of a parquet file of a download, which holds the ``required`` columns and at
    least one row (errors name the file: unreadable, a column missing, no row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        raise BuildError(f"{path} is not a regular file")
    try:
        table = pq.read_table(path)
        rows = table.to_pylist()
    except (OSError, ValueError, pa.ArrowException) as err:
        said = " ".join(str(err).split())
        raise BuildError(f"{path} is not a readable parquet file: {said}") from None
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise BuildError(f"{path} lacks the column(s) {', '.join(missing)}")
    if not rows:
        raise BuildError(f"{path} holds no row: an empty download? (fetch it again)")
    return rows


def finite(values: Sequence[object], where: str, names: str) -> list[float]:
    """The numbers ``values`` as floats, each finite (inf, NaN, a boolean or a text that is no
    number is refused, ``names`` in the error)."""
    out = []
    for value in values:
        try:
            number = math.nan if isinstance(value, bool) else float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            number = math.nan
        if not math.isfinite(number):
            raise BuildError(f"{where}: {names} must be finite numbers, not {_shown(list(values))}")
        out.append(number)
    return out


def sha256_text(path: Path) -> str:
    return hashlib.sha256(_read(path, path)).hexdigest()


def data_file(config: str) -> str:
    """Path of a config's parquet file inside the dataset repo (split ``test``)."""
    return io.data_file(config, SPLIT)


@dataclass(frozen=True)
class RepoText:
    """The card text of one benchmark: its name, what it is, licence, citation, loading hint."""

    benchmark: str
    pretty_name: str
    intro: str
    licence: str
    licenses: tuple[str, ...]
    citation: str
    config_titles: dict[str, str] = field(default_factory=dict)


def build_repo(
    out: Path,
    text: RepoText,
    configs: dict[str, ConfigRows],
    source_hashes: dict[str, str],
    builder: str,
) -> dict:
    """Write ``configs`` as a dataset repo at ``out`` (staged, then swapped into place).

    Configs that hold no row are not written (a parquet file with no rows is of no use) but are
    listed in the card and the manifest with their counts. Returns the manifest.
    """
    features = BENCHMARK_ROWS[text.benchmark].features()
    for config, part in configs.items():
        ids = UniqueIds()
        for number, row in enumerate(part.rows, 1):
            ids.add(row["id"], f"{text.benchmark} config {config} row {number}")
    if not any(c.rows for c in configs.values()):
        missing = sum(c.missing_images for c in configs.values())
        raise BuildError(
            f"no {text.benchmark} item has its image ({missing} missing): check --images"
        )
    with staged_folder(Path(out), builder) as stage:  # replaces only a build of `builder`
        info: dict[str, dict[str, dict[str, int]]] = {}
        for config, part in configs.items():
            if not part.rows:
                continue
            path = stage / data_file(config)
            num_bytes = io.write_parquet(part.rows, path, features)
            info[config] = {
                SPLIT: {
                    "num_examples": len(part.rows),
                    "num_bytes": num_bytes,
                    "file_bytes": path.stat().st_size,
                }
            }
        write_text(stage / "README.md", render_card(text, configs, info))
        left_out = {
            config: {"missing_images": part.missing_images, **part.left_out}
            for config, part in configs.items()
        }
        manifest = make_manifest(
            stage,
            info,
            source_hashes,
            builder=builder,
            extra={"benchmark": text.benchmark, "left_out": left_out},
        )
        manifest["dataset_version"] = NEIGHBOURS_VERSION  # this layout's version, not BLA's
        write_text(stage / "manifest.json", dump_json(manifest))
    return manifest


def render_card(text: RepoText, configs: dict[str, ConfigRows], info: dict) -> str:
    """README.md: YAML header (configs, features, split sizes), then counts per config."""
    features = BENCHMARK_ROWS[text.benchmark].features()
    header = {
        "pretty_name": text.pretty_name,
        "language": ["en"],
        "license": list(text.licenses),
        "task_categories": ["image-text-to-text", "zero-shot-classification"],
        "tags": ["vision-language", "benchmark", "image-text-matching"],
        "size_categories": [size_category(sum(len(p.rows) for p in configs.values()))],
        "configs": [
            {
                "config_name": c,
                "data_files": [{"split": SPLIT, "path": data_file(c)}],
                **({"default": True} if i == 0 else {}),
            }
            for i, c in enumerate(info)
        ],
        "dataset_info": [dataset_info(c, s, features) for c, s in info.items()],
    }
    reasons = sorted({r for part in configs.values() for r in part.left_out})
    head = ["config", "items held", "left out: image missing", *(f"left out: {r}" for r in reasons)]
    rows = []
    for config, part in configs.items():
        title = text.config_titles.get(config)
        name = f"`{config}`" + (f" ({title})" if title else "")
        counts = [len(part.rows), part.missing_images, *(part.left_out.get(r, 0) for r in reasons)]
        rows.append([name, *map(str, counts)])
    counts_table = tables.markdown(Table("", head, rows), right=range(1, len(head)))
    total = sum(len(p.rows) for p in configs.values())
    body = [
        f"# {text.pretty_name}\n",
        f"Layout version {NEIGHBOURS_VERSION}. {text.intro}\n",
        "## Configs\n",
        f"Each config holds its items as split `{SPLIT}`: {total} items in all. Items whose image "
        "was not found under the image folder(s) given to the builder are left out and counted; "
        "configs with no item left are not written.\n",
        counts_table + "\n",
        "## Loading\n",
        "```python\nfrom datasets import load_dataset\n\n"
        f'ds = load_dataset("<this folder or Hub id>", "{next(iter(info))}", split="{SPLIT}")'
        "\n```\n",
        "`manifest.json` lists the sha256 of every file of this repo and of every source file "
        "read.\n",
        "## Licence\n\n" + text.licence + "\n",
        "## Citation\n\n```bibtex\n" + text.citation.strip() + "\n```\n",
    ]
    return (
        "---\n" + yaml.safe_dump(header, sort_keys=False, width=1000) + "---\n\n" + "\n".join(body)
    )


def summary(benchmark: str, out: Path, configs: dict[str, ConfigRows]) -> str:
    """One line per config for the terminal: held and left-out counts."""
    lines = [f"wrote {benchmark} to {out}"]
    for config, part in configs.items():
        extra = "".join(f", {n} {reason}" for reason, n in part.left_out.items() if n)
        shown = ""
        if part.missing_examples:
            shown = f" (e.g. {printable(part.missing_examples[0])})"
        lines.append(
            f"  {config}: {len(part.rows)} items, {part.missing_images} image(s) "
            f"missing{shown}{extra}"
        )
    return "\n".join(lines)


def printable(name: str) -> str:
    """``name`` on one line as it is shown: every character that is not printable (a newline,
    U+2028, a direction override) written as its escape, so a file name cannot forge a line."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in name)


def run_cli(
    build: Callable[..., tuple[dict, dict[str, ConfigRows]]],
    benchmark: str,
    args: Sequence[object],
    out: Path,
    builder: str | None = None,
) -> int:
    """Call ``build(*args)`` and print the per-config summary (errors propagate: ``python -m
    builders`` turns them into one line and exit code 2). With ``builder``, an ``out`` that
    the build could not replace is refused before anything is read."""
    if builder is not None:
        check_replaceable(Path(out), builder, keep_hidden=True)
    _, configs = build(*args)
    print(summary(benchmark, out, configs))
    return 0


def input_path(help: str, **cli: Any) -> Any:
    """A required folder or file a benchmark's builder reads (``--annotations`` ...)."""
    return option(MISSING, help, type=Path, **cli)


def out_folder() -> Any:
    """The ``--out`` option of a benchmark's builder (``run_cli``'s ``out``)."""
    return option(MISSING, "output folder, replaced only after a successful build", type=Path)
