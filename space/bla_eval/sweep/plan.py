"""A sweep plan (YAML): models x benchmarks x protocols and shared settings, expanded into cells.

Each model, benchmark and protocol entry is a mapping of ``RunConfig`` settings plus a ``name``
(the cell folder's part; the model's also its display name); ``options`` holds the settings
every cell shares. A cell is one ``RunConfig``: shared options, then the benchmark's, the
protocol's and the model's (later ones win); a model's ``protocols`` lists the protocol entries
it runs (default: all). Every error is one line naming the bad key.
"""

from __future__ import annotations

import dataclasses
import os
import re
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Recorded, RunConfig

SECTIONS = ("models", "benchmarks", "protocols")
"""The lists of a plan, in the order of a cell's path (benchmark/protocol/model)."""
KEY_FIELD = {"models": "model", "benchmarks": "benchmark", "protocols": "protocol"}
"""The ``RunConfig`` setting an entry may be given as a bare string."""
NOT_IN_PLAN = ("output_dir", "resume", "overwrite", "table_format", "plot")
"""Settings the sweep itself decides (the cell's folder, resuming, never discarding a cell's scores)
or that print (the report)."""
PATH_SETTINGS = ("data", "model", "regions")
"""Settings that may name a path on the driver (resolved to absolute ones: ``absolute_paths``)."""
ONLY = "protocols"
"""A model entry's key: the protocol entries it runs (default: all)."""
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,79}")
"""An entry's folder name, matched whole (``fullmatch``: no trailing newline slips through)."""
MAX_PLAN_BYTES = 1024 * 1024
"""The largest plan read (a plan of a thousand models is a few hundred kilobytes)."""
MAX_PLAN_DEPTH = 16
"""The deepest nesting of collections in a plan (a plan nests four levels)."""
MAX_PLAN_NODES = 100_000
"""The most values a plan may hold once its aliases are expanded (a YAML alias bomb holds
billions)."""
SHOWN_CHARS = 60
FIELDS = {f.name: f for f in dataclasses.fields(RunConfig)}
HINTS = typing.get_type_hints(RunConfig)


class PlanError(ValueError):
    """A plan that cannot be run (the message names the file and the key)."""


@dataclass(frozen=True)
class Cell:
    """One run of the sweep: its path under the sweep folder and its settings."""

    model: str
    benchmark: str
    protocol: str
    settings: dict[str, Any]
    """``RunConfig`` keyword arguments, ``output_dir`` excepted (JSON values)."""

    @property
    def id(self) -> str:
        """``benchmark/protocol/model``: the cell's folder under the sweep folder."""
        return f"{self.benchmark}/{self.protocol}/{self.model}"

    def config(self, root: Path, resume: bool) -> RunConfig:
        """The cell's ``RunConfig`` writing into ``root / id``."""
        settings = {k: tuple(v) if isinstance(v, list) else v for k, v in self.settings.items()}
        return RunConfig(output_dir=Path(root) / self.id, resume=resume, **settings)

    def recorded(self) -> dict[str, Any]:
        """The settings that decide its scores (``resume`` in their metadata): a later plan
        must give the same for a cell already started. Those recorded only for the kinds that
        read them (``Recorded.IF_READ``: the endpoint's) are checked against the cell's
        ``run.json`` alone."""
        return {
            k: v
            for k, v in self.settings.items()
            if FIELDS[k].metadata.get("resume") not in (None, Recorded.IF_READ)
        }


@dataclass(frozen=True)
class Plan:
    """A parsed plan: its source text and its cells (in benchmark, protocol, model order)."""

    text: str
    cells: tuple[Cell, ...]


def _value(where: str, key: str, value: Any) -> Any:
    """``value`` of the setting ``key`` as ``RunConfig`` takes it (a list or comma string for a
    tuple setting)."""
    if key not in FIELDS or key in NOT_IN_PLAN:
        raise PlanError(f"{where}: unknown key {key!r} (not a bla-eval run setting a plan sets)")
    hint = HINTS[key]
    if typing.get_origin(hint) is tuple:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise PlanError(f"{where} must be a list of names or a comma-separated string")
        return [v.strip() for v in items if v.strip()]
    allowed = typing.get_args(hint) or (hint,)
    if hint is float or float in allowed:
        allowed = (*allowed, int)
    if not isinstance(value, tuple(a for a in allowed if isinstance(a, type))) or (
        isinstance(value, bool) and bool not in allowed
    ):
        raise PlanError(f"{where} has the wrong type ({type(value).__name__}: {brief(value)})")
    return value


