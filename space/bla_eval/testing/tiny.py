"""``python -m bla_eval.testing.tiny --out DIR``: a tiny random-weight model of a real architecture
saved into ``DIR``, for an offline first try of ``bla-eval --model DIR`` and of the Space (a local
folder with ``BLA_ALLOW_LOCAL_MODELS=1``).

Its weights are random, so its scores are noise around chance: it shows that the set-up works
(dataset, engine, report, Space) without downloading a model, not how a model does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from ..cli_common import OneLineParser, run_guarded
from ..outputs import staged

PROG = "python -m bla_eval.testing.tiny"
SENTENCES = (
    "the woman feeds the man",
    "the man is fed by the woman",
    "the dog and the cat sleep on the sofa",
    "the girl who holds the umbrella walks on the street",
)
"""A few sentences of BLA's kind: the tokenizer is byte-level, so any sentence has tokens."""


def _llava(out: Path, texts: list[str]) -> None:
    from .generative import build_llava_chat

    build_llava_chat(out, texts)


def _clip(out: Path, texts: list[str]) -> None:
    from .dual_encoders import build_clip

    build_clip(out, texts)


ARCHITECTURES: dict[str, tuple[Callable[[Path, list[str]], None], str]] = {
    "llava": (_llava, "LLaVA with a chat template (kind generative: a vision-language model)"),
    "clip": (_clip, "CLIP (kind contrastive: a dual encoder)"),
}
"""``--architecture`` -> (its builder, its help line)."""


def build(out: Path, architecture: str = "llava", seed: int = 0) -> Path:
    """Save the tiny ``architecture`` into ``out`` (new, empty or an earlier output of this
    command) with torch seeded by ``seed``; returns ``out``."""
    import torch

    from ..protocols.templates import TEMPLATES

    builder = ARCHITECTURES[architecture][0]
    texts = [*SENTENCES, *(t.plain(s) for t in TEMPLATES.values() for s in SENTENCES)]
    torch.manual_seed(seed)
    with staged(out, command=PROG) as stage:
        builder(stage, texts)
    return out


def build_parser() -> OneLineParser:
    p = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder to save the model into")
    p.add_argument(
        "--architecture",
        choices=list(ARCHITECTURES),
        default="llava",
        help="; ".join(f"{name}: {line}" for name, (_, line) in ARCHITECTURES.items()),
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    p.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bla_eval.testing.tiny``."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)

    def run() -> int:
        build(args.out, args.architecture, args.seed)
        print(f"wrote a tiny random-weight {args.architecture} model to {args.out}")
        return 0

    return run_guarded(run, args.debug, PROG)


if __name__ == "__main__":
    sys.exit(main())
