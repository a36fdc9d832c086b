"""How every command reads and writes its outputs (a run folder's own files: ``bla_eval.runs``).

- Readers: :func:`read_json` and :func:`read_records`; an error names the file (and the line).
- Atomic files: :func:`write_text_atomic`, :func:`write_json_atomic`, :func:`write_lines_atomic`
  write a hidden temporary file beside the target and rename it into place.
- Staged folders: :func:`staged` yields a hidden folder beside the target and renames it into
  place when the block succeeds (removed when it fails); :func:`remove_stale` removes what a
  killed process left behind.
- Ownership: a command replaces an output only when the output's marker (:data:`OWNER_FILE`)
  names that command and lists every file in it (:func:`check_replaceable`); a single file
  written into a folder of the user's carries a first-line mark (:func:`write_marked_text`). The
  working directory, its parents and symbolic links are refused (:func:`output_path`).
- :func:`naming`: an OS error that names no file (a full disk) is raised naming the path.

Standard library only, besides the default protocol's name: the builders and the Space import
this module.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FINETUNE_FILE = "finetune.json"
OWNER_FILE = ".bla-output.json"
"""The marker of an output: ``{"command": ..., "files": [...]}``, written last."""
RECORD_KEYS = ("task", "id", "scores")
"""Keys every score record has."""

TEMP_RE = re.compile(r"^\.(?P<name>.+)\.bla-(?P<what>staging|replaced|tmp)-(?P<pid>\d+)(\.\d+)?$")
"""Names of the temporary files and folders of this module (the pid of the writer)."""
SHOWN = 5
"""Names an error lists before "and N more"."""


# ----------------------------------------------------------------------------- readers
def read_json(path: Path) -> dict[str, Any]:
    """A JSON object of an output (any error is a ValueError naming the file)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise ValueError(f"cannot read {path}: {err.strerror or err}") from err
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} is not UTF-8 text (byte {err.start + 1})") from None
    try:
        document = json.loads(text)
    except ValueError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from None
    if not isinstance(document, dict):
        raise ValueError(f"{path} is not a JSON object")
    return document


def read_records(path: Path, repair: bool = False) -> list[dict[str, Any]]:
    """The records of a scores file (none when it does not exist); blank lines are skipped.

    A last line without its newline is a record when it parses, else half a line cut off by a
    crash, and dropped; with ``repair`` the file is then fixed (the newline added, or the half
    line removed) so that records can be appended. Any other bad line is a ValueError naming the
    file and the line.
    """
    return [record for _, record in read_numbered(path, repair)]


def read_numbered(path: Path, repair: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """:func:`read_records` with the line number of each record (for errors naming the line)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as err:
        raise ValueError(f"cannot read {path}: {err.strerror or err}") from err
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    records = [(n, _record(path, n, line)) for n, line in enumerate(lines, 1) if line.strip()]
    if tail.strip():
        try:
            records.append((len(lines) + 1, _record(path, len(lines) + 1, tail)))
        except ValueError:
            if repair:
                with naming(path):
                    os.truncate(path, len(data) - len(tail))
        else:
            if repair:
                with naming(path), path.open("ab") as handle:
                    handle.write(b"\n")
    return records


def _record(path: Path, number: int, line: bytes) -> dict[str, Any]:
    """One line of a scores file as a record (an error names the file and the line)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{path}: line {number} is not UTF-8 text (byte {err.start + 1} of the line)"
        ) from None
    try:
        record = json.loads(text)
    except ValueError as err:
        raise ValueError(f"{path}: line {number} is not a score record: {err}") from None
    if not isinstance(record, dict) or any(key not in record for key in RECORD_KEYS):
        raise ValueError(
            f"{path}: line {number} is not a score record (it needs {', '.join(RECORD_KEYS)})"
        )
    return record


# ----------------------------------------------------------------------------- OS errors
@contextmanager
def naming(path: Path | str) -> Iterator[None]:
    """An OSError that names no file (a full disk or an I/O error during a write, a closed
    pipe) is raised again naming ``path``, so the user's one line says where it happened."""
    try:
        yield
    except OSError as err:
        if err.filename is not None or err.errno is None:
            raise
        raise OSError(err.errno, err.strerror or str(err), str(path)) from err


