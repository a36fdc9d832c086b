"""The settings of one ``bla-finetune`` call (torch-free: the parser reads them).

Each field is declared once, with its command-line help, flag, type and choices in its metadata
(``bla_eval.cli_common.option``); ``bla-finetune``'s parser is derived from them.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass

from bla_metric.tasks import TASKS

from ..cli_common import bounded_int, field_like, option
from ..config import MAX_LIMIT, RunConfig
from .limits import MAX_BATCH_SIZE, MAX_EPOCHS, MAX_SEED, MAX_SEEDS


@dataclass(frozen=True)
class FinetuneConfig:
    """Settings of one ``bla-finetune`` call (defaults: the paper's, Appendix D)."""

    model: str = option(MISSING, "Hub id, local folder or open_clip name")
    task: str = option(MISSING, "learning config to train on", choices=tuple(TASKS))
    output: str = option(MISSING, "folder for the checkpoint and finetune.json")
    seeds: int = option(
        1,
        f"repeat with N seeds (mean and std; at most {MAX_SEEDS})",
        type=bounded_int(1, MAX_SEEDS),
    )
    seed: int = option(
        0, f"first seed (seed + seeds - 1 at most {MAX_SEED})", type=bounded_int(0, MAX_SEED)
    )
    learning_rate: float = option(1e-5, "learning rate", flag="--lr")
    batch_size: int = option(
        16,
        "training rows (images, each with its true and false sentence) per step (at most "
        f"{MAX_BATCH_SIZE})",
        type=bounded_int(1, MAX_BATCH_SIZE),
    )
    epochs: int = option(
        10, f"maximum epochs (at most {MAX_EPOCHS})", type=bounded_int(1, MAX_EPOCHS)
    )
    data: str | None = field_like(
        RunConfig,
        "data",
        help="Hub dataset id or local dataset folder (default, as bla-eval's: $BLA_DATASET, "
        "else ./bla_dataset if built there, else the Hub id)",
    )
    device: str = field_like(RunConfig, "device")
    eval_tasks: tuple[str, ...] = option(
        (),
        "test splits scored before and after training (default: every task: SD + DD)",
        choices=tuple(TASKS),
        parsed=None,
    )
    limit: int | None = field_like(
        RunConfig,
        "limit",
        help="score only the first N validation and test datapoints (quick runs; training uses "
        f"all; at most {MAX_LIMIT})",
    )
    regions: str | None = field_like(
        RunConfig,
        "regions",
        help="region-itm models (LXMERT, VOLTA's ViLBERT and LXMERT): the region features, as "
        "bla-eval --regions (a .tsv in the authors' layout, a region store, or the detector)",
    )
    overwrite: bool = option(
        False, "replace an earlier bla-finetune output in --output (nothing else is replaced)"
    )
