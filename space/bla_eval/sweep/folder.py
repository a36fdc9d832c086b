"""The sweep folder: ``plan.yaml`` as given, ``sweep.json`` (each cell's settings), one run
folder per cell (``benchmark/protocol/model``), the leaderboards; its marker names
``bla-eval sweep`` and lists its cells, and its lock is held while a sweep runs."""

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
from .plan import Cell, Plan

SWEEP_COMMAND = "bla-eval sweep"
PLAN_FILE = "plan.yaml"
SWEEP_FILE = "sweep.json"
LOCK_FILE = ".bla-sweep.lock"
LEADERBOARDS = "leaderboards"
LOGS = ".submitit"
"""submitit's job files and logs (``--executor slurm``)."""
SWEEP_FILES = (PLAN_FILE, SWEEP_FILE)


class SweepFolder:
    """The output folder of ``bla-eval sweep`` (``path`` as the user gave it; errors name it)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def cell_path(self, cell: Cell) -> Path:
        return self.path / cell.id

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
        if marker is None or marker["command"] != SWEEP_COMMAND:
            what = f"the output of `{marker['command']}`" if marker else shown(entries)
            raise FileExistsError(
                f"output {target} holds {what}, not a {SWEEP_COMMAND} folder: choose an empty "
                "or new folder"
            )
        cells = [str(c) for c in marker.get("cells", [])]
        tops = {c.split("/")[0] for c in cells} | {*SWEEP_FILES, OWNER_FILE, LEADERBOARDS, LOGS}
        foreign = [e for e in entries if e not in tops or (path / e).is_symlink()]
        if foreign:
            raise FileExistsError(
                f"output {target} holds entries {SWEEP_COMMAND} did not write ({shown(foreign)}): "
                "move them away or choose another folder"
            )

    def check_plan(self, plan: Plan) -> None:
        """Refuse a plan that gives a cell already in the folder other score-deciding settings
        (one line naming the cell and the first setting)."""
        recorded = self.recorded_cells()
        for cell in plan.cells:
            before = recorded.get(cell.id)
            if before is None or not self.cell_path(cell).exists():
                continue
            now = cell.recorded()
            changed = sorted(k for k in {*before, *now} if before.get(k) != now.get(k))
            if changed:
                k = changed[0]
                raise ValueError(
                    f"the plan changes cell {cell.id} of {self.path} ({k}: {before.get(k)!r} -> "
                    f"{now.get(k)!r}): give it a new name, or remove {self.cell_path(cell)}"
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

    def finished(self, cell: Cell) -> bool:
        """The cell's run wrote its ``results.json`` (a run removes it when it starts)."""
        return (self.cell_path(cell) / RESULTS_FILE).is_file()
