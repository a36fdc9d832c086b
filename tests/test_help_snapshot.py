"""Every command's options and defaults, against the copy in ``fixtures/help/options.json``.

A refactor of how options are declared must leave what a user types unchanged: each command's
``--help`` is asked for in this process and the parser that prints it is read (each option's
flags, default, choices, count of values, whether it is required or a switch), not its wording.
``BLA_WRITE_HELP_SNAPSHOT=1`` rewrites the copy (for a change that adds or changes an option on
purpose: the diff shows it).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

SNAPSHOT = Path(__file__).parent / "fixtures" / "help" / "options.json"
REPO_ROOT = Path(__file__).resolve().parent.parent

ENGINE = ["learning-report", "analyze", "compare", "export", "reproduce", "robustness", "sweep"]
BUILDERS = [
    "release", "publish", "construct", "calibrate", "valse", "vl-checklist", "winoground",
    "sugarcrepe", "sugarcrepe-pp", "aro", "mmvp-vlm", "naturalbench", "space", "metric-space",
]  # fmt: skip
SCRIPTS = [
    *(f"bla_eval.performance.{name}" for name in (
        "dual_encoder", "endpoint", "generative", "main_job", "metric", "regions",
        "resume", "scores", "vllm",
    )),
    "bla_eval.simulations.coverage",
    "bla_eval.testing.architectures", "bla_eval.testing.flamingo", "bla_eval.testing.tiny",
]  # fmt: skip
COMMANDS: dict[str, tuple[str, list[str]]] = {
    "bla-eval": ("bla_eval.cli", []),
    **{f"bla-eval {name}": ("bla_eval.cli", [name]) for name in ENGINE},
    "bla-finetune": ("bla_eval.finetune.cli", []),
    **{f"builders {name}": ("builders.__main__", [name]) for name in BUILDERS},
    **{module: (module, []) for module in SCRIPTS},
}
"""Command -> (module whose ``main(argv)`` runs it, the arguments before ``--help``)."""


class _Shown(Exception):
    """Raised by ``print_help``: carries the parser that was asked for its help."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _default(value: Any) -> Any:
    """A default as JSON, the repository written ``<repo>`` and the user's home folder ``~``."""
    if value is argparse.SUPPRESS or value is None or isinstance(value, bool | int | float):
        return None if value is argparse.SUPPRESS else value
    if isinstance(value, list | tuple):
        return [_default(v) for v in value]
    return str(value).replace(str(REPO_ROOT), "<repo>").replace(str(Path.home()), "~")


def options(parser: argparse.ArgumentParser) -> dict[str, dict[str, Any]]:
    """Each option of ``parser`` (positionals by their name): what a user can type and gets."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        name = " ".join(sorted(action.option_strings)) or action.dest
        found[name] = {
            "default": _default(action.default),
            "choices": None if action.choices is None else sorted(map(str, action.choices)),
            "nargs": action.nargs,
            "required": action.required,
            "switch": action.nargs == 0,
        }
    return found


def asked(module: str, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The options of the parser that ``module``'s ``main(argv + ["--help"])`` shows."""

    def catch(parser: argparse.ArgumentParser, file: Any = None) -> None:
        raise _Shown(parser)

    monkeypatch.setattr(argparse.ArgumentParser, "print_help", catch)
    monkeypatch.setattr(sys, "argv", [module])
    main = importlib.import_module(module).main
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main([*argv, "--help"])
        except _Shown as shown:
            return options(shown.parser)
        except SystemExit as stop:
            raise AssertionError(f"{module} {argv} exited ({stop.code}) before --help") from None
    raise AssertionError(f"{module} {argv}: --help printed no parser's help")


def written(seen: dict[str, dict[str, Any]]) -> str:
    """The snapshot as JSON with one line per option (a change shows as that line's diff)."""
    commands = []
    for command in sorted(seen):
        lines = [
            f"  {json.dumps(o)}: {json.dumps(seen[command][o])}" for o in sorted(seen[command])
        ]
        commands.append(f" {json.dumps(command)}: {{\n" + ",\n".join(lines) + "\n }")
    return "{\n" + ",\n".join(commands) + "\n}\n"


def test_every_command_keeps_its_options_and_defaults(monkeypatch):
    seen = {
        command: asked(module, argv, monkeypatch) for command, (module, argv) in COMMANDS.items()
    }
    if os.environ.get("BLA_WRITE_HELP_SNAPSHOT") == "1":
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(written(seen))
    kept = json.loads(SNAPSHOT.read_text())
    assert sorted(seen) == sorted(kept)
    for command in kept:
        assert seen[command] == kept[command], command
