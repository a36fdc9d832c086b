"""Score items: each distinct image decoded and encoded once, each distinct query once per image.

Decoding is prefetched in threads while the model works. An item is written as soon as every one
of its images has been scored (BLA items have one image; Winoground items two).
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from typing import Any

from tqdm.auto import tqdm

from .batching import chunks, prefetch_map
from .items import ImageHandle, ImageRef, Item, decode_image, encoded_image
from .queries import Query
from .scorers.base import Scorer, raised_by_engine, scoring_failure

OnScored = Callable[
    [Item, list[list[float]], "list[list[str]] | None", "dict[str, list[list[Any]]] | None"], None
]
Progress = Callable[[int, int, str], None]
QueryBuilder = Callable[[Item], Sequence[Query]]


LIBRARY_LOGGERS = ("transformers", "py.warnings")
"""The loggers whose messages a progress bar prints above itself (Python warnings included)."""


@contextmanager
def library_messages_above() -> Iterator[None]:
    """While the block runs, the libraries' log messages and warnings are written above the
    progress bars on their own lines (``tqdm.write``), not into a bar's line."""
    from tqdm.contrib.logging import logging_redirect_tqdm

    logging.captureWarnings(True)
    try:
        with logging_redirect_tqdm([logging.getLogger(name) for name in LIBRARY_LOGGERS]):
            yield
    finally:
        logging.captureWarnings(False)


CACHE_RENAME = r"`past_key_values`(/`cache_params`)? (is|are) deprecated"
"""transformers' notice that a model's ``past_key_values`` are now named ``cache`` (a Python
warning and a log message): about the engine's own calls, which pass and read the cache under the
name that every supported version of the library takes."""
CACHE_RENAME_LOGGERS = ("transformers.utils.generic", "transformers.utils.deprecation")


class _Without(logging.Filter):
    def __init__(self, pattern: str) -> None:
        super().__init__()
        self.pattern = re.compile(pattern)

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.pattern.search(record.getMessage())


@contextmanager
def engine_call() -> Iterator[None]:
    """While the engine calls a model: transformers' :data:`CACHE_RENAME` notice silenced (every
    other warning and message passes, and outside the block the notice is shown as before)."""
    quiet = _Without(CACHE_RENAME)
    loggers = [logging.getLogger(name) for name in CACHE_RENAME_LOGGERS]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=CACHE_RENAME, category=FutureWarning)
        for logger in loggers:
            logger.addFilter(quiet)
        try:
            yield
        finally:
            for logger in loggers:
                logger.removeFilter(quiet)


def zero_shot_queries(item: Item) -> list[Query]:
    """One plain query per caption."""
    return [Query(caption) for caption in item.captions]


def group_by_image(items: Sequence[Item]) -> dict[str, list[Item]]:
    """Items per distinct image key, in order of first appearance (across tasks)."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        for ref in item.images:
            members = groups.setdefault(ref.key, [])
            if not members or members[-1] is not item:
                members.append(item)
    return groups


def distinct(items: Sequence[Any]) -> list[Any]:
    """Items without repeats, first occurrence order."""
    return list(dict.fromkeys(items))


def prepared_image(scorer: Scorer, item: Item, ref: ImageRef) -> Any:
    """An image of ``item`` as ``scorer`` takes it: its ``prepare_image`` of the decoded image,
    of the bytes as stored (``wants_encoded``, e.g. sent on to an API) or of the image's handle
    (``wants_handle``: looked up by its key); None for a scorer that needs no images."""
    if not scorer.needs_images:
        return None
    if scorer.wants_handle:
        return scorer.prepare_image(ImageHandle(item, ref))
    if scorer.wants_encoded:
        return scorer.prepare_image(encoded_image(item, ref))
    return scorer.prepare_image(decode_image(item, ref))


def image_batches(
    groups: dict[str, list[Item]], images_per_batch: int, one_batch: bool = False
) -> list[Sequence[str]]:
    """The image keys of each call to the scorer: ``images_per_batch`` distinct images at a
    time in order of first appearance (all at once for a ``one_batch`` scorer). They depend on
    the run's items only, never on which of them are scored already."""
    per_call = max(len(groups), 1) if one_batch else images_per_batch
    return list(chunks(list(groups), per_call))


