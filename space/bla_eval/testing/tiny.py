"""``python -m bla_eval.testing.tiny --out DIR``: a tiny random-weight model of a real architecture
saved into ``DIR``, for an offline first try of ``bla-eval --model DIR`` and of the Space (a local
folder with ``BLA_ALLOW_LOCAL_MODELS=1``).

Its weights are random, so its scores are noise around chance: it shows that the set-up works
(dataset, engine, report, Space) without downloading a model, not how a model does.
``--architecture`` names any row of the architecture matrix (``bla_eval.testing.architectures``,
``docs/models.md``); ``--seed`` seeds torch before the builder draws the weights.
"""

from __future__ import annotations

import sys
from dataclasses import MISSING, dataclass
from pathlib import Path

from ..cli_common import OneLineParser, command_parser, option, run_guarded
from ..outputs import staged

PROG = "python -m bla_eval.testing.tiny"
SENTENCES = (
    "the woman feeds the man",
    "the man is fed by the woman",
    "the dog and the cat sleep on the sofa",
    "the girl who holds the umbrella walks on the street",
)
"""A few sentences of BLA's kind: the tokenizer is byte-level, so any sentence has tokens."""
DEFAULT = "llava"


def rows() -> dict:
    """The architecture matrix's rows (imported on use: it imports every builder module)."""
    from .architectures import ARCHITECTURES

    return ARCHITECTURES


def build(out: Path, architecture: str = DEFAULT, seed: int = 0) -> Path:
    """Save the tiny ``architecture`` (a row of the matrix) into ``out`` (new, empty or an
    earlier output of this command) with torch seeded by ``seed``; returns ``out``."""
    import torch

    from ..protocols.templates import TEMPLATES

    row = rows()[architecture]
    texts = [*SENTENCES, *(t.plain(s) for t in TEMPLATES.values() for s in SENTENCES)]
    torch.manual_seed(seed)
    with staged(out, command=PROG) as stage:
        row.build(stage, texts)
    return out


@dataclass(frozen=True, kw_only=True)
class TinyOptions:
    """The options of ``python -m bla_eval.testing.tiny``."""

    out: Path = option(MISSING, "folder to save the model into", type=Path)
    architecture: str = option(
        DEFAULT,
        "a row of docs/models.md's architecture matrix (clip: a dual encoder)",
        choices=lambda: tuple(rows()),
        metavar="NAME",
    )
    seed: int = option(0, "seed of the random weights", type=int)


def build_parser() -> OneLineParser:
    return command_parser(PROG, __doc__.split("\n\n")[0], TinyOptions)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bla_eval.testing.tiny``."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)

    def run() -> int:
        row = rows()[args.architecture]
        build(args.out, args.architecture, args.seed)
        flags = f" (bla-eval needs {' '.join(row.flags)})" if row.flags else ""
        print(
            f"wrote a tiny random-weight {args.architecture} model to {args.out}: kind "
            f"{row.kind}{flags}"
        )
        if row.upstream_error:
            print(f"note: transformers itself does not run it ({row.upstream_error})")
        return 0

    return run_guarded(run, args.debug, PROG)


if __name__ == "__main__":
    sys.exit(main())
