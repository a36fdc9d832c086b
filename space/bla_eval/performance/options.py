"""The options several speed scripts share (``--data``, ``--threads``, those of the scripts that
time spread pairs) and their parser."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from ..cli_common import OneLineParser, add_field_options, option


def data_option(help: str = "dataset id or folder (default: the project's)") -> Any:
    """``--data``: the BLA dataset the script reads."""
    return option(help=help)


def threads_option(default: int | None = None) -> Any:
    """``--threads``: torch's CPU threads (None: torch's own choice)."""
    shown = "" if default is not None else " (default: torch's)"
    return option(default, "torch CPU threads" + shown, type=int)


def parse_options(options: type, module: str, description: str, argv: Any) -> argparse.Namespace:
    """``argv`` parsed by the options of the dataclass ``options`` (``python -m module``)."""
    parser = OneLineParser(prog=f"python -m {module}", description=description)
    add_field_options(parser, options)
    return parser.parse_args(argv)


@dataclass(frozen=True, kw_only=True)
class PairsOptions:
    """The options of a script that times a generative model on ``spread_pairs``' images."""

    data: str | None = data_option()
    images: int = option(8, "N images spread over the benchmark", type=int)
    model: str | None = option(help="a generative model (default: a random-weight one)")
    batch_size: int = option(8, "sentences or prompts per forward pass", type=int)