def score_items(
    scorer: Scorer,
    items: Sequence[Item],
    on_scored: OnScored,
    images_per_batch: int = 32,
    progress: Progress | None = None,
    queries: QueryBuilder = zero_shot_queries,
    pending: Sequence[Item] | None = None,
    kept: Callable[[Item], Sequence[Sequence[float]] | None] | None = None,
    prepare: Callable[[Item, ImageRef], Any] | None = None,
) -> None:
    """Score every (image, caption) pair of every item; ``on_scored(item, scores, answers,
    terms)`` once per item, with ``scores[i][j]`` for image i and caption j (``terms``: each
    number a score is made of, as a matrix per name, where the scorer keeps them; else None).

    ``pending`` (default: all of ``items``) are the items to score and report: the batches are
    those of all ``items`` (see :func:`image_batches`), and each batch that holds a pending item is
    scored whole, so a resumed run gives each datapoint the bytes of an uninterrupted one; the
    others only plan what they would put in the scorer's caches (``Scorer.skip``, given the
    scores ``kept(item)`` holds for a kept item: ``[image][query]``, None where there are none,
    so a cache of scores never computes them again). The progress
    counts the items of ``items`` that are not pending as done from the start.
    ``prepare(item, ref)``: an image as the scorer takes it (default: :func:`prepared_image`;
    ``bla-finetune`` hands in the images it prepared once)."""
    groups = group_by_image(items)
    refs = {ref.key: (item, ref) for item in items for ref in item.images}
    item_queries = {id(item): list(queries(item)) for item in items}
    results: dict[str, dict[Query, tuple[float, str | None, dict | None]]] = {}
    todo = {id(item) for item in (items if pending is None else pending)}
    written: set[int] = {id(item) for item in items if id(item) not in todo}

    def prepared(key: str) -> Any:
        if prepare is None:
            return prepared_image(scorer, *refs[key])
        return prepare(*refs[key])

    wanted = {r.key for item in items if id(item) in todo for r in item.images}
    every = image_batches(groups, images_per_batch, scorer.one_batch)
    marks = [bool(wanted.intersection(b)) for b in every]
    last = max((k for k, m in enumerate(marks) if m), default=-1)
    steps = list(zip(every[: last + 1], marks, strict=False))
    total, done = len(items), len(written)  # the kept items count as done from the start
    desc = f"scoring ({scorer.kind})"
    bar = tqdm(total=total, initial=done, desc=desc, unit="item")
    try:
        if progress is not None:
            progress(done, total, desc)
        with (
            library_messages_above(),
            closing(prefetch_map(prepared, [b for b, m in steps if m])) as prefetched,
        ):
            for batch_keys, to_score in steps:
                asked = [asked_of(groups[k], item_queries) for k in batch_keys]
                if not to_score:  # every item of it was kept: planned in the scorer's caches
                    scorer.skip(asked, _known(batch_keys, groups, item_queries, kept))
                    continue
                prepared = next(prefetched)
                try:
                    with engine_call():
                        scored = scorer.score(prepared, asked)
                except (OSError, ImportError):
                    raise  # a path, a connection or a package: already a message for the user
                except Exception as err:
                    if isinstance(err, ValueError) and raised_by_engine(err):
                        raise
                    raise scoring_failure(scorer, err) from err
                for i, key in enumerate(batch_keys):
                    answers = (
                        [None] * len(asked[i]) if scored.answers is None else scored.answers[i]
                    )
                    terms = [None] * len(asked[i]) if scored.terms is None else scored.terms[i]
                    triples = zip(scored.scores[i], answers, terms, strict=True)
                    results[key] = dict(zip(asked[i], triples, strict=True))
                    for item in groups[key]:
                        if id(item) in written or any(r.key not in results for r in item.images):
                            continue
                        on_scored(item, *_matrices(item, item_queries[id(item)], results))
                        written.add(id(item))
                        done += 1
                        bar.update(1)
                    if progress is not None:
                        progress(done, total, desc)
    finally:
        bar.close()


def _known(
    keys: Sequence[str],
    groups: dict[str, list[Item]],
    item_queries: dict[int, list[Query]],
    kept: Callable[[Item], Sequence[Sequence[float]] | None] | None,
) -> list[dict[Query, float]] | None:
    """Per image of a kept batch, the scores its kept items hold for its queries (None without
    ``kept``)."""
    if kept is None:
        return None
    out = []
    for key in keys:
        known: dict[Query, float] = {}
        for item in groups[key]:
            rows = kept(item)
            row = None if rows is None else rows[[r.key for r in item.images].index(key)]
            if row is not None and len(row) == len(item_queries[id(item)]):
                known.update(zip(item_queries[id(item)], row, strict=True))
        out.append(known)
    return out


def asked_of(members: Sequence[Item], item_queries: dict[int, list[Query]]) -> list[Query]:
    """The distinct queries asked of one image: those of every item that shows it."""
    return distinct([q for it in members for q in item_queries[id(it)]])


def _matrices(
    item: Item, asked: list[Query], results: dict[str, dict[Query, tuple]]
) -> tuple[list[list[float]], list[list[str]] | None, dict[str, list[list[Any]]] | None]:
    rows = [[results[ref.key][q] for q in asked] for ref in item.images]
    scores = [[score for score, _, _ in row] for row in rows]
    answers = None
    if not any(answer is None for row in rows for _, answer, _ in row):
        answers = [[answer for _, answer, _ in row] for row in rows]
    terms = None
    if not any(cell is None for row in rows for _, _, cell in row):
        names = list(rows[0][0][2]) if rows and rows[0] else []
        terms = {n: [[cell[n] for _, _, cell in row] for row in rows] for n in names}
    return scores, answers, terms
