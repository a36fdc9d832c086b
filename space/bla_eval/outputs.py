"""How every command reads and writes its outputs (a run folder's own files: ``bla_eval.runs``).

- Readers: :func:`read_json` and :func:`read_records`; an error names the file (and the line).
  Every JSON document goes through :func:`parse_json`, which bounds its nesting and its numbers
  (an integer of 10**400 is refused where it is parsed, not met as an OverflowError later).
  Every file is read through :func:`read_regular`: a FIFO, a device or a socket where a file
  is expected is refused, never waited on.
- Atomic files: :func:`write_text_atomic`, :func:`write_json_atomic`, :func:`write_lines_atomic`
  write a temporary file (in a marked hidden folder beside the target) and rename it into place;
  :func:`write_texts_atomic` writes several files of one output so (all written, then renamed).
- Staged folders: :func:`staged` yields a hidden folder beside the target and renames it into
  place when the block succeeds (removed when it fails); :func:`remove_stale` removes what a
  killed process left behind. Every temporary is a folder holding :data:`TEMP_MARKER`, the proof
  that it is ours: a name that matches the pattern is never enough.
- Ownership: a command replaces an output only when the output's marker (:data:`OWNER_FILE`)
  names that command and lists every file in it (:func:`check_replaceable`; a dataset folder
  built before the builders wrote the marker counts through its manifest, :func:`earlier_owner`);
  a single file written into a folder of the user's carries a first-line mark
  (:func:`write_marked_text`). The working directory, its parents and symbolic links are refused
  (:func:`output_path`); no file is written through a symbolic link (:func:`open_own`,
  :func:`refuse_link`).
- :func:`naming`: an OS error that names no file (a full disk) is raised naming the path.
- Secrets: what the writers write has every secret the process knows masked (``bla_eval.redact``).

Standard library only, besides the default protocol's name: the builders and the Space import
this module.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import re
import shutil
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path, PurePosixPath
from typing import Any

from .redact import any_registered, scrub, scrub_data

FINETUNE_FILE = "finetune.json"
OWNER_FILE = ".bla-output.json"
"""The marker of an output: ``{"command": ..., "files": [...]}``, written last."""
BUILD_MANIFEST = "manifest.json"
"""The manifest of a dataset folder of ``python -m builders``: in folders built before the
builders wrote :data:`OWNER_FILE`, the proof of ownership (:func:`earlier_owner`)."""
BUILDERS = "python -m builders "
"""The start of every builder's command (``python -m builders release``, ``... construct``)."""
RECORD_KEYS = ("task", "id", "scores")
"""Keys every score record has."""

TEMP_RE = re.compile(r"^\.(?P<name>.+)\.bla-(?P<what>staging|replaced|tmp)-(?P<pid>\d+)(\.\d+)*$")
"""Names of the temporary folders of this module (the pid of the writer)."""
TEMP_MARKER = ".bla-temporary.json"
"""The file inside each temporary folder of this module, ``{"pid": ..., "name": ...}``: written
when the folder is created, it proves the folder ours (:func:`is_temporary`)."""
SHOWN = 5
"""Names an error lists before "and N more"."""
MAX_JSON_DEPTH = 64
"""The deepest nesting of a JSON document or record read (a run's documents nest a few levels);
deeper is refused before any reader walks it."""
MAX_JSON_INT_DIGITS = 20
"""The most digits of a JSON integer read (a 64-bit count has 20); a longer one is refused
before any reader turns it into a float (``float(10**400)`` is an OverflowError)."""
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


# ----------------------------------------------------------------------------- readers
def not_regular(path: Path | str, mode: int) -> ValueError:
    """The one-line refusal of something that is not a regular file where one is read."""
    kinds = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}
    kinds |= {stat.S_IFCHR: "a device", stat.S_IFBLK: "a device"}
    kind = kinds.get(stat.S_IFMT(mode), "no file")
    return ValueError(f"{path} is {kind}, not a regular file: remove it or name a file")


HASH_CHUNK = 1 << 20
"""Bytes read at a time when files are hashed (:func:`content_hash`)."""


