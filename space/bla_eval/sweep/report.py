"""The sweep's leaderboards: per benchmark and protocol, ``bla-eval compare``'s report over the
cells' run folders (table with CIs, rank intervals, groups not separated; the plot), written under
``leaderboards/<benchmark>/<protocol>/`` of the sweep folder. Every benchmark has one (its spec
says what it ranks); a protocol with a control image ranks the image gain, its title says so."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..cli_common import one_line
from ..extras import install_hint
from .folder import SweepFolder
from .plan import Cell


def measured(document: Mapping[str, Any]) -> str:
    """What a comparison's leaderboard ranks, in words: ``sentence accuracy``, or ``image gain
    of sentence accuracy (real image minus shuffled control)``."""
    first = next(iter(document.get("leaderboard", {}).values()), {})
    metric = str(first.get("metric", "?")).replace("_", " ")
    control = first.get("control")
    if control:
        return f"image gain of {metric} (real image minus {control} control)"
    return metric


def leaderboards(folder: SweepFolder, cells: Sequence[Cell], resamples: int, seed: int = 0) -> str:
    """The report of each (benchmark, protocol) group of two or more finished ``cells``; a group
    that cannot be compared gets one line saying why."""
    try:
        from ..analysis.compare import compare_many
    except ModuleNotFoundError as err:  # the analysis extra: the cells stand without it
        return f"No leaderboards: {install_hint(err, 'analysis') or one_line(err)}\n"

    groups: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for cell in cells:
        if folder.finished(cell):
            groups[(cell.benchmark, cell.protocol)].append(folder.cell_path(cell))
    parts: list[str] = []
    seen: dict[str, str] = {}
    for (bench, protocol), paths in groups.items():
        title = f"# Sweep leaderboard: {bench}, {protocol}"
        if len(paths) < 2:
            parts.append(f"{title}\n\nOne finished model ({paths[0]}): nothing to rank.\n")
            continue
        out = folder.leaderboard_path(bench, protocol)
        try:
            report, document = compare_many(paths, out, resamples, seed)
        except (ValueError, OSError, KeyError, ModuleNotFoundError) as err:
            why = isinstance(err, ModuleNotFoundError) and install_hint(err, "analysis")
            parts.append(f"{title}\n\nNo leaderboard: {why or one_line(err)}\n")
            continue
        report = once(report, seen, f"{bench}, {protocol}", out)
        parts.append(f"{title}: {measured(document)}\n\n{report}Written to {out}.\n")
    return "\n".join(parts)


METHODS_LENGTH = 200
"""A paragraph of a report this long, not a table, is a description of methods where it repeats
(the tables, the runs' names and every number differ from one leaderboard to the next)."""


def once(report: str, seen: dict[str, str], where: str, out: Path) -> str:
    """``report`` with each paragraph that an earlier leaderboard of the sweep printed (``seen``:
    paragraph -> where it was printed, updated) replaced by a line pointing there; its own
    ``compare.md`` keeps the paragraph."""
    kept = []
    for paragraph in report.split("\n\n"):
        if len(paragraph) < METHODS_LENGTH or paragraph.startswith("|"):
            kept.append(paragraph)
        elif paragraph in seen:
            kept.append(
                f"Described under {seen[paragraph]} above (in full in {out / 'compare.md'})."
            )
        else:
            seen[paragraph] = where
            kept.append(paragraph)
    return "\n\n".join(kept)