def brief(value: Any) -> str:
    """A value in an error, cut to :data:`SHOWN_CHARS` (the plan's bounds keep its repr small)."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _settings(where: str, mapping: Any) -> dict[str, Any]:
    if not isinstance(mapping, dict):
        raise PlanError(f"{where}: expected a mapping of run settings")
    return {str(k): _value(f"{where}.{k}", str(k), v) for k, v in mapping.items()}


def _default_name(section: str, settings: dict[str, Any]) -> str:
    """The last part of a model id or path, a benchmark or protocol name, made a folder name."""
    value = str(settings.get(KEY_FIELD[section], "zero-shot" if section == "protocols" else ""))
    name = re.sub(r"[^A-Za-z0-9._+-]", "-", value.rstrip("/").split("/")[-1]).lstrip(".-_+")
    return name[:80] or section[:-1]


def _only(where: str, names: Any, known: list[str]) -> list[str]:
    """A model's ``protocols``: names of protocol entries of the plan."""
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise PlanError(f"{where} must be a non-empty list of the plan's protocol names")
    for name in names:
        if name not in known:
            shown = ", ".join(known)
            raise PlanError(f"{where}: {name!r} is none of the plan's protocols ({shown})")
    return names


def _entries(
    source: str, doc: dict[str, Any], section: str, known: list[str] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """(name, settings) of each entry of ``section``; a model's ``protocols`` (kept under
    :data:`ONLY`) must name entries of ``known``."""
    entries = doc.get(section)
    if section == "protocols" and entries is None:
        entries = [{"name": "zero-shot"}]
    if not isinstance(entries, list) or not entries:
        raise PlanError(f"{source}: {section} must be a non-empty list")
    out: list[tuple[str, dict[str, Any]]] = []
    for k, entry in enumerate(entries):
        where = f"{source}: {section}[{k}]"
        if isinstance(entry, str):
            entry = {KEY_FIELD[section]: entry}
        if not isinstance(entry, dict):
            raise PlanError(f"{where}: expected a name or a mapping")
        entry = dict(entry)
        name = entry.pop("name", None)
        only = entry.pop("protocols", None) if section == "models" else None
        settings = _settings(where, entry)
        if only is not None:
            settings[ONLY] = _only(f"{where}.protocols", only, known or [])
        if section == "models" and "model" not in settings:
            raise PlanError(f"{where}: the key 'model' is missing")
        name = str(name) if name is not None else _default_name(section, settings)
        if not NAME_RE.fullmatch(name):
            raise PlanError(
                f"{where}.name: {brief(name)} is no folder name (letters, digits, . _ + -; at "
                "most 80)"
            )
        if section == "models" and "name" not in settings:
            settings.setdefault("name", name)  # the display name in the leaderboard
        if name.casefold() in (n.casefold() for n, _ in out):  # one folder where case is ignored
            raise PlanError(f"{where}.name: {name!r} is given twice: give each entry its own")
        out.append((name, settings))
    return out


def _check(cell: Cell) -> None:
    """Build the cell's settings and name its benchmark's tasks (as ``bla-eval`` does)."""
    from ..benchmarks import get_benchmark

    config = cell.config(Path("."), False)
    bench = get_benchmark(config.benchmark)
    for task in config.tasks:
        bench.resolve_task(task)


def check_sources(cells: Sequence[Cell]) -> None:
    """Before the first cell runs: every cell's data and model found as its ``bla-eval`` run
    would find them (``bla_eval.data.check_dataset``: a folder that does not exist is never
    taken for a Hub id; ``bla_eval.scorers.resolve.check_findable``); a PlanError names how many
    cells cannot run and the first with its reason."""
    from .. import bundled
    from ..benchmarks import get_benchmark
    from ..data import check_dataset
    from ..scorers.resolve import check_findable

    checked: dict[tuple[str, str], str | None] = {}

    def problem(what: str, value: str, check: Callable[[], None]) -> str | None:
        if (what, value) not in checked:
            try:
                check()
                checked[what, value] = None
            except (ValueError, OSError) as err:
                checked[what, value] = " ".join(str(err).split())
        return checked[what, value]

    bad: list[tuple[Cell, str]] = []
    for cell in cells:
        config = cell.config(Path("."), False)
        try:
            data = get_benchmark(config.benchmark).data_or_default(config.data)
        except ValueError as err:
            bad.append((cell, str(err)))
            continue
        found = problem("data", data, lambda d=data: check_dataset(d))
        if found is None and not config.endpoint:
            model = config.model
            found = problem(
                "model", model, lambda m=model: check_findable(m, bundled.resolve_model(m))
            )
        if found is not None:
            bad.append((cell, found))
    if bad:
        cell, why = bad[0]
        raise PlanError(
            f"{len(bad)} of the {len(cells)} cells to run cannot run, so none was started; "
            f"the first, {cell.id}: {why}"
        )


def _check_bounds(yaml: Any, text: str, source: str) -> None:
    """Refuse a plan larger than :data:`MAX_PLAN_BYTES`, nested deeper than
    :data:`MAX_PLAN_DEPTH` or holding more than :data:`MAX_PLAN_NODES` values with its aliases
    expanded, from the parser's events, before any object is built (the composer recurses, and
    an alias bomb is small until something walks it)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_PLAN_BYTES:
        raise PlanError(f"{source}: {size} bytes, over the {MAX_PLAN_BYTES} a plan may have")
    total, depth = 0, 0
    anchors: dict[str, int] = {}
    opened: list[tuple[str | None, int]] = []  # (anchor, total before) of each open collection
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_PLAN_DEPTH:
                line = event.start_mark.line + 1
                raise PlanError(
                    f"{source}: nested deeper than {MAX_PLAN_DEPTH} levels (line {line})"
                )
            opened.append((event.anchor, total))
            total += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            anchor, before = opened.pop()
            if anchor is not None:
                anchors[anchor] = total - before
        elif isinstance(event, yaml.ScalarEvent):
            total += 1
            if event.anchor is not None:
                anchors[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            total += anchors.get(event.anchor, 1)
        if total > MAX_PLAN_NODES:
            line = event.start_mark.line + 1
            raise PlanError(
                f"{source}: more than {MAX_PLAN_NODES} values with its aliases expanded (line "
                f"{line}): a plan this large is refused"
            )


def parse_plan(text: str, source: str = "plan") -> Plan:
    """The cells of a plan's YAML ``text`` (``source`` names it in errors); each cell's settings
    are checked by building its ``RunConfig``. Its size, nesting and aliases are bounded
    (:func:`_check_bounds`) before it is loaded."""
    import yaml

    try:
        _check_bounds(yaml, text, source)
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise PlanError(f"{source}: not valid YAML{at}") from None
    if not isinstance(doc, dict):
        raise PlanError(f"{source}: expected a mapping with models, benchmarks and protocols")
    unknown = sorted(set(doc) - {*SECTIONS, "options"})
    if unknown:
        raise PlanError(
            f"{source}: unknown key {unknown[0]!r} (expected models, benchmarks, protocols, "
            "options)"
        )
    shared = _settings(f"{source}: options", doc.get("options") or {})
    lists = {s: _entries(source, doc, s) for s in ("benchmarks", "protocols")}
    lists["models"] = _entries(source, doc, "models", [n for n, _ in lists["protocols"]])
    cells = []
    for bench, bench_settings in lists["benchmarks"]:
        for protocol, protocol_settings in lists["protocols"]:
            for model, model_settings in lists["models"]:
                model_settings = dict(model_settings)
                if protocol not in model_settings.pop(ONLY, [protocol]):
                    continue
                settings = {**shared, **bench_settings, **protocol_settings, **model_settings}
                cell = Cell(model, bench, protocol, absolute_paths(settings))
                try:
                    _check(cell)
                except (ValueError, TypeError) as err:
                    raise PlanError(f"{source}: cell {cell.id}: {err}") from None
                cells.append(cell)
    return Plan(text, tuple(cells))


def absolute_paths(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with each of :data:`PATH_SETTINGS` that names a file or folder here made
    absolute (relative to the working directory of the sweep), so a worker in another folder or
    on another node reads the same one; a Hub id or short name is kept as given."""
    out = dict(settings)
    for key in PATH_SETTINGS:
        value = out.get(key)
        if isinstance(value, str) and not os.path.isabs(value) and os.path.exists(value):
            out[key] = os.path.abspath(value)
    return out


def read_plan(path: Path | str) -> Plan:
    """The plan in the YAML file ``path``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"plan not found: {path}")
    with path.open("rb") as handle:
        data = handle.read(MAX_PLAN_BYTES + 1)
    if len(data) > MAX_PLAN_BYTES:
        raise PlanError(f"{path}: over the {MAX_PLAN_BYTES} bytes a plan may have")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PlanError(f"{path} is not UTF-8 text (byte {err.start + 1})") from None
    return parse_plan(text, str(path))
