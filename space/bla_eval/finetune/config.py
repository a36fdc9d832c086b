"""The settings of one ``bla-finetune`` call (torch-free: the parser reads them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FinetuneConfig:
    """Settings of one ``bla-finetune`` call (defaults: the paper's, Appendix D)."""

    model: str
    task: str
    output: str
    data: str | None = None
    seeds: int = 1
    seed: int = 0
    learning_rate: float = 1e-5
    batch_size: int = 16
    """Training rows (images, each with its true and false sentence) per step."""
    epochs: int = 10
    device: str = "auto"
    eval_tasks: tuple[str, ...] = ()
    """Test splits scored before and after training (default: every task: SD + DD)."""
    limit: int | None = None
    """Score only the first N validation and test datapoints (quick runs; training uses all)."""
    overwrite: bool = False
    regions: str | None = None
    """The region features of a model that reads them (``bla-eval --regions``)."""
