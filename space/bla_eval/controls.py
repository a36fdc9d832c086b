"""Image-versus-prior controls (``--control``): every item scored a second time against a control
image, in the item layer, so every model kind gets them alike.

- ``blank``: an image of the original's size filled with its mean colour (nothing to see);
- ``shuffled``: another datapoint's images of the same task (a seeded choice that never shows a
  datapoint any of its own images; a datapoint of several images, as in Winoground, gets all of
  another's; they are that datapoint's real images, so each is decoded and encoded once).

A model that scores as well against the control as against the real image answered from language
priors; ``results.json`` gives the image gain (``bla_metric.stats.robustness.image_gain``).
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
    """For each item (by position), another item of the same task with as many images and none
    of its own: a seeded shuffle of each task, the partner of an item the first after it in that
    cycle that qualifies (a ValueError names the first item with no such partner). The same
    items and seed give the same pairs."""
    rng = random.Random(seed)  # noqa: S311 (a reproducible choice, not a secret)
    by_task: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        by_task.setdefault(item.task, []).append(index)
    partners: dict[int, Item] = {}
    for members in by_task.values():
        order = list(members)
        rng.shuffle(order)
        for position, index in enumerate(order):
            own = items[index]
            cycle = (items[order[(position + step) % len(order)]] for step in range(1, len(order)))
            partner = next((other for other in cycle if _can_stand_in(other, own)), None)
            if partner is None:
                raise ValueError(
                    f"control shuffled: {own.task} item {own.id} has no other datapoint with "
                    f"{len(own.images)} image(s) of its own to show instead (too few datapoints)"
                )
            partners[index] = partner
    return partners


def _can_stand_in(other: Item, item: Item) -> bool:
    """Whether ``other``'s images can replace ``item``'s: as many, and none of them its own."""
    keys = {ref.key for ref in item.images}
    return len(other.images) == len(item.images) and not keys & {r.key for r in other.images}


def control_items(items: Sequence[Item], control: str, seed: int = 0) -> list[Item]:
    """The control twin of each item (same task, id, captions and labels; other images)."""
    check_control(control)
    if control == BLANK:
        return [replace(item, images=tuple(blank_ref(r) for r in item.images)) for item in items]
    partners = shuffled_partners(items, seed)
    return [replace(item, images=partners[i].images) for i, item in enumerate(items)]