def content_hash(files: list[Path], root: Path) -> str:
    """SHA-256 over each file's name (relative to ``root``) and bytes, read in chunks (a FIFO
    or device is refused, not read)."""
    digest = hashlib.sha256()
    for file in files:
        name = file.name if file == root else file.relative_to(root).as_posix()
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
        with os.fdopen(open_regular(file), "rb") as handle:
            while chunk := handle.read(HASH_CHUNK):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def open_regular(path: Path | str, follow: bool = True) -> int:
    """A descriptor of the regular file ``path`` open for reading; a FIFO, device, socket or
    folder is refused (a ValueError naming it) without waiting for a writer, and so is a
    symbolic link when not ``follow``. An OSError (a missing file) is raised as it is."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | (0 if follow else NOFOLLOW))
    except OSError as err:
        if not follow and err.errno == errno.ELOOP:
            raise link_error(path) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(path, mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path | str, limit: int | None = None, follow: bool = True) -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular`), at most ``limit`` + 1 of
    them when ``limit`` is given (the caller refuses the longer file)."""
    with os.fdopen(open_regular(path, follow), "rb") as handle:
        return handle.read() if limit is None else handle.read(limit + 1)


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object of an output (any error is a ValueError naming the file)."""
    path = Path(path)
    try:
        text = read_regular(path).decode("utf-8")
    except OSError as err:
        raise ValueError(f"cannot read {path}: {err.strerror or err}") from err
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} is not UTF-8 text (byte {err.start + 1})") from None
    try:
        document = parse_json(text)
    except ValueError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from None
    if not isinstance(document, dict):
        raise ValueError(f"{path} is not a JSON object")
    return document


def _json_int(text: str) -> int:
    """A JSON integer, at most :data:`MAX_JSON_INT_DIGITS` digits (else a ValueError)."""
    digits = len(text.lstrip("-"))
    if digits > MAX_JSON_INT_DIGITS:
        raise ValueError(
            f"an integer of {digits} digits ({text[:12]}...), over the {MAX_JSON_INT_DIGITS} a "
            "number may have"
        )
    return int(text)


def _json_float(text: str) -> float:
    """A JSON number with a fraction or exponent, refused (ValueError) when it is too large for a
    float (``1e400`` would be read as infinity)."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:24]} is too large for a float")
    return value


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once (else a ValueError naming the key)."""
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise ValueError(f"the key {key!r} is given twice in one object")
        document[key] = value
    return document


def parse_json(text: str, unique_keys: bool = False) -> Any:
    """``json.loads`` of ``text``, the one JSON parser of the project's readers: refusing
    (ValueError) a document nested deeper than :data:`MAX_JSON_DEPTH` (one nested 100,000 deep
    included: no RecursionError) and a number out of bounds (:func:`_json_int`,
    :func:`_json_float`); ``NaN`` and ``Infinity`` are read as ``json`` reads them, for the
    readers that check numbers to refuse. With ``unique_keys`` an object that gives a key twice
    is refused (``json`` would keep the last value and lose the first silently)."""
    hook = _unique_object if unique_keys else None
    try:
        document = json.loads(
            text, parse_int=_json_int, parse_float=_json_float, object_pairs_hook=hook
        )
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    level: list[tuple[Any, int]] = [(document, 1)]
    while level:
        value, depth = level.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
            children = value.values() if isinstance(value, dict) else value
            level += [(child, depth + 1) for child in children if isinstance(child, (dict, list))]
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
    if repair:
        refuse_link(path)
    try:
        data = read_regular(path)
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
                _repair(path, len(data) - len(tail), b"")
        else:
            if repair:
                _repair(path, len(data), b"\n")
    return records


def _repair(path: Path, size: int, end: bytes) -> None:
    """Cut ``path`` to ``size`` bytes and append ``end`` (never through a symbolic link)."""
    with naming(path):
        fd = open_own(path, os.O_WRONLY)
        try:
            os.ftruncate(fd, size)
            os.lseek(fd, size, os.SEEK_SET)
            os.write(fd, end)
        finally:
            os.close(fd)


def _record(path: Path, number: int, line: bytes) -> dict[str, Any]:
    """One line of a scores file as a record (an error names the file and the line)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{path}: line {number} is not UTF-8 text (byte {err.start + 1} of the line)"
        ) from None
    try:
        record = parse_json(text)
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


