"""The sweep's leaderboards: per benchmark and protocol, ``bla-eval compare``'s report over the
cells' run folders (table with CIs, rank intervals, tied groups; the plot), written under
``leaderboards/<benchmark>/<protocol>/`` of the sweep folder."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from ..cli_common import one_line
from ..extras import install_hint
from .folder import SweepFolder
from .plan import Cell


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
    parts = []
    for (bench, protocol), paths in groups.items():
        title = f"# Sweep leaderboard: {bench}, {protocol}\n"
        if len(paths) < 2:
            parts.append(f"{title}\nOne finished model ({paths[0]}): nothing to rank.\n")
            continue
        out = folder.leaderboard_path(bench, protocol)
        try:
            report, _ = compare_many(paths, out, resamples, seed)
        except (ValueError, OSError, KeyError) as err:
            parts.append(f"{title}\nNo leaderboard: {one_line(err)}\n")
            continue
        parts.append(f"{title}\n{report}Written to {out}.\n")
    return "\n".join(parts)
