"""``python -m builders space``: the BLA Space's repo folder, and its push to the Hub.

The folder holds three files: ``app.py`` (the checkout's ``space/app.py``), ``README.md`` (the
Space card with its Spaces YAML: sdk gradio at the tested version, ``app_file``,
``suggested_hardware``, the dataset) and ``requirements.txt``, which installs the project at this
checkout's commit with the ``space`` extra (``bla_eval``, ``bla_space``, ``bla_metric`` and their
dependencies) instead of a copy of the packages. ``--push`` uploads them in one commit and sets
the Space variable ``BLA_DATASET``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from bla_eval.cli_common import add_field_options, option

from bla_metric import hub_ids
from builders import deploy

COMMAND = "python -m builders space"
SPACE_SOURCE = deploy.CHECKOUT / "space"
EXTRA = "space"


def requirements_text(requirement: str) -> str:
    """The Space's ``requirements.txt``: the project, pinned, with the Space's extra."""
    return (
        "# The BLA project with the dependencies of its Space (engine, analyses, Gradio layer),\n"
        "# pinned to the commit it was deployed from; gradio itself comes from sdk_version in\n"
        "# README.md.\n"
        f"{requirement}\n"
    )


def space_files(requirement: str, dataset: str) -> dict[str, bytes]:
    """Path in the Space repo -> content."""
    card = (SPACE_SOURCE / "README.md").read_text(encoding="utf-8")
    card = deploy.card_with(
        card,
        sdk="gradio",
        sdk_version=deploy.gradio_version(),
        app_file="app.py",
        datasets=[dataset],
    )
    return {
        "app.py": (SPACE_SOURCE / "app.py").read_bytes(),
        "README.md": card.encode(),
        "requirements.txt": requirements_text(requirement).encode(),
    }


def _space(args: argparse.Namespace) -> int:
    requirement = args.requirement or deploy.project_requirement(EXTRA)
    deployment = deploy.Deployment(
        command=COMMAND,
        files=space_files(requirement, args.dataset),
        message=f"Deploy the BLA Space ({requirement.rsplit('@', 1)[-1].strip()})",
        variables={"BLA_DATASET": args.dataset},
    )
    return deploy.run(args, deployment)


@dataclass(frozen=True, kw_only=True)
class SpaceOptions(deploy.DeployOptions):
    """The options of ``python -m builders space``."""

    dataset: str = option(
        hub_ids.DATASET,
        "Hub dataset the Space scores on: the card's datasets entry and the Space variable "
        "BLA_DATASET",
    )
    requirement: str | None = option(
        help="the requirement line that installs the project (default: "
        f"'{deploy.distribution()}[{EXTRA}] @ git+<origin over https>@<HEAD commit>'; refused "
        "when the packaged files have uncommitted changes)"
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``space``: write the Space repo folder; ``--dry-run`` / ``--push`` to a Space."""
    p = sub.add_parser(
        "space", help="assemble the BLA Space (app, card, pinned requirements) and push it"
    )
    add_field_options(p, SpaceOptions)
    p.set_defaults(func=_space)