# ----------------------------------------------------------------------------- symbolic links
def link_error(path: Path | str) -> ValueError:
    """The one-line refusal of a symbolic link where an output is written."""
    return ValueError(f"{path} is a symbolic link: no output is written through one; remove it")


def refuse_link(path: Path | str) -> None:
    """Refuse a symbolic link at ``path`` (a ValueError naming it); anything else passes."""
    if os.path.islink(path):
        raise link_error(path)


def open_own(path: Path | str, flags: int, mode: int = 0o644) -> int:
    """``os.open`` that never follows a symbolic link at ``path`` (a ValueError naming it)."""
    try:
        return os.open(path, flags | NOFOLLOW, mode)
    except OSError as err:
        if err.errno == errno.ELOOP or (flags & os.O_CREAT and os.path.islink(path)):
            raise link_error(path) from None
        raise


# ----------------------------------------------------------------------------- atomic files
def temporary_name(name: str, what: str) -> str:
    """The hidden name of this process's temporary ``what`` (staging, replaced, tmp) of ``name``."""
    return f".{name}.bla-{what}-{os.getpid()}"


@contextmanager
def atomic_file(path: Path, binary: bool = False) -> Iterator[Any]:
    """A handle (UTF-8 text, or bytes with ``binary``) on a temporary file whose content
    replaces ``path`` in one rename when the block succeeds (a crash never leaves half a file;
    on an error ``path`` is untouched; a symbolic link at ``path`` is refused). The temporary
    file lies in a marked hidden folder beside ``path``; ``handle.name`` is its path."""
    path = Path(path)
    refuse_link(path)
    # one temporary per process and thread: threads may write the same path
    with naming(path):
        folder = temporary_folder(
            path.with_name(f"{temporary_name(path.name, 'tmp')}.{threading.get_ident()}")
        )
    tmp = folder / path.name
    text = {} if binary else {"encoding": "utf-8", "newline": "\n"}
    try:
        with naming(path), tmp.open("xb" if binary else "x", **text) as handle:
            yield handle
        with naming(path):
            refuse_link(path)
            os.replace(tmp, path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename (known secrets masked:
    ``bla_eval.redact``)."""
    with atomic_file(path) as handle:
        handle.write(scrub(text))


def write_texts_atomic(texts: Mapping[Path, str]) -> None:
    """Write several files as one output: every text (secrets masked) to its temporary file,
    flushed to the disk, before the first rename; a write that fails (a full disk) leaves every
    target as it was, and removes the folders it created for them. The renames come last, in
    the reverse order of ``texts``."""
    created = list(dict.fromkeys(p for path in texts for p in _missing_folders(Path(path).parent)))
    try:
        for folder in reversed(created):
            folder.mkdir(exist_ok=True)
        with ExitStack() as stack:
            handles = [stack.enter_context(atomic_file(Path(path))) for path in texts]
            for handle, (path, text) in zip(handles, texts.items(), strict=True):
                with naming(path):
                    handle.write(scrub(text))
                    handle.flush()
                    os.fsync(handle.fileno())
    except BaseException:
        for folder in created:  # the innermost first; a folder holding anything stays
            with suppress(OSError):
                folder.rmdir()
        raise


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and its parents that do not exist, the innermost first."""
    missing = []
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def write_json_atomic(path: Path, document: dict[str, Any]) -> None:
    """Write a JSON document (indented, UTF-8, final newline) through a temporary file."""
    text = json.dumps(scrub_data(document), indent=2, ensure_ascii=False)
    write_text_atomic(path, text + "\n")


def write_lines_atomic(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Write JSON lines (one record each) through a temporary file."""
    with atomic_file(path) as handle:
        for record in records:
            handle.write(json.dumps(scrub_data(record), ensure_ascii=False) + "\n")


# ----------------------------------------------------------------------------- ownership
def output_path(target: Path | str) -> Path:
    """``target`` made absolute (symbolic links of its parents resolved), after refusing a
    symbolic link, the root, the working directory and any folder that holds it, and a path
    under a file."""
    path = Path(target)
    if path.is_symlink():
        raise ValueError(f"output {target} is a symbolic link: give the folder it points to")
    resolved = path.resolve()
    cwd = Path.cwd().resolve()
    if not resolved.name or resolved == cwd or resolved in cwd.parents:
        raise ValueError(
            f"output {target} is the working directory or holds it: choose a new folder"
        )
    above = next(p for p in resolved.parents if p.exists())
    if not above.is_dir():
        raise ValueError(f"output {target} lies under {above}, which is a file, not a folder")
    return resolved


def owner(folder: Path) -> dict[str, Any] | None:
    """The marker of ``folder`` (``command`` and ``files``), or None when it has no valid one
    (a symbolic link is no marker); a folder without one that an earlier version wrote has its
    :func:`earlier_owner`. A marker's lists name paths (``files``, a sweep's ``cells``): an
    entry that is no string names none and is left out, so every reader gets names only."""
    path = Path(folder) / OWNER_FILE
    marker = _read_marker(path) if os.path.lexists(path) else earlier_owner(Path(folder))
    if marker is None or not isinstance(marker.get("command"), str):
        return None
    if not isinstance(marker.get("files"), list):
        return None
    return {
        key: [name for name in value if isinstance(name, str)] if isinstance(value, list) else value
        for key, value in marker.items()
    }


def earlier_owner(folder: Path) -> dict[str, Any] | None:
    """The marker a folder written before its tool wrote :data:`OWNER_FILE` stands for: a dataset
    folder whose :data:`BUILD_MANIFEST` names a builder (``builder``: :data:`BUILDERS` +
    subcommand, or the oldest ``"kind": "construct"``) and lists its ``files``."""
    manifest = _read_marker(folder / BUILD_MANIFEST)
    if manifest is None or not isinstance(manifest.get("files"), dict):
        return None
    command = manifest.get("builder")
    if command is None and manifest.get("kind") == "construct":
        command = BUILDERS + "construct"
    if not isinstance(command, str) or not command.startswith(BUILDERS):
        return None
    return {"command": command, "files": [*manifest["files"], BUILD_MANIFEST]}


def _read_marker(path: Path) -> dict[str, Any] | None:
    """The JSON object in the marker file ``path``; None when it is missing, unreadable, not an
    object, or a symbolic link (a link is no proof of ownership)."""
    if path.is_symlink():
        return None
    try:
        marker = parse_json(read_regular(path).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


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


def _foreign_folders(folder: Path, files: set[str]) -> list[str]:
    """The folders under ``folder`` (not links) that hold none of the marked ``files``: a
    user's, even when empty."""
    holders = {parent.as_posix() for name in files for parent in PurePosixPath(name).parents}
    found = []
    for root, dirs, _ in os.walk(folder):
        rel = Path(root).relative_to(folder)
        found += [(rel / d).as_posix() for d in dirs if not (Path(root) / d).is_symlink()]
    return [name for name in found if name not in holders]


def shown(names: list[str]) -> str:
    more = len(names) - SHOWN
    return ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def hidden(name: str) -> bool:
    """Whether the relative path ``name`` lies in a hidden entry at the top of its folder."""
    return name.startswith(".")


def check_replaceable(
    target: Path | str, command: str | None = None, keep_hidden: bool = False
) -> None:
    """Allow writing ``target`` when it is absent, an empty folder, or (with ``command``) a
    folder whose marker (:func:`owner`) names ``command`` and lists every file in it; anything
    else is a FileExistsError that lists what is there (the refusals of :func:`output_path` come
    first). With ``keep_hidden``, hidden entries at its top (a repo's ``.git``, ``.gitignore``)
    count for nothing: the replacement keeps them (:func:`staged`)."""
    path = output_path(target)
    if not path.exists():
        return
    if not path.is_dir():
        raise FileExistsError(f"output {target} exists and is not a folder: choose another path")
    entries = [e for e in sorted(os.listdir(path)) if not (keep_hidden and hidden(e))]
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
    listed = set(marker["files"])
    unknown = sorted(set(files_under(path)) - listed - {OWNER_FILE})
    unknown += sorted(f"{name}/" for name in _foreign_folders(path, listed))
    unknown = [name for name in unknown if not (keep_hidden and hidden(name))]
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


def check_file_replaceable(
    target: Path | str, command: str, root: Path | str | None = None
) -> Path:
    """Allow writing the file ``target`` when it is absent or starts with ``command``'s
    :func:`file_mark`; a symbolic link, a folder or any other file is refused (FileExistsError
    naming it), and so is a link on the way to it: its parent, and every folder from ``root``
    (the folder the user named, when ``target`` lies under it) down to it."""
    path = Path(target)
    if path.is_symlink():
        raise FileExistsError(f"{target} is a symbolic link: {command} writes no file through one")
    for folder in _folders_from(Path(root) if root is not None else path.parent, path):
        if folder.is_symlink():
            raise FileExistsError(
                f"{folder} is a symbolic link: {command} writes no file through one"
            )
    if not path.exists():
        return path
    if not path.is_file():
        raise FileExistsError(f"{target} exists and is not a file: move it away")
    if marked_by(path) != command:
        raise FileExistsError(
            f"{target} exists and was not written by `{command}`: move it away or choose "
            "another --output"
        )
    return path


def _folders_from(root: Path, path: Path) -> list[Path]:
    """The folders from ``root`` down to ``path``'s parent (only the parent when ``path`` does not
    lie under ``root``)."""
    parents = list(reversed(path.parents))
    if root not in parents:
        return [path.parent]
    return parents[parents.index(root) :]


def marked_by(path: Path) -> str | None:
    """The command whose mark the file ``path`` carries: :func:`file_mark` as its first line, or
    (a JSON document) its :data:`MARK_KEY`; None when it carries none."""
    with naming(path), os.fdopen(open_regular(path), "rb") as handle:
        first = handle.readline(4096)
        found = re.match(rb"# Written by (.+); it replaces this file only while this line", first)
        if found:
            return found[1].decode("utf-8", "replace")
        handle.seek(0)
        head = handle.read(MAX_MARKED_JSON + 1)
    if len(head) > MAX_MARKED_JSON or not head.lstrip().startswith(b"{"):
        return None
    try:
        document = parse_json(head.decode("utf-8"))
    except ValueError:
        return None
    mark = document.get(MARK_KEY) if isinstance(document, dict) else None
    return mark if isinstance(mark, str) else None


MARK_KEY = "written_by"
"""The key of a JSON file written as a single output that holds the command's name: the proof
that the command may replace the file."""
MAX_MARKED_JSON = 64 * 1024 * 1024
"""The largest JSON file read to find its mark (a larger one is not replaced)."""


def write_marked_json(target: Path | str, command: str, document: dict[str, Any]) -> None:
    """Write ``document`` (with ``{MARK_KEY: command}`` first) to the file ``target``, checked
    with :func:`check_file_replaceable` and written atomically."""
    path = check_file_replaceable(target, command)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {MARK_KEY: command, **document})


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


