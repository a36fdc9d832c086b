"""Command line of the builders: ``python -m builders <subcommand> ...``.

Subcommands: ``release``, ``publish``, ``construct``, ``calibrate``, and the neighbouring
benchmarks' ``valse``, ``vl-checklist``, ``winoground``.

Each subcommand module is imported only when it runs. Every bad argument, path or record ends
in one line ``error: ...`` naming it on stderr and exit code 2, with nothing written; ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from bla_eval import cli_common

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "bla_dataset"
EXIT_ERROR = 2
"""Exit code of every refused argument, path or record (argparse's own code for bad usage)."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block) and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_ERROR, f"error: {self.prog}: {message} (see --help)\n")


positive_int = cli_common.positive_int
"""An argparse type: an integer >= 1 (shared with ``bla-eval``)."""


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
    """``$BLA_RELEASE_DIR``, else the team's copy beside the repo when it exists, else None
    (``release`` then downloads the public release zip)."""
    if os.environ.get("BLA_RELEASE_DIR"):
        return Path(os.environ["BLA_RELEASE_DIR"])
    sibling = REPO_ROOT.parent / "shared" / "data" / "BLA_Benchmark"
    return sibling if sibling.is_dir() else None


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


def add_release_parser(sub: argparse._SubParsersAction) -> None:
    """``release``: release folder or zip -> dataset repo."""
    p = sub.add_parser("release", help="build the dataset repo from the BLA release (folder, zip)")
    p.add_argument(
        "--source",
        default=None,
        help="release folder, zip file, or URL of the zip (default: $BLA_RELEASE_DIR, "
        "else ../shared/data/BLA_Benchmark beside the repo, else the authors' public "
        "release zip ($BLA_RELEASE_URL overrides its URL); a download is checked file "
        "by file against builders/data/release_sha256.json and cached in "
        "$BLA_CACHE_DIR, else ~/.cache/bla)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"output folder, replaced only after a successful build and only when it "
        f"holds nothing but a previous build (default: {DEFAULT_OUT})",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_release)


def add_publish_parser(sub: argparse._SubParsersAction) -> None:
    """``publish``: upload a built repo to the Hugging Face Hub and tag it."""
    p = sub.add_parser("publish", help="upload the built dataset repo to the Hub and tag it")
    p.add_argument("--repo-id", required=True, help="Hub dataset repo, e.g. ORG/bla")
    p.add_argument("--tag", required=True, help="tag: v<dataset_version>, e.g. v1.0.0")
    p.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_OUT,
        help=f"built dataset folder (release or construct; default: {DEFAULT_OUT})",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the exact Hub operations instead of running them",
    )
    p.add_argument("--private", action="store_true", help="create the Hub repo as private")
    p.set_defaults(func=_publish)


SUBCOMMAND_MODULES = (
    "builders.construct.cli",  # construct
    "builders.construct.calibrate",  # calibrate
    "builders.valse",
    "builders.vl_checklist",
    "builders.winoground",
)
"""Modules that each add one subcommand with ``add_parser(sub)`` (after release and publish)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    adders = [add_release_parser, add_publish_parser] + [
        importlib.import_module(module).add_parser for module in SUBCOMMAND_MODULES
    ]
    debug = OneLineParser(add_help=False)
    debug.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the Python traceback of an error",
    )
    parser = OneLineParser(
        prog="python -m builders",
        description="Build and publish the BLA dataset repo.",
        parents=[debug],
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


def one_line(err: BaseException) -> str:
    """The error as one line: its message (with the exception type when that says more)."""
    from builders.source import ReleaseError

    text = " ".join(str(err).split()) or type(err).__name__
    if isinstance(err, (ReleaseError, ValueError, OSError, LookupError)):
        if isinstance(err, OSError) and err.filename and str(err.filename) not in text:
            text = f"{text}: {err.filename}"
        return text
    return f"{type(err).__name__}: {text} (run with --debug for the traceback)"


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; errors print one line and return 2."""
    args = build_parser().parse_args(argv)
    if getattr(args, "debug", False):
        return args.func(args)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("error: interrupted; nothing was written", file=sys.stderr)
        return EXIT_ERROR
    except Exception as err:  # every failure becomes one line naming it; --debug shows more
        print(f"error: {one_line(err)}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
