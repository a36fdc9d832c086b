"""``python -m builders metric-space``: the metric's Space repo folder, and its push to the Hub.

``evaluate.load("ORG/NAME")`` downloads ``NAME.py`` from the Space ``ORG/NAME`` and then each
module that script imports relatively, from the same repo; it does not follow the imports of
those modules. So the folder holds ``NAME.py`` (``bla_metric/bla.py``), the modules it imports
with ``from .module import ...``, and is refused when one of them imports a module the script
does not; plus ``app.py`` (the widget), the card and ``requirements.txt``.
``evaluate.load(folder)`` loads the folder when its name is ``NAME``.
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass
from pathlib import Path

from bla_eval.cli_common import add_field_options, option

from builders import deploy

COMMAND = "python -m builders metric-space"
METRIC_SOURCE = deploy.CHECKOUT / "bla_metric"
SCRIPT = "bla.py"
DEFAULT_NAME = "bla"
MODULE_LINE = 'MODULE_PATH = Path(__file__).resolve().with_name("bla.py")'
"""The line of ``app.py`` that names the script (rewritten to ``NAME.py``)."""


def script_modules(script: Path) -> list[str]:
    """The modules evaluate copies beside ``script``: its relative imports, checked to be closed
    (a module they import relatively is one the script imports too)."""
    modules = sorted(set(relative_imports(script)))
    for module in modules:
        missing = sorted(set(relative_imports(script.with_name(f"{module}.py"))) - set(modules))
        if missing:
            raise ValueError(
                f"{module}.py imports {', '.join(missing)}, which {script.name} does not import: "
                f"evaluate copies only the modules {script.name} imports, so import them there"
            )
    return modules


def relative_imports(path: Path) -> list[str]:
    """The modules ``path`` imports with ``from .module import ...``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
    ]


def metric_files(name: str) -> dict[str, bytes]:
    """Path in the metric Space repo -> content."""
    script = METRIC_SOURCE / SCRIPT
    files = {f"{name}.py": script.read_bytes()}
    for module in script_modules(script):
        files[f"{module}.py"] = (METRIC_SOURCE / f"{module}.py").read_bytes()
    app = (METRIC_SOURCE / "app.py").read_text(encoding="utf-8")
    if MODULE_LINE not in app:
        raise ValueError(f"{METRIC_SOURCE / 'app.py'} no longer has the line {MODULE_LINE!r}")
    files["app.py"] = app.replace(MODULE_LINE, MODULE_LINE.replace("bla.py", f"{name}.py")).encode()
    card = (METRIC_SOURCE / "README.md").read_text(encoding="utf-8")
    card = deploy.card_with(card, sdk="gradio", sdk_version=deploy.gradio_version())
    files["README.md"] = card.encode()
    files["requirements.txt"] = (METRIC_SOURCE / "requirements.txt").read_bytes()
    return files


def _metric_space(args: argparse.Namespace) -> int:
    name = args.repo_id.split("/")[-1] if args.repo_id else args.name
    if args.repo_id and args.name not in (DEFAULT_NAME, name):
        raise ValueError(f"--name {args.name} differs from the Space's name in --repo-id {name}")
    if not name.isidentifier():
        raise ValueError(f"metric name {name!r} must be a Python identifier (it names {name}.py)")
    deployment = deploy.Deployment(
        command=COMMAND, files=metric_files(name), message=f"Deploy the BLA metric {name}"
    )
    return deploy.run(args, deployment)


@dataclass(frozen=True, kw_only=True)
class MetricSpaceOptions(deploy.DeployOptions):
    """The options of ``python -m builders metric-space``."""

    name: str = option(
        DEFAULT_NAME,
        "module name: evaluate.load('ORG/NAME') reads NAME.py (without --name: the name of "
        "--repo-id, else bla)",
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``metric-space``: write the metric's Space folder; ``--dry-run`` / ``--push``."""
    p = sub.add_parser(
        "metric-space",
        help="assemble the metric's Space (evaluate module, widget, card) and push it",
    )
    add_field_options(p, MetricSpaceOptions)
    p.set_defaults(func=_metric_space)
