"""The folder of finished runs (one sub-folder per run with results.json + scores.jsonl).

Optionally mirrored to a Hub dataset repo with ``huggingface_hub`` (``BLA_RESULTS_REPO``).
"""

from __future__ import annotations

import copy
import logging
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bla_eval.hub_auth import require_token
from bla_eval.outputs import (
    files_under,
    naming,
    remove_stale,
    temporary_folder,
    temporary_name,
)
from bla_eval.runs import RESULTS_FILE, SCORES_FILE, RunFolder
from bla_eval.sweep.folder import marked_cells

log = logging.getLogger(__name__)

RESULTS_REPO_VARIABLE = "BLA_RESULTS_REPO"


@dataclass(frozen=True)
class Run:
    """One finished run: its folder, its results document and its key in the results folder."""

    path: Path
    results: dict
    cell: str = ""
    """The cell id (``benchmark/protocol/model``) of a run that is a sweep's cell, else empty."""
    key: str = ""
    """The run's folder relative to the results folder (``bla/zero-shot/tiny-clip`` for a
    sweep's cell, ``sweep/bla/zero-shot/tiny-clip`` for a cell of a sweep folder inside it): the
    one name every tab picks a run by (:func:`find_run`). Empty: the folder's name."""

    @property
    def name(self) -> str:
        """The run's key (:attr:`key`, else the folder's name)."""
        return self.key or self.path.name

    @property
    def benchmark(self) -> str:
        """The benchmark the run scored (BLA for runs older than the field)."""
        return str(self.results.get("benchmark") or "bla")

    @property
    def label(self) -> str:
        """The run in menus: ``display name · benchmark · protocol (control, prompts) · n=...,
        date`` (the display name is ``--name``, else the model id: ``views.display_name``)."""
        from .views import condition_label, display_name

        res = self.results
        n = sum(int(t.get("n", 0)) for t in res.get("tasks", {}).values())
        created = str(res.get("created", ""))[:16].replace("T", " ")
        return f"{display_name(res)} · {condition_label(res)} · n={n}, {created}"


def menu(runs: list[Run]) -> list[tuple[str, str]]:
    """(label, key) of ``runs`` for a dropdown; labels two runs share get the run's key."""
    labels = [run.label for run in runs]
    return [
        (f"{label} [{run.name}]" if labels.count(label) > 1 else label, run.name)
        for label, run in zip(labels, runs, strict=True)
    ]


def run_folder_name(model: str, now: datetime | None = None) -> str:
    """A unique, filesystem-safe folder name for a run of ``model``."""
    now = now or datetime.now(timezone.utc)
    name = Path(model).name if Path(model).is_absolute() else model
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
    return f"{slug.strip('_')[:80]}-{now.strftime('%Y%m%dT%H%M%S%fZ')}"


def new_run_path(results_dir: Path, model: str) -> Path:
    """Where a new run of ``model`` goes (written through ``bla_eval.outputs.staged``)."""
    return Path(results_dir) / run_folder_name(model)


_CHECKED: dict[Path, tuple[tuple, dict]] = {}
"""Runs already checked: folder -> (sizes and times of its files, results document)."""


def list_runs(folders: Path | Sequence[Path], benchmark: str | None = None) -> list[Run]:
    """Every finished run under ``folders`` (one results folder or several, e.g.
    ``SpaceConfig.folders``; of ``benchmark`` when given), newest first, each once (its key
    relative to the first folder that holds it). Each run is checked once (and again when its
    files change) by ``bla_eval.runs.RunFolder.open``: a run whose results.json disagrees with
    its scores.jsonl, hidden folders (runs being written) and unreadable runs are skipped with
    a warning."""
    runs, seen = [], set()
    for results_dir in _roots(folders):
        for folder, cell in _run_folders(results_dir).items():
            if folder.resolve() in seen:
                continue
            seen.add(folder.resolve())
            try:
                key = folder.relative_to(results_dir).as_posix()
                runs.append(Run(folder, _checked_results(folder), cell, key))
            except (ValueError, OSError) as err:
                log.warning("skipping run %s: %s", folder, err)
    if benchmark is not None:
        runs = [run for run in runs if run.benchmark == benchmark]
    return sorted(runs, key=lambda r: str(r.results.get("created", "")), reverse=True)


def _roots(folders: Path | Sequence[Path]) -> list[Path]:
    """``folders`` as a list of paths (one path given: that one)."""
    if isinstance(folders, (str, os.PathLike)):
        return [Path(folders)]
    return [Path(f) for f in folders]


