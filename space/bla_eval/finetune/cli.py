"""``bla-finetune``: fine-tune an ITM or contrastive model on a BLA learning config (argument
parsing and error reporting only)."""

from __future__ import annotations

import argparse
import sys

from bla_metric.tasks import TASKS

from .. import tables
from ..cli_common import OneLineParser, bounded_int, run_guarded
from ..config import MAX_LIMIT
from ..tables import Table
from .limits import MAX_BATCH_SIZE, MAX_EPOCHS, MAX_SEED, MAX_SEEDS


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="bla-finetune",
        description="Fine-tune a model on BLA's learning splits (paper §6): ITM heads with "
        "cross-entropy, dual encoders with the false sentence as hard negative. Keeps the epoch "
        "with the best validation accuracy and scores the learning test splits of every task "
        "before and after (SD: the same task, DD: the others).",
    )
    p.add_argument("--model", required=True, help="Hub id, local folder or open_clip name")
    p.add_argument("--task", required=True, choices=list(TASKS), help="learning config to train on")
    p.add_argument("--output", required=True, help="folder for the checkpoint and finetune.json")
    p.add_argument(
        "--seeds",
        type=bounded_int(1, MAX_SEEDS),
        default=1,
        help=f"repeat with N seeds (mean and std; at most {MAX_SEEDS})",
    )
    p.add_argument(
        "--seed",
        type=bounded_int(0, MAX_SEED),
        default=0,
        help=f"first seed (default 0; seed + seeds - 1 at most {MAX_SEED})",
    )
    p.add_argument("--lr", type=float, default=1e-5, help="learning rate (default 1e-5)")
    p.add_argument(
        "--batch-size",
        type=bounded_int(1, MAX_BATCH_SIZE),
        default=16,
        help=f"training images per step (default 16, at most {MAX_BATCH_SIZE})",
    )
    p.add_argument(
        "--epochs",
        type=bounded_int(1, MAX_EPOCHS),
        default=10,
        help=f"maximum epochs (default 10, at most {MAX_EPOCHS})",
    )
    p.add_argument(
        "--data",
        default=None,
        help="Hub dataset id or local dataset folder (default, as bla-eval's: $BLA_DATASET, "
        "else ./bla_dataset if built there, else the Hub id)",
    )
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N, mps, xpu or xpu:N")
    p.add_argument(
        "--eval-tasks",
        nargs="+",
        choices=list(TASKS),
        default=None,
        help="test splits to score (default: every task)",
    )
    p.add_argument(
        "--limit",
        type=bounded_int(1, MAX_LIMIT),
        default=None,
        help="score only the first N validation / test datapoints (quick runs; at most "
        f"{MAX_LIMIT})",
    )
    p.add_argument(
        "--regions",
        default=None,
        help="region-itm models (LXMERT, VOLTA's ViLBERT and LXMERT): the region features, as "
        "bla-eval --regions (a .tsv in the authors' layout, a region store, or the detector)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier bla-finetune output in --output (nothing else is replaced)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``bla-finetune``."""
    args = build_parser().parse_args(argv)

    def run() -> int:
        from .train import FinetuneConfig, finetune

        config = FinetuneConfig(
            model=args.model,
            task=args.task,
            output=args.output,
            data=args.data,
            seeds=args.seeds,
            seed=args.seed,
            learning_rate=args.lr,
            batch_size=args.batch_size,
            epochs=args.epochs,
            device=args.device,
            eval_tasks=tuple(args.eval_tasks or ()),
            limit=args.limit,
            overwrite=args.overwrite,
            regions=args.regions,
        )
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
