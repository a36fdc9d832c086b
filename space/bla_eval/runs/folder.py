"""A ``bla-eval`` run folder: its files, lock, marker, settings, scores and results.

A run opens its folder (:meth:`RunFolder.check_output`, :meth:`RunFolder.created`,
:meth:`RunFolder.lock`), checks a resume against ``run.json`` and the records of
``scores.jsonl`` (:meth:`RunFolder.check_resume`, :meth:`RunFolder.check_scored`), records its
settings (:meth:`RunFolder.start`), appends its scores (:meth:`RunFolder.score_store`; the parts of
a multi-process run are merged here) and writes ``results.json`` (:meth:`RunFolder.write_results`).
Every reader opens a finished run with :meth:`RunFolder.open`, which checks that ``results.json``
follows from ``scores.jsonl``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ..items import Item
from ..locking import lock
from ..outputs import (
    OWNER_FILE,
    is_temporary,
    link_error,
    naming,
    output_path,
    owner,
    read_json,
    read_numbered,
    read_records,
    remove_stale,
    shown,
    write_json_atomic,
    write_lines_atomic,
)
from .check import FinishedRun, Key, check_agreement, check_records, scores_path
from .files import (
    LOCK_FILE,
    PART_PATTERN,
    PART_RE,
    RESULTS_FILE,
    RUN_COMMAND,
    RUN_FILE,
    RUN_FILES,
    SCORES_FILE,
)
from .kept import Asked, check_kept
from .scores import ScoreStore
from .settings import changed_settings


class RunFolder:
    """The folder of one ``bla-eval`` run (``path`` as the user gave it; errors name it)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    @property
    def scores_path(self) -> Path:
        return self.path / SCORES_FILE

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS_FILE

    @property
    def settings_path(self) -> Path:
        """``run.json``: the settings a resume must match."""
        return self.path / RUN_FILE

    # ------------------------------------------------------------------------- readers
    @classmethod
    def open(cls, path: Path | str) -> FinishedRun:
        """A finished run read back and checked: ``results.json`` recomputed from
        ``scores.jsonl`` (any error names the file and the line)."""
        folder = cls(path).path
        if not folder.is_dir():
            if folder.exists():
                raise ValueError(f"{folder} is a file, not a bla-eval run folder")
            raise FileNotFoundError(f"run folder not found: {folder}")
        results_path = folder / RESULTS_FILE
        if not results_path.is_file():
            raise FileNotFoundError(f"{folder} has no {RESULTS_FILE}: not a finished bla-eval run")
        results = read_json(results_path)
        tasks = results.get("tasks")
        if not isinstance(tasks, dict) or not all(isinstance(t, dict) for t in tasks.values()):
            raise ValueError(
                f"{results_path} has no per-task 'tasks': not a bla-eval results document"
            )
        path = scores_path(folder, results)
        if not path.is_file():
            raise FileNotFoundError(f"{folder} has no {path.name}: the run's scores are missing")
        records = check_records(path, read_numbered(path), tasks)
        check_agreement(results_path, path, results, records)
        return FinishedRun(folder, results, records)

    def read_results(self) -> dict[str, Any]:
        """``results.json`` as it is (not checked against the scores)."""
        return read_json(self.results_path)

    def read_scores(self, results: dict[str, Any]) -> list[dict[str, Any]]:
        """The records of the scores file ``results`` names, as they are (not checked)."""
        return read_records(scores_path(self.path, results))

    # ------------------------------------------------------------------------- ownership
    def is_run_folder(self) -> bool:
        """Written by ``bla-eval``: its marker names it (a ``run.json`` alone proves nothing:
        a folder without the marker is not taken for a run)."""
        marker = owner(self.path)
        return marker is not None and marker["command"] == RUN_COMMAND

    def check_output(self) -> Path:
        """``bla-eval --output``: allowed when absent, empty (but for temporaries of
        ``bla_eval.outputs``) or a run folder (:meth:`is_run_folder`) holding no symbolic link;
        anything else is a FileExistsError that lists what is there (a link: a ValueError
        naming it). Returns the path made absolute (``output_path``'s refusals first)."""
        target = self.path
        path = output_path(target)
        if not path.exists():
            return path
        if not path.is_dir():
            raise FileExistsError(
                f"output {target} exists and is not a folder: choose another path"
            )
        entries = sorted(
            e for e in os.listdir(path) if e != LOCK_FILE and not is_temporary(path / e)
        )
        links = [e for e in entries if (path / e).is_symlink()]
        if links:  # a run writes and removes only its own files, never through a link
            raise link_error(target / links[0])
        if entries and not RunFolder(path).is_run_folder():
            marker = owner(path)
            if marker is not None:
                raise FileExistsError(
                    f"output {target} holds the output of `{marker['command']}`, not a "
                    f"{RUN_COMMAND} run: choose another folder"
                )
            raise FileExistsError(
                f"output {target} is not empty and is not a {RUN_COMMAND} run folder (it holds "
                f"{shown(entries)}): choose an empty or new folder"
            )
        return path

    def mark(self, world: int = 1) -> None:
        """Write the marker of a run folder (before the first score is written): its files and
        the parts of this run's ``world`` processes (only listed parts are ever folded in)."""
        parts = (
            [PART_PATTERN.format(rank=r, world=world) for r in range(world)] if world > 1 else []
        )
        write_json_atomic(
            self.path / OWNER_FILE, {"command": RUN_COMMAND, "files": [*RUN_FILES, *parts]}
        )

    def lock(self) -> AbstractContextManager[None]:
        """Hold the folder's lock (``.bla-eval.lock``); a second holder stops at once."""
        return lock(self.path / LOCK_FILE, self.path, RUN_COMMAND)

    @contextmanager
    def created(self) -> Iterator[None]:
        """Create the folder if needed; when this created it and the block fails before any
        score was written, remove what was written there (run.json, empty score files) and the
        folder."""
        created = not self.path.exists()
        with naming(self.path):
            self.path.mkdir(parents=True, exist_ok=True)
        try:
            yield
        except BaseException:
            written = [self.scores_path, *self.part_files()]
            if created and not any(p.exists() and p.stat().st_size > 0 for p in written):
                shutil.rmtree(self.path, ignore_errors=True)
            raise

    def remove_stale(self) -> None:
        """Remove the temporary files a killed run left."""
        remove_stale(self.path)

    # ------------------------------------------------------------------------- settings, resume
    def check_resume(self, settings: dict[str, Any], resume: bool, overwrite: bool = False) -> None:
        """Refuse a resume whose settings differ from the interrupted run's ``run.json``, or
        cannot be compared, and a start without ``resume`` (or ``overwrite``) in the folder of a
        stopped or finished run (scored datapoints, with or without ``results.json``): scored
        work is never discarded without ``overwrite`` (nothing is changed; :meth:`start` writes
        ``run.json``)."""
        scored = 0 if resume or overwrite else self.scored_lines()
        if scored:
            state = "finished" if self.results_path.exists() else "stopped"
            raise FileExistsError(
                f"{self.path} holds {scored} scored datapoints of a {state} run: continue it "
                "with --resume, or give a new --output (--overwrite discards them); nothing was "
                "changed"
            )
        if resume and (self.scores_path.exists() or self.part_files()):
            if not self.settings_path.exists():
                raise ValueError(
                    f"cannot resume {self.path}: it has {SCORES_FILE} but no {RUN_FILE}, so its "
                    "settings cannot be checked; start fresh with --overwrite or a new --output"
                )
            changed = changed_settings(read_json(self.settings_path), settings)
            if changed:
                detail = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in changed.items())
                raise ValueError(f"cannot resume {self.path}: the run settings changed ({detail})")

    def scored_lines(self) -> int:
        """How many records ``scores.jsonl`` and the parts hold (their non-empty lines)."""
        count = 0
        for path in [self.scores_path, *self.part_files()]:
            if path.is_file() and not path.is_symlink():
                with naming(path), path.open("rb") as handle:
                    count += sum(1 for line in handle if line.strip())
        return count

    def records(
        self, tasks: Collection[str], selected: Collection[Key]
    ) -> dict[str, list[dict[str, Any]]]:
        """The records of ``scores.jsonl`` by task, checked to hold only ``selected``
        datapoints of ``tasks``, each once (an error names the file and line)."""
        return check_records(self.scores_path, read_numbered(self.scores_path), tasks, selected)

    def check_scored(
        self, tasks: Collection[str], items: Sequence[Item], asked: Asked | None = None
    ) -> None:
        """Before anything is loaded or changed: every record a resumed run keeps (in
        ``scores.jsonl`` and in this run's parts) is whole, of a datapoint the run selects,
        there once per file, agrees with the dataset's item and holds the conditions the run
        ``asked`` (``bla_eval.runs.kept``)."""
        by_key = {(i.task, i.id): i for i in items}
        try:
            for path in [self.scores_path, *self.part_files()]:
                numbered = read_numbered(path)
                for line, record in numbered:
                    check_kept(path, line, record, by_key, asked)
                check_records(path, numbered, tasks, by_key.keys())
        except ValueError as err:
            raise ValueError(
                f"cannot resume {self.path}: {err}; start fresh with --overwrite or a new --output"
            ) from None

    def check_parts(self) -> None:
        """Refuse a part file the run's marker does not list (left by another run or copied
        in): it is never folded in, removed or written."""
        foreign = self.foreign_parts()
        if foreign:
            raise ValueError(
                f"{foreign[0]} is not a part of the run in {self.path} (its marker "
                f"{OWNER_FILE} does not list it): move it out of the run folder"
            )

    def start(self, settings: dict[str, Any], world: int = 1) -> None:
        """Once every check passed: mark the folder (with the parts of ``world`` processes),
        write ``run.json``, remove a ``results.json`` (written again from the scores)."""
        self.mark(world)
        write_json_atomic(self.settings_path, settings)
        self.results_path.unlink(missing_ok=True)

    # ------------------------------------------------------------------------- scores
    def score_store(self, resume: bool, part: tuple[int, int] | None = None) -> ScoreStore:
        """Where a process appends its records: ``scores.jsonl``, or the part ``(rank, world)``
        of a multi-process run (kept on a resume, else started empty)."""
        path = self.part_path(*part) if part is not None else self.scores_path
        return ScoreStore(path, resume)

    def part_path(self, rank: int, world: int) -> Path:
        """The part of process ``rank`` of ``world`` processes."""
        return self.path / PART_PATTERN.format(rank=rank, world=world)

    def part_files(self) -> list[Path]:
        """The parts of this run's processes that are there (those its marker lists), sorted."""
        marker = owner(self.path)
        listed = set()
        if marker is not None and marker["command"] == RUN_COMMAND:
            listed = {name for name in marker["files"] if isinstance(name, str)}
        return [p for p in self._parts() if p.name in listed]

    def foreign_parts(self) -> list[Path]:
        """Files named like parts that the run's marker does not list."""
        owned = set(self.part_files())
        return [p for p in self._parts() if p not in owned]

    def _parts(self) -> list[Path]:
        found = [p for p in self.path.glob("scores.part-*.jsonl") if PART_RE.match(p.name)]
        return sorted(
            found, key=lambda p: tuple(int(x) for x in PART_RE.match(p.name).groups()[::-1])
        )

    def remove_parts(self) -> None:
        """A fresh multi-process run: remove old parts and scores."""
        for path in [*self.part_files(), self.scores_path]:
            path.unlink(missing_ok=True)

    def fold_parts(self) -> int:
        """Resume: append the records of leftover parts to ``scores.jsonl`` (first record of an
        item wins), then remove the parts. Returns the number of records added."""
        parts = self.part_files()
        if not parts:
            return 0
        path = self.scores_path
        records = read_records(path, repair=True) if path.exists() else []
        known = {(r["task"], r["id"]) for r in records}
        added = 0
        for part in parts:
            for record in read_records(part, repair=True):
                key = (record["task"], record["id"])
                if key not in known:
                    known.add(key)
                    records.append(record)
                    added += 1
        write_lines_atomic(path, records)
        for part in parts:
            part.unlink()
        return added

    def merged_records(self) -> dict[Key, dict[str, Any]]:
        """Records already in ``scores.jsonl`` (a resumed multi-process run skips these)."""
        if not self.scores_path.exists():
            return {}
        return {(r["task"], r["id"]): r for r in read_records(self.scores_path, repair=True)}

    def merge_parts(self, order: Sequence[Key]) -> int:
        """Write ``scores.jsonl`` = the records of ``scores.jsonl`` and every part: those of
        ``order`` in that order, then the others (kept, as a resume keeps them); remove the
        parts. Returns the number of records written."""
        by_key = self.merged_records()
        parts = self.part_files()
        for part in parts:
            for record in read_records(part, repair=True):
                by_key.setdefault((record["task"], record["id"]), record)
        ordered = [by_key[key] for key in order if key in by_key]
        wanted = set(order)
        ordered += [r for key, r in by_key.items() if key not in wanted]
        write_lines_atomic(self.scores_path, ordered)
        for part in parts:
            part.unlink()
        return len(ordered)

    # ------------------------------------------------------------------------- results
    def write_results(self, results: dict[str, Any]) -> None:
        """Write ``results.json`` (computed from the final ``scores.jsonl`` of this run)."""
        write_json_atomic(self.results_path, results)
