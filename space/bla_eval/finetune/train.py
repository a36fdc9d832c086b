"""Fine-tuning on a BLA learning config (paper §6, Appendix D) and evaluation SD / DD.

One run: load the model, score the learning test splits of every task before training (the
zero-shot reference on the same datapoints), train on ``<task>_learning/train`` (each row one
image with one true and one false sentence), validate on ``<task>_learning/validation`` after
every epoch, keep the epoch with the best validation accuracy (the earliest on ties), save it,
and score the test splits again: SD = the same task, DD = the other tasks, where DD also reports
how many of its test images were training images and its metrics without them.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from bla_metric.learning import LEARNING_METRICS, pair_accuracy
from bla_metric.tasks import LEARNING_SUFFIX, TASKS, get_task

from ..cli_common import check_range
from ..config import MAX_LIMIT, RunConfig
from ..devices import check_device
from ..items import Item
from ..locking import output_lock
from ..outputs import FINETUNE_FILE, check_replaceable, owner, staged
from ..scorers import detect_kind
from ..scorers.local import resolve_device
from ..scoring import score_items
from .config import FinetuneConfig
from .limits import MAX_BATCH_SIZE, MAX_EPOCHS, MAX_SEED, MAX_SEEDS
from .models import Trainable, load_trainable

FINETUNE_COMMAND = "bla-finetune"
"""The command named in the marker of a fine-tuning output (``--overwrite`` replaces only these)."""
METRICS = LEARNING_METRICS
"""The binary metrics of the paper's learning tables (Table 3, Table 4, Figure 3)."""


@dataclass
class Row:
    """One datapoint of a learning split and its image, prepared once as the model's scorer
    takes it (``Trainable.prepare``)."""

    item: Item
    image: Any
    id: str
    image_key: str
    captions: list[str]
    labels: list[int]
    caption_types: list[str]


@dataclass
class SeedResult:
    seed: int
    log: list[dict[str, float]] = field(default_factory=list)
    kept_epoch: int = 0
    zero_shot: dict[str, Any] = field(default_factory=dict)
    finetuned: dict[str, Any] = field(default_factory=dict)


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def read_rows(
    model: Trainable, data: str, config: str, split: str, limit: int | None = None
) -> list[Row]:
    """Rows of one learning split (the first ``limit``), read by the BLA benchmark spec, with
    their images prepared once."""
    from ..benchmarks.bla import BENCHMARK

    rows = []
    for item in BENCHMARK.read_items(data, config, split, limit):
        if split == "train":
            check_training_row(data, config, item.id, list(item.labels[0]))
        ref = item.images[0]
        rows.append(
            Row(
                item=item,
                image=model.prepare(item, ref),
                id=item.id,
                image_key=ref.key,
                captions=list(item.captions),
                labels=list(item.labels[0]),
                caption_types=list(item.caption_types),
            )
        )
    return rows


def check_training_row(data: str, config: str, item: str, labels: list[int]) -> None:
    """A training row pairs its image with one true and one false sentence (the loss contrasts
    the two); any other row is a ValueError naming the dataset, config, split and record."""
    if sorted(labels) != [0, 1]:
        raise ValueError(
            f"dataset {data} {config}/train record {item!r} has labels {labels}: a training "
            "row needs one true (1) and one false (0) sentence"
        )


def score_rows(model: Trainable, rows: Sequence[Row]) -> list[list[float]]:
    """Scores of every sentence of every row, as ``bla-eval`` scores the rows' items (the model
    in eval mode): its scorer of the model's kind in its batches (``--images-per-batch`` and
    ``--batch-size`` at their defaults), nothing kept from an earlier call (the weights
    change)."""
    model.model.eval()
    model.scorer.forget()
    prepared = {r.image_key: r.image for r in rows}
    found: dict[int, list[float]] = {}

    def keep(item: Item, scores: list[list[float]], answers: Any, terms: Any) -> None:
        found[id(item)] = scores[0]

    score_items(
        model.scorer,
        [r.item for r in rows],
        keep,
        RunConfig.images_per_batch,
        prepare=lambda item, ref: prepared[ref.key],
    )
    return [found[id(r.item)] for r in rows]


def metrics(model: Trainable, rows: Sequence[Row], scores: Sequence[Sequence[float]]) -> dict:
    """The binary (the paper's view: threshold 0.5 for ITM, two highest for dual encoders) and
    ranking views of ``rows``, summarised by the BLA benchmark spec."""
    from ..benchmarks.bla import BENCHMARK

    if not rows:
        return {"n": 0}
    records = [
        {"scores": list(s), "labels": r.labels, "caption_types": r.caption_types}
        for r, s in zip(rows, scores, strict=True)
    ]
    summary = BENCHMARK.summarise(records, model.probabilistic)
    return {key: summary[key] for key in ("n", "binary", "ranking")}


