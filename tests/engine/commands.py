"""Helpers of the tests that run the commands in this process: exit codes and one-line errors,
snapshots of folders, the arguments of a tiny-model run, score records edited by hand."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path


def call(main: Callable[[list[str]], int], argv: list[str], capsys) -> tuple[int, str]:
    """(exit code, stderr) of an entry point run in this process (argparse exits instead)."""
    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = int(stop.code or 0)
    return code, capsys.readouterr().err


def refused(main, argv: list[str], capsys, *fragments: str) -> str:
    """Run ``main(argv)``: exit 2 and one error line ``<prog>: error: ...`` holding
    ``fragments``, the last on stderr (progress lines of a long command may come before)."""
    code, err = call(main, argv, capsys)
    lines = err.strip().splitlines()
    errors = [line for line in lines if ": error: " in line]
    assert code == 2, err
    assert len(errors) == 1 and errors[0] == lines[-1] and "Traceback" not in err, err
    for fragment in fragments:
        assert str(fragment) in errors[0], errors[0]
    return errors[0]


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (symbolic links not followed) -> its bytes."""
    root = Path(root)
    if root.is_file():
        return {".": root.read_bytes()}
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def eval_args(model: Path, data: Path, out: Path, *extra: object) -> list[str]:
    """The arguments of a ``bla-eval`` run of ``model`` on CPU."""
    argv = ["--model", model, "--output", out, "--data", data, "--device", "cpu", *extra]
    return [str(a) for a in argv]


def copy_run(run: Path, tmp_path: Path, name: str = "run") -> Path:
    """A copy of the folder ``run`` as ``tmp_path / name``."""
    target = tmp_path / name
    shutil.copytree(run, target)
    return target


def lines_of(path: Path) -> list[dict]:
    """The records of a scores file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_lines(path: Path, records: list[dict]) -> None:
    """Write ``records`` as a scores file."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
