"""Image-versus-prior controls (``--control``): every item scored a second time against a control
image, in the item layer, so every model kind gets them alike.

- ``blank``: an image of the original's size filled with its mean colour (nothing to see);
- ``shuffled``: another datapoint's image of the same task (a seeded choice, never the datapoint's
  own image; the image is the other datapoint's real one, so it is decoded and encoded once).

A model that scores as well against the control as against the real image answered from language
priors; ``results.json`` gives the image gain (``bla_metric.robustness.image_gain``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from .items import BLANK_OF, ImageRef, Item

BLANK = "blank"
SHUFFLED = "shuffled"
CONTROLS = (BLANK, SHUFFLED)
"""The values of ``--control``."""


def check_control(control: str | None) -> None:
    """A ValueError names an unknown control and the choices."""
    if control is not None and control not in CONTROLS:
        raise ValueError(f"unknown control {control!r}: use one of {', '.join(CONTROLS)}")


def blank_ref(ref: ImageRef) -> ImageRef:
    """The blank control of one image: decoded as the original's size and mean colour."""
    return ImageRef(f"{BLANK}:{ref.key}", {BLANK_OF: ref.source, "key": ref.key})


def shuffled_partners(items: Sequence[Item], seed: int) -> dict[int, Item]:
    """For each item (by position), another item of the same task whose first image differs
    from its own: a seeded random permutation redrawn where it pairs an item with its own
    image (a ValueError names a task with fewer than two distinct images). The same items and
    seed give the same pairs; the item after each one in a seeded shuffle of its task that
    shows another image is its partner."""
    rng = random.Random(seed)  # noqa: S311 (a reproducible choice, not a secret)
    by_task: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        by_task.setdefault(item.task, []).append(index)
    partners: dict[int, Item] = {}
    for task, members in by_task.items():
        keys = [items[i].images[0].key for i in members]
        if len(set(keys)) < 2:
            raise ValueError(
                f"control shuffled: task {task} has fewer than two distinct images to shuffle"
            )
        order = list(members)
        rng.shuffle(order)
        for position, index in enumerate(order):
            # the next datapoint of the shuffled cycle whose image is another
            for step in range(1, len(order)):
                other = order[(position + step) % len(order)]
                if items[other].images[0].key != items[index].images[0].key:
                    partners[index] = items[other]
                    break
    return partners


def control_items(items: Sequence[Item], control: str, seed: int = 0) -> list[Item]:
    """The control twin of each item (same task, id, captions and labels; other images)."""
    check_control(control)
    if control == BLANK:
        return [replace(item, images=tuple(blank_ref(r) for r in item.images)) for item in items]
    partners = shuffled_partners(items, seed)
    return [
        replace(item, images=(partners[i].images[0], *item.images[1:]))
        for i, item in enumerate(items)
    ]