def evaluate_tests(
    model: Trainable, tests: dict[str, list[Row]], train_images: set[str], sd_config: str
) -> dict[str, Any]:
    """Metrics of every test split; DD splits also without the images seen in training. The
    splits are scored together, as ``bla-eval --tasks`` (the same configs, in the same order)
    scores them."""
    every = score_rows(model, [r for rows in tests.values() for r in rows])
    out: dict[str, Any] = {}
    for config, rows in tests.items():
        scores, every = every[: len(rows)], every[len(rows) :]
        entry: dict[str, Any] = {
            "setting": "SD" if config == sd_config else "DD",
            "all": metrics(model, rows, scores),
        }
        seen = [i for i, r in enumerate(rows) if r.image_key in train_images]
        entry["seen_in_training"] = len(seen)
        if config != sd_config:
            keep = [i for i in range(len(rows)) if i not in set(seen)]
            entry["unseen"] = metrics(model, [rows[i] for i in keep], [scores[i] for i in keep])
        out[config] = entry
    return out


def train_one_seed(
    config: FinetuneConfig,
    seed: int,
    out: Path,
    progress: Callable[[str], None] | None = None,
) -> SeedResult:
    """Fine-tune with one seed; the kept checkpoint is saved into ``out``."""
    set_seed(seed)
    device = resolve_device(config.device)
    model = load_trainable(config.model, device, regions=open_regions_of(config))
    data = config.data or _default_data()
    task = get_task(config.task)
    learning = task.learning_config
    train = read_rows(model, data, learning, "train")
    validation = read_rows(model, data, learning, "validation", config.limit)
    eval_tasks = config.eval_tasks or tuple(TASKS)
    tests = {
        get_task(t).learning_config: read_rows(
            model, data, get_task(t).learning_config, "test", config.limit
        )
        for t in eval_tasks
    }
    train_images = {r.image_key for r in train}
    result = SeedResult(seed=seed)
    result.zero_shot = evaluate_tests(model, tests, train_images, learning)

    optimizer = torch.optim.AdamW(model.model.parameters(), lr=config.learning_rate)
    generator = torch.Generator().manual_seed(seed)
    best: tuple[float, int, dict[str, torch.Tensor]] | None = None
    bar = tqdm(
        range(1, config.epochs + 1), desc=f"fine-tuning {task.code} (seed {seed})", unit="epoch"
    )
    for epoch in bar:
        start = time.perf_counter()
        model.model.train()
        order = torch.randperm(len(train), generator=generator).tolist()
        losses = []
        for i in range(0, len(order), config.batch_size):
            batch = [train[j] for j in order[i : i + config.batch_size]]
            true = [_pick(r, 1) for r in batch]
            false = [_pick(r, 0) for r in batch]
            loss = model.loss([r.image for r in batch], true, false)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
        train_s = time.perf_counter() - start
        val_scores = score_rows(model, validation)
        val = metrics(model, validation, val_scores)["binary"]["accuracy"]
        train_scores = score_rows(model, train)
        train_acc = pair_accuracy(train_scores, [r.labels for r in train], model.probabilistic)
        entry = {
            "epoch": epoch,
            "loss": float(np.mean(losses)),
            "train_pair_accuracy": train_acc,
            "validation_accuracy": val,
            "train_s": train_s,
            "epoch_s": time.perf_counter() - start,
        }
        result.log.append(entry)
        bar.set_postfix(loss=f"{entry['loss']:.4f}", val_acc=f"{val:.4f}")
        if progress:
            progress(
                f"epoch {epoch}: loss {entry['loss']:.4f}, train pair accuracy {train_acc:.4f}, "
                f"validation accuracy {val:.4f}"
            )
        if best is None or val > best[0]:
            state = {k: v.detach().cpu().clone() for k, v in model.model.state_dict().items()}
            best = (val, epoch, state)
    assert best is not None
    result.kept_epoch = best[1]
    model.model.load_state_dict(best[2])
    model.model.eval()
    save_checkpoint(model, out, config.output)
    result.finetuned = evaluate_tests(model, tests, train_images, learning)
    return result


def save_checkpoint(model: Trainable, out: Path, output: str) -> None:
    """Save the kept checkpoint into ``out``; a library's own write error (safetensors reports
    a full disk as a SafetensorError) becomes an OSError naming ``output``."""
    try:
        model.save(out)
    except OSError as err:
        if err.filename is not None:
            raise
        raise OSError(err.errno, err.strerror or str(err), output) from err
    except Exception as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise OSError(f"cannot write the checkpoint into {output}: {first}") from err


