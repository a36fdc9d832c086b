"""The sweep folder: ``plan.yaml`` as given, ``sweep.json`` (each cell's settings), one run
folder per cell (``benchmark/protocol/model``), the leaderboards (``leaderboards/benchmark/
protocol``); its marker names ``bla-eval sweep`` and lists its cells, and its lock is held while
a sweep runs.

Every folder name the sweep derives is one path component of a plan entry's name (which holds
no ``/``), so two cells or leaderboards never share a folder; no level of the folder may be a
symbolic link. A cell already in the folder is trusted only with the settings its plan gives:
both ``sweep.json`` and the cell's own ``run.json`` are compared with the plan."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ..locking import lock
from ..outputs import (
    OWNER_FILE,
    is_temporary,
    output_path,
    owner,
    read_json,
    shown,
    write_json_atomic,
    write_text_atomic,
)
from ..runs import RESULTS_FILE
from ..runs.files import RUN_FILE
from .plan import Cell, Plan, brief
from .runners import RUNNERS

SWEEP_COMMAND = "bla-eval sweep"
PLAN_FILE = "plan.yaml"
SWEEP_FILE = "sweep.json"
LOCK_FILE = ".bla-sweep.lock"
LEADERBOARDS = "leaderboards"
LOGS = ".submitit"
"""submitit's job files and logs (``--executor slurm``)."""
SWEEP_FILES = (PLAN_FILE, SWEEP_FILE)


def marked_cells(folder: Path) -> list[str] | None:
    """The cell ids the marker of the sweep folder ``folder`` lists (names only: ``owner``
    leaves out any other entry; none when ``cells`` is no list), or None when ``folder`` is no
    ``bla-eval sweep`` folder."""
    marker = owner(folder)
    if marker is None or marker["command"] != SWEEP_COMMAND:
        return None
    cells = marker.get("cells")
    return cells if isinstance(cells, list) else []


