"""The demonstration choice of the paper's in-context protocols (§6), sentence by sentence.

A protocol turns each target sentence of a datapoint into its demonstrations: ``(sentence,
"yes"|"no")`` turns shown before the target, in order.

- same task (SD): one true and one false sentence of the *same* datapoint that differ from the
  target as the paper says: the other voice for active-passive (target TA or FA -> TP and FP;
  target TP or FP -> TA and FA), the other person for coordination and relative clauses (target
  TP1 or FP1 -> TP2 and FP2, and the other way round). So a demonstration is never the target.
- cross task (DD, coordination <-> relative clauses, as in the paper): one true and one false
  sentence of the *other* construction about the same image, from that construction's full
  config; as in the authors' script, the sentences of the target's person.

The caption type names the truth and the group of a sentence: ``TA`` = true, voice ``A``;
``FP2`` = false, person ``P2`` (first letter T/F, the rest the group).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from bla_metric.tasks import TASKS, dd_pairs, get_task

from ..queries import Demonstrations
from .templates import ANSWERS

ORDERS = ("true-first", "shuffled")
"""Order of the two demonstrations: the true one first (the paper's example), or shuffled per
target sentence with a recorded seed (the authors' script shuffled without a seed)."""


def check_order(order: str) -> str:
    """``order`` when known, else a ValueError naming it."""
    if order not in ORDERS:
        raise ValueError(f"unknown demonstration order {order!r}: use one of {', '.join(ORDERS)}")
    return order


def type_group(caption_type: str) -> str:
    """The voice or person of a caption type: ``TA`` -> ``A``, ``FP2`` -> ``P2``."""
    if len(caption_type) < 2 or caption_type[0] not in "TF":
        raise ValueError(f"caption type {caption_type!r} does not start with T or F")
    return caption_type[1:]


def flat_labels(labels: Sequence[Any]) -> list[int]:
    """Labels as one list (an engine Item keeps one row per image)."""
    if labels and isinstance(labels[0], Sequence):
        return [int(x) for x in labels[0]]
    return [int(x) for x in labels]


def _pick(
    captions: Sequence[str],
    caption_types: Sequence[str],
    labels: Sequence[int],
    keep: Callable[[str], bool],
    where: str,
) -> tuple[str, str]:
    """The one true and the one false caption whose type satisfies ``keep``."""
    true = [c for c, t, y in zip(captions, caption_types, labels, strict=True) if y and keep(t)]
    false = [
        c for c, t, y in zip(captions, caption_types, labels, strict=True) if not y and keep(t)
    ]
    if len(true) != 1 or len(false) != 1:
        raise ValueError(
            f"{where}: expected one true and one false demonstration, found "
            f"{len(true)} true and {len(false)} false among {list(caption_types)}"
        )
    return true[0], false[0]


def arrange(
    true: str, false: str, order: str = "true-first", seed: int = 0, key: str = ""
) -> Demonstrations:
    """The two demonstrations as turns; ``shuffled`` draws the order from ``(seed, key)``, so the
    same target gets the same order in every run."""
    turns = ((true, ANSWERS[1]), (false, ANSWERS[0]))
    if check_order(order) == "shuffled" and random.Random(f"{seed}:{key}").random() < 0.5:
        turns = turns[::-1]
    return turns


def sd_demonstrations(
    captions: Sequence[str],
    caption_types: Sequence[str],
    labels: Sequence[Any],
    index: int,
    order: str = "true-first",
    seed: int = 0,
    key: str = "",
) -> Demonstrations:
    """SD demonstrations of ``captions[index]``: the true and the false sentence of the other
    voice or person of the same datapoint."""
    group = type_group(caption_types[index])
    true, false = _pick(
        captions,
        caption_types,
        flat_labels(labels),
        lambda t: type_group(t) != group,
        f"target {caption_types[index]} of {key or 'a datapoint'}",
    )
    return arrange(true, false, order, seed, f"{key}:{index}")


def dd_demonstrations(
    target_type: str,
    partner_captions: Sequence[str],
    partner_types: Sequence[str],
    partner_labels: Sequence[Any],
    order: str = "true-first",
    seed: int = 0,
    key: str = "",
) -> Demonstrations:
    """DD demonstrations of a target of type ``target_type``: the partner datapoint's (other
    construction, same image) true and false sentence of the target's person."""
    group = type_group(target_type)
    true, false = _pick(
        partner_captions,
        partner_types,
        flat_labels(partner_labels),
        lambda t: type_group(t) == group,
        f"partner of {key or 'a datapoint'} for target {target_type}",
    )
    return arrange(true, false, order, seed, f"{key}:{target_type}")


def image_key(point: Any) -> str:
    """The image key of an engine ``Item`` (its first image) or a ``Datapoint``."""
    images = getattr(point, "images", None)
    if images:
        return images[0].key
    return point.image_key


def partner_index(points: Iterable[Any]) -> dict[str, Any]:
    """Datapoints of the other construction by image key (DD looks its partner up here)."""
    return {image_key(p): p for p in points}


def partner_config(config: str) -> str:
    """The DD partner config of a task config or learning config (``Task.dd_partner``;
    ValueError when it has none)."""
    try:
        partner = get_task(config).dd_partner
    except ValueError:
        partner = ""
    if not partner:
        with_partner = [t.config for t in TASKS.values() if t.dd_partner]
        raise ValueError(
            f"protocol icl-dd has no partner construction for {config!r}: it runs on "
            f"{' and '.join(with_partner)} only (paper §6)"
        )
    return partner


def pairs_text(name: Callable[[Any], str]) -> str:
    """The DD partner constructions as ``a <-> b`` (``name`` picks the config or abbreviation)."""
    return ", ".join(f"{name(a)} <-> {name(b)}" for a, b in dd_pairs())