def _pick(row: Row, label: int) -> str:
    """The training row's sentence with ``label`` (train rows have one true and one false)."""
    return row.captions[row.labels.index(label)]


def _default_data() -> str:
    """bla-eval's default BLA data: ``$BLA_DATASET``, else ``./bla_dataset``, else the Hub id."""
    from ..benchmarks.bla import default_data

    return default_data()


def _mean_std(values: Sequence[float]) -> dict[str, float]:
    mean = float(statistics.fmean(values))
    std = float(statistics.stdev(values)) if len(values) > 1 else 0.0
    return {"mean": mean, "std": std}


def summarise(results: Sequence[SeedResult]) -> dict[str, Any]:
    """Mean and standard deviation over seeds of the paper's metrics, per test split and view."""
    out: dict[str, Any] = {}
    for config in results[0].finetuned:
        entry: dict[str, Any] = {}
        for stage in ("zero_shot", "finetuned"):
            for subset in ("all", "unseen"):
                runs = [getattr(r, stage)[config].get(subset) for r in results]
                if runs[0] is None or runs[0].get("n", 0) == 0:
                    continue
                entry.setdefault(stage, {})[subset] = {
                    m: _mean_std([run["binary"][m] for run in runs]) for m in METRICS
                }
        out[config] = entry
    return out


def finetune(
    config: FinetuneConfig, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run ``config.seeds`` seeds; write the checkpoint(s) and ``finetune.json`` into
    ``config.output`` (a staging folder renamed at the end: nothing half-written)."""
    check(config)
    output = _output_check(config.overwrite)
    with (
        output_lock(Path(config.output), FINETUNE_COMMAND),
        staged(config.output, FINETUNE_COMMAND, check=output) as stage,
    ):
        seeds = [config.seed + k for k in range(config.seeds)]
        results = []
        for seed in seeds:
            target = stage if len(seeds) == 1 else stage / f"seed-{seed}"
            results.append(train_one_seed(config, seed, target, progress))
        document = {
            "model": config.model,
            "kind": detect_kind(config.model),
            "task": get_task(config.task).config,
            "learning_config": get_task(config.task).learning_config,
            "settings": asdict(config),
            "checkpoints": ["."] if len(seeds) == 1 else [f"seed-{s}" for s in seeds],
            "runs": [asdict(r) for r in results],
            "summary": summarise(results),
        }
        if config.regions is not None:
            from ..regions.source import regions_record

            document["regions"] = regions_record(config.regions)
        (stage / FINETUNE_FILE).write_text(json.dumps(document, indent=2), encoding="utf-8")
    return document


def open_regions_of(config: FinetuneConfig) -> Any:
    """The region source of ``--regions`` (None without it)."""
    if config.regions is None:
        return None
    from ..regions.source import open_regions

    return open_regions(config.regions)


def check(config: FinetuneConfig) -> None:
    """Refuse bad settings before any work, each error naming the bad value."""
    get_task(config.task)
    for t in config.eval_tasks:
        get_task(t)
    maxima = {"seeds": MAX_SEEDS, "batch_size": MAX_BATCH_SIZE, "epochs": MAX_EPOCHS}
    for name, high in maxima.items():
        check_range(name.replace("_", "-"), getattr(config, name), 1, high)
    if config.limit is not None:
        check_range("limit", config.limit, 1, MAX_LIMIT)
    check_range("seed", config.seed, 0, MAX_SEED - config.seeds + 1)
    check_device(config.device)
    if not (config.learning_rate > 0 and math.isfinite(config.learning_rate)):
        raise ValueError(f"learning rate must be a positive number, got {config.learning_rate}")
    _output_check(config.overwrite)(Path(config.output))


def _output_check(overwrite: bool) -> Callable[[Path], None]:
    """The check of ``--output``: new or empty, or (with ``overwrite``) an earlier output of
    bla-finetune; anything else is refused with what it holds."""

    def check_output(out: Path) -> None:
        marker = owner(out) if out.is_dir() and not out.is_symlink() else None
        if not overwrite and marker is not None and marker["command"] == FINETUNE_COMMAND:
            raise FileExistsError(
                f"output folder {str(out)!r} exists and is not empty (use --overwrite)"
            )
        check_replaceable(out, FINETUNE_COMMAND if overwrite else None)

    return check_output


__all__ = ["FinetuneConfig", "LEARNING_SUFFIX", "METRICS", "finetune"]