# ----------------------------------------------------------------------------- atomic files
def temporary_name(name: str, what: str) -> str:
    """The hidden name of this process's temporary ``what`` (staging, replaced, tmp) of ``name``."""
    return f".{name}.bla-{what}-{os.getpid()}"


@contextmanager
def atomic_file(path: Path, binary: bool = False) -> Iterator[Any]:
    """A handle (UTF-8 text, or bytes with ``binary``) on a hidden temporary file whose content
    replaces ``path`` in one rename when the block succeeds (a crash never leaves half a file;
    on an error ``path`` is untouched). ``handle.name`` is the temporary file."""
    path = Path(path)  # one temporary per process and thread: threads may write the same path
    tmp = path.with_name(f"{temporary_name(path.name, 'tmp')}.{threading.get_ident()}")
    text = {} if binary else {"encoding": "utf-8", "newline": "\n"}
    try:
        with naming(path), tmp.open("wb" if binary else "w", **text) as handle:
            yield handle
        with naming(path):
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    with atomic_file(path) as handle:
        handle.write(text)


def write_json_atomic(path: Path, document: dict[str, Any]) -> None:
    """Write a JSON document (indented, UTF-8, final newline) through a temporary file."""
    write_text_atomic(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def write_lines_atomic(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Write JSON lines (one record each) through a temporary file."""
    with atomic_file(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


# ----------------------------------------------------------------------------- ownership
def output_path(target: Path | str) -> Path:
    """``target`` made absolute (symbolic links of its parents resolved), after refusing a
    symbolic link, the root, the working directory and any folder that holds it."""
    path = Path(target)
    if path.is_symlink():
        raise ValueError(f"output {target} is a symbolic link: give the folder it points to")
    resolved = path.resolve()
    cwd = Path.cwd().resolve()
    if not resolved.name or resolved == cwd or resolved in cwd.parents:
        raise ValueError(
            f"output {target} is the working directory or holds it: choose a new folder"
        )
    return resolved


def owner(folder: Path) -> dict[str, Any] | None:
    """The marker of ``folder`` (``command`` and ``files``), or None when it has no valid one."""
    try:
        marker = json.loads((Path(folder) / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or not isinstance(marker.get("command"), str):
        return None
    if not isinstance(marker.get("files"), list):
        return None
    return marker


def write_owner(folder: Path, command: str) -> None:
    """Mark ``folder`` as written by ``command``, listing every file now in it."""
    files = [f for f in files_under(folder) if f != OWNER_FILE]
    text = json.dumps({"command": command, "files": files}, indent=2) + "\n"
    (Path(folder) / OWNER_FILE).write_text(text, encoding="utf-8")


def files_under(folder: Path) -> list[str]:
    """Every file and link under ``folder`` (relative, ``/``-separated, sorted); links are not
    followed."""
    found = []
    for root, dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        links = [d for d in dirs if (Path(root) / d).is_symlink()]
        found += [(rel / name).as_posix() for name in [*files, *links]]
    return sorted(found)


def shown(names: list[str]) -> str:
    more = len(names) - SHOWN
    return ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def check_replaceable(target: Path | str, command: str | None = None) -> None:
    """Allow writing ``target`` when it is absent, an empty folder, or (with ``command``) a
    folder whose marker names ``command`` and lists every file in it; anything else is a
    FileExistsError that lists what is there (the refusals of :func:`output_path` come first)."""
    path = output_path(target)
    if not path.exists():
        return
    if not path.is_dir():
        raise FileExistsError(f"output {target} exists and is not a folder: choose another path")
    entries = sorted(os.listdir(path))
    if not entries:
        return
    marker = owner(path)
    if command is None or marker is None:
        by = f" and was not written by `{command}`" if command else ""
        raise FileExistsError(
            f"output {target} is not empty{by} (it holds {shown(entries)}): choose an empty "
            "or new folder"
        )
    if marker["command"] != command:
        raise FileExistsError(
            f"output {target} holds the output of `{marker['command']}`; `{command}` replaces "
            "only its own: choose another folder"
        )
    unknown = sorted(set(files_under(path)) - set(marker["files"]) - {OWNER_FILE})
    if unknown:
        raise FileExistsError(
            f"output {target} holds files `{command}` did not write ({shown(unknown)}): "
            "move them away or choose another folder"
        )


# ----------------------------------------------------------------------------- marked files
def file_mark(command: str) -> str:
    """The first line of a text file that ``command`` writes into a folder it does not own
    (a comment in YAML and Markdown front matter): the proof that it may replace the file."""
    return f"# Written by {command}; it replaces this file only while this line is here.\n"


def check_file_replaceable(target: Path | str, command: str) -> Path:
    """Allow writing the file ``target`` when it is absent or starts with ``command``'s
    :func:`file_mark`; a symbolic link, a folder or any other file is refused (FileExistsError
    naming it)."""
    path = Path(target)
    if path.is_symlink():
        raise FileExistsError(f"{target} is a symbolic link: {command} writes no file through one")
    if not path.exists():
        return path
    if not path.is_file():
        raise FileExistsError(f"{target} exists and is not a file: move it away")
    with naming(path), path.open("rb") as handle:
        first = handle.readline(4096)
    if first != file_mark(command).encode():
        raise FileExistsError(
            f"{target} exists and was not written by `{command}`: move it away or choose "
            "another --output"
        )
    return path


def write_marked_text(target: Path | str, command: str, text: str) -> str:
    """Write ``text`` under ``command``'s mark to ``target`` (checked with
    :func:`check_file_replaceable`, written atomically); returns the text written."""
    path = check_file_replaceable(target, command)
    marked = file_mark(command) + text
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, marked)
    return marked


# ----------------------------------------------------------------------------- staging
def pid_alive(pid: int) -> bool:
    """True when a process ``pid`` runs on this machine (or cannot be checked)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_stale(folder: Path) -> list[Path]:
    """Remove the temporary files and folders of this module that processes no longer alive
    left in ``folder``; an output set aside for a replacement that never arrived is put back.
    Returns the paths removed or put back."""
    handled = []
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return handled
    for entry in entries:
        match = TEMP_RE.match(entry.name)
        if match is None or entry.is_symlink() or pid_alive(int(match["pid"])):
            continue
        original = entry.with_name(match["name"])
        if match["what"] == "replaced" and not os.path.lexists(original):
            entry.rename(original)
        else:
            _remove(entry)
        handled.append(entry)
    return handled


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _new_folder(path: Path) -> Path:
    """Create ``path`` (or ``path.N`` when this process already has one of that name)."""
    for n in range(100):
        candidate = path if n == 0 else path.with_name(f"{path.name}.{n}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a staging folder beside {path.parent}")


@contextmanager
def staged(
    target: Path | str,
    command: str | None = None,
    check: Callable[[Path], None] | None = None,
) -> Iterator[Path]:
    """Yield a hidden folder beside ``target``; when the block succeeds it becomes ``target``
    (two renames when ``target`` is replaced), when it fails it is removed.

    ``check(target)`` allows the write; it runs before and again right before the rename
    (default: :func:`check_replaceable` with ``command``). With ``command`` the folder is
    marked as its output (:data:`OWNER_FILE`). Stale temporaries beside ``target`` are removed.
    """
    path = output_path(target)
    check = check or (lambda t: check_replaceable(t, command))
    check(Path(target))
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(path.parent)
    stage = _new_folder(path.with_name(temporary_name(path.name, "staging")))
    try:
        with naming(target):
            yield stage
            check(Path(target))
            if command is not None:
                write_owner(stage, command)
            _swap(stage, path)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def _swap(stage: Path, target: Path) -> None:
    """Rename ``stage`` to ``target``; an existing ``target`` is set aside first and removed
    after (put back when the second rename fails)."""
    if not os.path.lexists(target):
        stage.rename(target)
        return
    old = _new_folder(target.with_name(temporary_name(target.name, "replaced")))
    old.rmdir()
    target.rename(old)
    try:
        stage.rename(target)
    except BaseException:
        old.rename(target)
        raise
    shutil.rmtree(old, ignore_errors=True)