def is_temporary(entry: Path) -> re.Match[str] | None:
    """The name match of ``entry`` when it is a temporary folder of this module: a folder (not
    a link) named by :data:`TEMP_RE` whose :data:`TEMP_MARKER` names it and its pid."""
    entry = Path(entry)
    match = TEMP_RE.match(entry.name)
    if match is None or entry.is_symlink() or not entry.is_dir():
        return None
    marker = _read_marker(entry / TEMP_MARKER)
    if marker is None or marker.get("name") != entry.name:
        return None
    return match if marker.get("pid") == int(match["pid"]) else None


def remove_stale(folder: Path) -> list[Path]:
    """Remove the temporary folders of this module (proven by their marker, never by name
    alone) that processes no longer alive left in ``folder``; an output set aside for a
    replacement that never arrived is put back. Returns the paths removed or put back."""
    handled = []
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return handled
    for entry in entries:
        match = is_temporary(entry)
        if match is None or pid_alive(int(match["pid"])):
            continue
        kept, original = entry / match["name"], entry.with_name(match["name"])
        swapped = match["what"] == "replaced" and os.path.lexists(kept)
        if swapped and not os.path.lexists(original):  # killed between the renames of a swap
            kept.rename(original)
        shutil.rmtree(entry, ignore_errors=True)
        handled.append(entry)
    return handled


