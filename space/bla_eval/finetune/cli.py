"""``bla-finetune``: fine-tune an ITM or contrastive model on a BLA learning config (argument
parsing and error reporting only)."""

from __future__ import annotations

import argparse
import sys

from .. import tables
from ..cli_common import command_parser, field_values, run_guarded
from ..tables import Table
from .config import FinetuneConfig


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``bla-finetune``: one option per ``FinetuneConfig`` field, and
    ``--debug``."""
    return command_parser(
        "bla-finetune",
        "Fine-tune a model on BLA's learning splits (paper §6): ITM heads with "
        "cross-entropy, dual encoders with the false sentence as hard negative. Keeps the epoch "
        "with the best validation accuracy and scores the learning test splits of every task "
        "before and after (SD: the same task, DD: the others).",
        FinetuneConfig,
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``bla-finetune``."""
    args = build_parser().parse_args(argv)

    def run() -> int:
        from .train import finetune

        config = FinetuneConfig(**field_values(FinetuneConfig, args))
        document = finetune(config, progress=lambda line: print(line, file=sys.stderr))
        print(summary_table(document))
        return 0

    return run_guarded(run, args.debug, "bla-finetune")


SUMMARY_COLUMNS = (
    "test split", "setting", "images seen in training", "metric", "zero-shot", "fine-tuned",
)  # fmt: skip
"""The columns of ``finetune.json``'s summary table."""


def summary_table(document: dict) -> str:
    """Markdown: per test split, zero-shot and fine-tuned accuracy / precisions (%, mean ± std)."""
    lines = [
        f"fine-tuned {document['model']} on {document['learning_config']} "
        f"(kept epochs: {', '.join(str(r['kept_epoch']) for r in document['runs'])})",
        "",
    ]
    rows = []
    first = document["runs"][0]["finetuned"]
    for config, entry in document["summary"].items():
        for subset in ("all", "unseen"):
            if subset not in entry.get("finetuned", {}):
                continue
            for metric, fine in entry["finetuned"][subset].items():
                zero = entry["zero_shot"][subset][metric]
                label = config if subset == "all" else f"{config} (unseen images)"
                setting, seen = first[config]["setting"], first[config]["seen_in_training"]
                rows.append([label, setting, seen, metric, _pm(zero), _pm(fine)])
    lines.append(tables.markdown(Table("", SUMMARY_COLUMNS, rows), right=(2, 4, 5)))
    return "\n".join(lines)


def _pm(value: dict) -> str:
    text = f"{100 * value['mean']:.2f}"
    return text + (f" ± {100 * value['std']:.2f}" if value["std"] else "")


if __name__ == "__main__":
    sys.exit(main())