class SweepFolder:
    """The output folder of ``bla-eval sweep`` (``path`` as the user gave it; errors name it)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def cell_path(self, cell: Cell) -> Path:
        return self.path / cell.id

    def leaderboard_path(self, benchmark: str, protocol: str) -> Path:
        """``leaderboards/<benchmark>/<protocol>``: a folder per pair (names hold no ``/``)."""
        return self.path / LEADERBOARDS / benchmark / protocol

    def recorded_cells(self) -> dict[str, dict[str, Any]]:
        """Cell id -> the score-deciding settings ``sweep.json`` recorded (empty when new)."""
        path = self.path / SWEEP_FILE
        if not path.is_file():
            return {}
        cells = read_json(path).get("cells")
        if not isinstance(cells, dict):
            raise ValueError(f"{path} has no 'cells' mapping: not a bla-eval sweep record")
        return cells

    def check_output(self) -> None:
        """Allow a new, empty or sweep folder holding only its own files, its cells' run
        folders (each checked by its run) and leaderboards; anything else is a FileExistsError
        listing what is there."""
        target = self.path
        path = output_path(target)
        if not path.exists():
            return
        if not path.is_dir():
            raise FileExistsError(f"output {target} exists and is not a folder: choose another")
        entries = sorted(
            e for e in os.listdir(path) if e != LOCK_FILE and not is_temporary(path / e)
        )
        if not entries:
            return
        marker = owner(path)
        cells = marked_cells(path)
        if cells is None:
            what = f"the output of `{marker['command']}`" if marker else shown(entries)
            raise FileExistsError(
                f"output {target} holds {what}, not a {SWEEP_COMMAND} folder: choose an empty "
                "or new folder"
            )
        tops = {c.split("/")[0] for c in cells} | {
            *SWEEP_FILES,
            OWNER_FILE,
            LEADERBOARDS,
            LOGS,
            RUNNERS,
        }
        foreign = [e for e in entries if e not in tops or (path / e).is_symlink()]
        if foreign:
            raise FileExistsError(
                f"output {target} holds entries {SWEEP_COMMAND} did not write ({shown(foreign)}): "
                "move them away or choose another folder"
            )
        self._check_levels(path, cells)

    def _check_levels(self, path: Path, cells: list[str]) -> None:
        """Below the top: every folder on the way to a cell is one the marker's cells name, and
        no entry of a cell's or a leaderboard's levels is a symbolic link (a link would send a
        run or a comparison into a folder of the user's)."""
        known = {"/".join(c.split("/")[:n]) for c in cells for n in (1, 2, 3)}
        for top in sorted({c.split("/")[0] for c in cells} | {LEADERBOARDS}):
            for level in (1, 2):
                for entry in _entries_at(path / top, level):
                    name = f"{top}/{entry}"
                    if (path / name).is_symlink():
                        raise ValueError(
                            f"{self.path / name} is a symbolic link: {SWEEP_COMMAND} writes no "
                            "cell or leaderboard through one; remove it"
                        )
                    if top != LEADERBOARDS and name not in known:
                        raise FileExistsError(
                            f"output {self.path} holds {name}, which {SWEEP_COMMAND} did not "
                            "write: move it away or choose another folder"
                        )

    def check_plan(self, plan: Plan) -> None:
        """Refuse a plan that gives a cell already in the folder other score-deciding settings
        than ``sweep.json`` or the cell's own ``run.json`` records (one line naming the cell and
        the first setting); a finished cell without its ``run.json`` cannot be checked and is
        refused too."""
        recorded = self.recorded_cells()
        for cell in plan.cells:
            if not os.path.lexists(self.cell_path(cell)):
                continue
            before = recorded.get(cell.id)
            if before is not None:
                now = cell.recorded()
                changed = sorted(k for k in {*before, *now} if before.get(k) != now.get(k))
                if changed:
                    k = changed[0]
                    self._refuse_change(cell, k, before.get(k), now.get(k), SWEEP_FILE)
            self._check_run_settings(cell)

    def _check_run_settings(self, cell: Cell) -> None:
        """The cell's ``run.json`` against the settings its run would record for the plan's
        (``bla_eval.runs.settings``: the rule a resume applies; the model's kind, when the plan
        names none, and the model's and the data's content hashes are taken as recorded: the
        run's own resume checks them)."""
        from ..runs.settings import DATA_HASH, MODEL_HASH, changed_settings

        path = self.cell_path(cell) / RUN_FILE
        if not path.is_file():
            if self.finished(cell):
                raise ValueError(
                    f"cell {cell.id} of {self.path} has its {RESULTS_FILE} but no {RUN_FILE}, so "
                    f"its settings cannot be checked against the plan: remove "
                    f"{self.cell_path(cell)}"
                )
            return
        before = read_json(path)
        before.pop(MODEL_HASH, None)
        before.pop(DATA_HASH, None)
        try:
            now = run_settings(cell, self.path, before.get("kind"))
        except (ValueError, TypeError) as err:
            raise ValueError(f"cell {cell.id} of {self.path}: {err}") from None
        changed = changed_settings(before, now)
        if changed:
            k, (was, will) = next(iter(changed.items()))
            self._refuse_change(cell, k, was, will, f"{cell.id}/{RUN_FILE}")

    def _refuse_change(self, cell: Cell, key: str, before: Any, now: Any, where: str) -> None:
        raise ValueError(
            f"the plan changes cell {cell.id} of {self.path} ({key}: {brief(before)} -> "
            f"{brief(now)}) against its {where}: give it a new name, or remove "
            f"{self.cell_path(cell)}"
        )

    def lock(self) -> AbstractContextManager[None]:
        """Hold the sweep's lock (``.bla-sweep.lock``); a second sweep stops at once."""
        return lock(self.path / LOCK_FILE, self.path, SWEEP_COMMAND)

    def record(self, plan: Plan) -> None:
        """Write the marker, ``plan.yaml`` and ``sweep.json`` (cells of earlier plans kept)."""
        self.path.mkdir(parents=True, exist_ok=True)
        cells = {**self.recorded_cells(), **{c.id: c.recorded() for c in plan.cells}}
        marker = {"command": SWEEP_COMMAND, "files": list(SWEEP_FILES), "cells": sorted(cells)}
        write_json_atomic(self.path / OWNER_FILE, marker)
        write_text_atomic(self.path / PLAN_FILE, plan.text)
        write_json_atomic(self.path / SWEEP_FILE, {"command": SWEEP_COMMAND, "cells": cells})

    def held(self, cell: Cell) -> str | None:
        """Why the cell may not start now: a live process holds its run folder's lock (a worker
        of an earlier sweep that still runs it, or a ``bla-eval`` of the user's); None when free.
        The lock is the run's own (``RunFolder.lock``), taken and given back at once."""
        from ..cli_common import one_line
        from ..runs import RunFolder

        path = self.cell_path(cell)
        if not path.is_dir() or path.is_symlink():
            return None
        try:
            with RunFolder(path).lock():
                return None
        except ValueError as err:
            return f"not started: {one_line(err)}"

    def finished(self, cell: Cell) -> bool:
        """The cell's run wrote its ``results.json`` (a run removes it when it starts); whether
        its settings are the plan's is :meth:`check_plan`'s."""
        return (self.cell_path(cell) / RESULTS_FILE).is_file()


def run_settings(cell: Cell, root: Path, kind: str | None) -> dict[str, Any]:
    """What the cell's run records in ``run.json`` (``bla_eval.runs.settings.resume_settings``)
    for the plan's settings: data and tasks resolved as the run resolves them, the model's
    ``kind`` as the plan names it, else ``kind`` (as recorded: detecting it loads the model)."""
    from ..benchmarks import get_benchmark
    from ..protocols import get_protocol
    from ..runs.settings import resume_settings

    config = cell.config(root, True)
    bench = get_benchmark(config.benchmark)
    tasks = [bench.resolve_task(t) for t in (config.tasks or bench.task_names())]
    tasks = get_protocol(config.protocol).run_tasks(bench.name, tasks, bool(config.tasks))
    kind = config.kind or kind
    if not isinstance(kind, str):
        raise ValueError(f"its {RUN_FILE} records no model kind")
    return resume_settings(config, kind, bench.data_or_default(config.data), tasks)


def _entries_at(folder: Path, level: int) -> list[str]:
    """The entries ``level`` folders below ``folder`` (``a`` at 1, ``a/b`` at 2), relative;
    symbolic links are listed, not followed."""
    found = [""]
    for _ in range(level):
        below = []
        for rel in found:
            current = folder / rel if rel else folder
            if current.is_symlink() or not current.is_dir():
                continue
            below += [f"{rel}/{e}" if rel else e for e in sorted(os.listdir(current))]
        found = below
    return found