def temporary_folder(path: Path) -> Path:
    """Create the hidden folder ``path`` (or ``path.N`` when this process already has one of
    that name) with its :data:`TEMP_MARKER`: from then on it is provably ours."""
    for n in range(100):
        candidate = path if n == 0 else path.with_name(f"{path.name}.{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        marker = json.dumps({"pid": os.getpid(), "name": candidate.name}) + "\n"
        fd = open_own(candidate / TEMP_MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(marker)
        return candidate
    raise FileExistsError(f"cannot create a temporary folder beside {path.parent}")


@contextmanager
def staged(
    target: Path | str,
    command: str | None = None,
    check: Callable[[Path], None] | None = None,
    keep_hidden: bool = False,
) -> Iterator[Path]:
    """Yield a folder inside a marked hidden folder beside ``target``; when the block succeeds
    it becomes ``target`` (two renames when ``target`` is replaced), when it fails it is removed.

    ``check(target)`` allows the write; it runs before and again right before the rename
    (default: :func:`check_replaceable` with ``command`` and ``keep_hidden``). With ``command``
    the folder is marked as its output (:data:`OWNER_FILE`). With ``keep_hidden``, the hidden
    entries at the top of the ``target`` replaced are carried into the new one (not listed in
    its marker). Stale temporaries beside ``target`` are removed.
    """
    path = output_path(target)
    check = check or (lambda t: check_replaceable(t, command, keep_hidden))
    check(Path(target))
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(path.parent)
    with naming(target):
        holder = temporary_folder(path.with_name(temporary_name(path.name, "staging")))
    stage = holder / path.name
    try:
        with naming(target):
            stage.mkdir()
            yield stage
            check(Path(target))
            scrub_files(stage)
            if command is not None:
                write_owner(stage, command)
            if keep_hidden:
                _carry_hidden(path, stage)
            _swap(stage, path)
    finally:
        shutil.rmtree(holder, ignore_errors=True)


TEXT_SUFFIXES = (".md", ".json", ".jsonl", ".csv", ".tex", ".txt", ".yaml", ".html")
MAX_SCRUBBED_BYTES = 64 << 20


def scrub_files(folder: Path) -> None:
    """Mask the secrets the process knows (``bla_eval.redact``) in the text files under a staged
    ``folder``, whichever code wrote them (analyses, comparisons, learning reports)."""
    if not any_registered():
        return
    for name in files_under(folder):
        path = Path(folder) / name
        if path.suffix not in TEXT_SUFFIXES or path.is_symlink():
            continue
        if path.stat().st_size > MAX_SCRUBBED_BYTES:
            continue
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        clean = scrub(text)
        if clean != text:
            path.write_text(clean, encoding="utf-8", errors="surrogateescape")


def _carry_hidden(target: Path, stage: Path) -> None:
    """Copy the hidden entries at the top of the folder ``target`` that ``stage`` lacks into it
    (links as links)."""
    if not target.is_dir() or target.is_symlink():
        return
    for entry in sorted(target.iterdir()):
        if not hidden(entry.name) or os.path.lexists(stage / entry.name):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, stage / entry.name, symlinks=True)
        else:
            shutil.copy2(entry, stage / entry.name, follow_symlinks=False)


def _swap(stage: Path, target: Path) -> None:
    """Rename ``stage`` to ``target``; an existing ``target`` is set aside first (into a marked
    temporary folder) and removed after (put back when the second rename fails)."""
    if not os.path.lexists(target):
        stage.rename(target)
        return
    aside = temporary_folder(target.with_name(temporary_name(target.name, "replaced")))
    old = aside / target.name
    target.rename(old)
    try:
        stage.rename(target)
    except BaseException:
        old.rename(target)
        raise
    shutil.rmtree(aside, ignore_errors=True)
