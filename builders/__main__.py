"""Command line of the builders: ``python -m builders {release,publish,construct} ...``.

Each subcommand module is imported only when it runs; this file holds no logic of its own.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "bla_dataset"
DEFAULT_RELEASE = Path(
    os.environ.get("BLA_RELEASE_DIR", REPO_ROOT.parent / "shared" / "data" / "BLA_Benchmark")
)
"""``$BLA_RELEASE_DIR``, else the team's copy beside the repo (the same default as the tests)."""


def _release(args: argparse.Namespace) -> int:
    from builders.release import build_release

    manifest = build_release(args.source, args.out, progress=not args.quiet)
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
    p.add_argument("--source", type=Path, default=DEFAULT_RELEASE,
                   help="release folder or zip file (default: $BLA_RELEASE_DIR, else "
                   f"{DEFAULT_RELEASE})")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT,
                   help=f"output folder, replaced only after a successful build "
                   f"(default: {DEFAULT_OUT})")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_release)


def add_publish_parser(sub: argparse._SubParsersAction) -> None:
    """``publish``: upload a built repo to the Hugging Face Hub and tag it."""
    p = sub.add_parser("publish", help="upload the built dataset repo to the Hub and tag it")
    p.add_argument("--repo-id", required=True, help="Hub dataset repo, e.g. ORG/bla")
    p.add_argument("--tag", required=True, help="tag: v<dataset_version>, e.g. v1.0.0")
    p.add_argument("--source", type=Path, default=DEFAULT_OUT,
                   help=f"built dataset folder (default: {DEFAULT_OUT})")
    p.add_argument("--dry-run", action="store_true",
                   help="print the exact Hub operations instead of running them")
    p.add_argument("--private", action="store_true", help="create the Hub repo as private")
    p.set_defaults(func=_publish)


OPTIONAL_SUBCOMMANDS: dict[str, tuple[str, ...]] = {
    "construct": ("builders.construct", "builders.construct.cli"),
}
"""Subcommands owned by other modules: name -> modules that may provide ``add_parser(sub)``."""


def add_optional_parsers(sub: argparse._SubParsersAction) -> None:
    """Register the subcommands of OPTIONAL_SUBCOMMANDS whose module exists.

    ``construct`` (Visual Genome -> new caption sets) lives in ``builders.construct``; the first
    listed module that provides ``add_parser(sub)`` registers it. When none is there the CLI
    works without it; a module that fails to import is reported, never fatal for ``release``.
    """
    for name, modules in OPTIONAL_SUBCOMMANDS.items():
        add_parser = _find_add_parser(name, modules)
        if add_parser is not None:
            add_parser(sub)


def _find_add_parser(name: str, modules: tuple[str, ...]):
    for module in modules:
        try:
            add_parser = getattr(importlib.import_module(module), "add_parser", None)
        except ModuleNotFoundError as err:
            if err.name is not None and module.startswith(err.name):
                continue  # not written (yet): skip quietly
            _warn_unavailable(name, err)
            return None
        except Exception as err:  # a broken optional module must not break `release`
            _warn_unavailable(name, err)
            return None
        if add_parser is not None:
            return add_parser
    return None


def _warn_unavailable(name: str, err: BaseException) -> None:
    print(f"warning: subcommand {name} not available ({type(err).__name__}: {err})",
          file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(
        prog="python -m builders", description="Build and publish the BLA dataset repo."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    add_release_parser(sub)
    add_publish_parser(sub)
    add_optional_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; errors print one line and exit 1."""
    args = build_parser().parse_args(argv)
    from builders.source import ReleaseError

    try:
        return args.func(args)
    except (ReleaseError, FileNotFoundError, FileExistsError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
