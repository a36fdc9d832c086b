"""Command line of the builders: ``python -m builders <subcommand> ...`` (from the repository root).

Subcommands: ``release``, ``publish``, ``construct``, ``calibrate``, the neighbouring
benchmarks' ``valse``, ``vl-checklist``, ``winoground``, ``sugarcrepe``, ``sugarcrepe-pp``,
``aro``, ``mmvp-vlm``, ``naturalbench``, and the deployments ``space`` and ``metric-space``.

Each subcommand module is imported only when it runs. Every bad argument, path or record ends in
one line ``python -m builders <subcommand>: error: ...`` naming it on stderr and exit code 2, with
nothing written (``bla_eval.cli_common``); ``--debug`` shows the traceback instead. Relative paths,
and the default ``--out bla_dataset``, are relative to the working directory.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import MISSING, dataclass
from pathlib import Path

from bla_eval.cli_common import (
    Debugging,
    OneLineParser,
    add_field_options,
    option,
    positive_int,
    run_guarded,
)

PROG = "python -m builders"
DEFAULT_OUT = Path("bla_dataset")
"""Default output folder, relative to the working directory (where bla-eval looks for it)."""
RELEASE_ENV = "BLA_RELEASE_DIR"
"""Environment variable naming a local release folder or zip (``release`` without --source)."""

__all__ = ["DEFAULT_OUT", "build_parser", "main", "positive_int", "share"]


def share(text: str) -> float:
    """An argparse type: a number in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value}")
    return value


def default_release() -> Path | None:
    """``$BLA_RELEASE_DIR``, else None (``release`` then downloads the public release zip)."""
    folder = os.environ.get(RELEASE_ENV)
    return Path(folder) if folder else None


def _release(args: argparse.Namespace) -> int:
    from builders.download import fetch_release
    from builders.release import build_release

    if args.source is None:
        source = default_release() or fetch_release(progress=not args.quiet)
    elif args.source.startswith(("http://", "https://")):
        source = fetch_release(args.source, progress=not args.quiet)
    else:
        source = Path(args.source)
    manifest = build_release(source, args.out, progress=not args.quiet)
    counts = ", ".join(f"{c} {sum(s.values())}" for c, s in manifest["configs"].items())
    print(f"wrote BLA {manifest['dataset_version']} to {args.out} ({counts} rows)")
    return 0


def _publish(args: argparse.Namespace) -> int:
    from builders.publish import publish

    publish(args.source, args.repo_id, args.tag, dry_run=args.dry_run, private=args.private)
    return 0


@dataclass(frozen=True, kw_only=True)
class ReleaseOptions:
    """The options of ``release``."""

    source: str | None = option(
        help="release folder, zip file, or URL of the zip (default: $BLA_RELEASE_DIR, else "
        "the authors' public release zip, $BLA_RELEASE_URL overriding its URL; a download "
        "is checked file by file against builders/data/release_sha256.json and cached in "
        "$BLA_CACHE_DIR, else ~/.cache/bla)"
    )
    out: Path = option(
        DEFAULT_OUT,
        "output folder, replaced only after a successful build and only when it holds nothing "
        "but a previous build",
        type=Path,
    )
    quiet: bool = option(False, "no progress bars")


@dataclass(frozen=True, kw_only=True)
class PublishOptions:
    """The options of ``publish``."""

    repo_id: str = option(MISSING, "Hub dataset repo, e.g. ORG/bla")
    tag: str = option(MISSING, "tag: v<dataset_version>, e.g. v1.0.0")
    source: Path = option(DEFAULT_OUT, "built dataset folder (release or construct)", type=Path)
    dry_run: bool = option(False, "print the exact Hub operations instead of running them")
    private: bool = option(False, "create the Hub repo as private")


def add_release_parser(sub: argparse._SubParsersAction) -> None:
    """``release``: release folder or zip -> dataset repo."""
    p = sub.add_parser("release", help="build the dataset repo from the BLA release (folder, zip)")
    add_field_options(p, ReleaseOptions)
    p.set_defaults(func=_release)


def add_publish_parser(sub: argparse._SubParsersAction) -> None:
    """``publish``: upload a built repo to the Hugging Face Hub and tag it."""
    p = sub.add_parser("publish", help="upload the built dataset repo to the Hub and tag it")
    add_field_options(p, PublishOptions)
    p.set_defaults(func=_publish)


SUBCOMMAND_MODULES = {
    "construct": "builders.construct.cli",
    "calibrate": "builders.construct.calibrate",
    "valse": "builders.valse",
    "vl-checklist": "builders.vl_checklist",
    "winoground": "builders.winoground",
    "sugarcrepe": "builders.sugarcrepe",
    "sugarcrepe-pp": "builders.sugarcrepe_pp",
    "aro": "builders.aro",
    "mmvp-vlm": "builders.mmvp_vlm",
    "naturalbench": "builders.naturalbench",
    "space": "builders.space_repo",
    "metric-space": "builders.metric_repo",
}
"""Subcommand -> module that adds it with ``add_parser(sub)`` (after release and publish)."""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser (each subcommand a ``OneLineParser`` with ``--debug``).

    When ``argv`` names a subcommand, only that subcommand's module is imported; otherwise (no
    ``argv``, ``--help``, an unknown name) every subcommand is added.
    """
    command = next((a for a in argv or () if not a.startswith("-")), None)
    modules = [m for name, m in SUBCOMMAND_MODULES.items() if name == command]
    if command not in (*SUBCOMMAND_MODULES, "release", "publish"):
        modules = list(SUBCOMMAND_MODULES.values())
    adders = [add_release_parser, add_publish_parser]
    adders += [importlib.import_module(module).add_parser for module in modules]
    debug = OneLineParser(add_help=False)
    add_field_options(debug, Debugging, suppress=True)
    parser = OneLineParser(
        prog=PROG, description="Build and publish the BLA dataset repo.", parents=[debug]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for add in adders:
        add(_WithParents(sub, [debug]))
    return parser


class _WithParents:
    """``sub.add_parser`` with the common options (``--debug``) added to every subcommand."""

    def __init__(self, sub: argparse._SubParsersAction, parents: list) -> None:
        self.sub, self.parents = sub, parents

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        return self.sub.add_parser(name, parents=self.parents, **kwargs)


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; errors print one line and return 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # building the parser imports the subcommand's module, which may need the builders extra
    return run_guarded(lambda: _run(argv), "--debug" in argv, PROG, extra="builders")


def _run(argv: list[str]) -> int:
    """Parse ``argv`` and run the chosen subcommand inside its own error guard."""
    args = build_parser(argv).parse_args(argv)
    debug = getattr(args, "debug", False)
    return run_guarded(lambda: args.func(args), debug, f"{PROG} {args.command}", extra="builders")


if __name__ == "__main__":
    sys.exit(main())