def _run_folders(results_dir: Path) -> dict[Path, str]:
    """The run folders of ``results_dir``: its sub-folders with a results.json, and the cells
    of a sweep folder (``bla-eval sweep --output``) that ``results_dir`` is or holds. A folder
    or cell reached through a symbolic link, or lying outside ``results_dir``, is none of them
    (:func:`inside`), and so is a folder holding a link."""
    if not results_dir.is_dir():
        return {}
    subfolders = [f for f in results_dir.iterdir() if inside(results_dir, f.name) is not None]
    folders = {f: "" for f in subfolders if inside(f, RESULTS_FILE) is not None}
    for sweep in (results_dir, *subfolders):
        folders.update(_sweep_cells(sweep))
    return {f: cell for f, cell in folders.items() if not f.name.startswith(".") and not _links(f)}


def _links(folder: Path) -> bool:
    """True when ``folder`` holds a symbolic link (a run's files are never links)."""
    return any(entry.is_symlink() for entry in folder.iterdir())


def inside(folder: Path, name: object) -> Path | None:
    """``folder / name`` when ``name`` (from a stored or downloaded marker, or a folder's
    listing) is a relative path without ``..`` whose every part below ``folder`` exists and is
    no symbolic link (so the path stays inside ``folder``); else None."""
    if not isinstance(name, str) or not name or "\x00" in name:
        return None
    rel = Path(name)
    if rel.is_absolute() or rel.anchor or any(part in ("", ".", "..") for part in rel.parts):
        return None
    path = Path(folder)
    for part in rel.parts:
        path = path / part
        if path.is_symlink() or not path.exists():
            return None
    return path


def _sweep_cells(folder: Path) -> dict[Path, str]:
    """The finished cells of the sweep folder ``folder`` (none when it is no sweep's): the
    relative cell paths its marker lists, each inside it and reached through no link."""
    found = {c: inside(folder, c) for c in marked_cells(folder) or []}
    return {
        path: cell
        for cell, path in found.items()
        if path is not None and inside(path, RESULTS_FILE) is not None
    }


def _checked_results(folder: Path) -> dict:
    """A copy of the results of a run folder that passed ``RunFolder.open`` (checked again when its
    results.json or scores.jsonl changed)."""
    stamp = tuple(
        (f.stat().st_size, f.stat().st_mtime_ns) if f.exists() else None
        for f in (folder / RESULTS_FILE, folder / SCORES_FILE)
    )
    cached = _CHECKED.get(folder)
    if cached is None or cached[0] != stamp:
        cached = (stamp, RunFolder.open(folder).results)
        _CHECKED[folder] = cached
    return copy.deepcopy(cached[1])


def find_run(
    folders: Path | Sequence[Path], key: str | None, benchmark: str | None = None
) -> Run | None:
    """The finished run of ``folders`` whose key (:attr:`Run.key`, its folder relative to the
    results folder holding it) is ``key`` (and that scored ``benchmark``, when given), or
    None."""
    if not isinstance(key, str) or not key:
        return None
    return next((r for r in list_runs(folders, benchmark) if r.name == key), None)


def download(repo_id: str, folder: Path) -> None:
    """The files of the Hub dataset repo ``repo_id`` as they are, into ``folder`` (a folder of
    the caller's own: a staged or temporary one)."""
    from huggingface_hub import snapshot_download

    snapshot_download(repo_id, repo_type="dataset", local_dir=folder)


def pull_from_hub(repo_id: str, results_dir: Path) -> list[Path]:
    """Add the runs stored in the Hub dataset repo ``repo_id`` to ``results_dir``: the repo is
    downloaded into a marked temporary folder inside it, and each run folder (one holding a
    results.json) that ``results_dir`` does not have is renamed into place; nothing already in
    ``results_dir`` is replaced (a run of that name is the same run, synced before). Returns
    the run folders added."""
    results_dir = Path(results_dir)
    with naming(results_dir):
        results_dir.mkdir(parents=True, exist_ok=True)
    remove_stale(results_dir)
    holder = temporary_folder(results_dir / temporary_name("pull", "tmp"))
    added = []
    try:
        download(repo_id, holder / "repo")
        for run in sorted((holder / "repo").iterdir()):
            if run.name.startswith(".") or inside(run, RESULTS_FILE) is None or run.is_symlink():
                continue
            target = results_dir / run.name
            if not os.path.lexists(target):
                run.rename(target)
                added.append(target)
    finally:
        shutil.rmtree(holder, ignore_errors=True)
    return added


def push_to_hub(repo_id: str, run_dir: Path) -> str:
    """Add one finished run folder to the Hub dataset repo ``repo_id`` (created if missing).

    One commit adds the run's files under its folder name and touches nothing else, so runs
    that other Space processes push at the same time are all kept. Returns the commit id.
    """
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(token=require_token(f"pushing runs to {RESULTS_REPO_VARIABLE}={repo_id}"))
    api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
    run_dir = Path(run_dir)
    operations = [
        CommitOperationAdd(
            path_in_repo=f"{run_dir.name}/{name}", path_or_fileobj=str(run_dir / name)
        )
        for name in files_under(run_dir)
    ]
    commit = api.create_commit(
        repo_id,
        operations,
        repo_type="dataset",
        commit_message=f"Add BLA run {run_dir.name}",
    )
    return commit.oid
