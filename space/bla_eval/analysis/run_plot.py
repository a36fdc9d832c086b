"""The plot of one run (``bla-eval --plot``): per task, the ranking and binary table metrics as
bars with their 95% intervals (``bla_eval.report.run_interval``: the ones every table gives) and
the chance level of each metric as a black tick."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

PLOT_FILE = "results.png"


def run_figure(results: dict[str, Any]) -> bytes:
    """PNG bytes of the run's plot: one panel per view, bars grouped by task."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from ..benchmarks import get_benchmark
    from ..report import display_name, run_interval

    bench = get_benchmark(results.get("benchmark", "bla"))
    tasks = list(results["tasks"])
    views = list(bench.views.items())
    figure, axes = plt.subplots(1, len(views), figsize=(5.2 * len(views), 3.8), squeeze=False)
    for axis, (view, (keys, title)) in zip(axes[0], views, strict=True):
        width = 0.8 / len(keys)
        positions = np.arange(len(tasks))
        for k, key in enumerate(keys):
            values = [
                100 * float((results["tasks"][t].get(view) or {}).get(key, np.nan)) for t in tasks
            ]
            spans = [run_interval(results, t, view, key) for t in tasks]
            errors = np.array(  # no bar for a word (undefined, no variation) or no interval
                [
                    [max(0.0, v - 100 * s[0]), max(0.0, 100 * s[1] - v)]
                    if isinstance(s, list)
                    else [0.0, 0.0]
                    for v, s in zip(values, spans, strict=True)
                ]
            ).T
            x = positions + (k - (len(keys) - 1) / 2) * width
            axis.bar(x, values, width, yerr=errors, capsize=3, label=key.replace("_", " "))
            chance = (bench.chance or {}).get(key)
            if chance is not None:
                axis.hlines([100 * chance] * len(x), x - width / 2, x + width / 2, color="black")
        axis.set_xticks(positions, [bench.task_label(t) for t in tasks])
        axis.set_ylim(0, 100)
        axis.set_ylabel("%")
        axis.set_title(title.split(":")[0], fontsize=10)
        axis.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=len(keys))
    figure.suptitle(
        f"{display_name(results)}: metrics with 95% intervals (black: chance)",
        fontsize=10,
    )
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


def write_plot(results: dict[str, Any], folder: str | Path) -> Path:
    """Write the run's plot into its run folder as :data:`PLOT_FILE`; returns its path."""
    from ..outputs import atomic_file

    path = Path(folder) / PLOT_FILE
    figure = run_figure(results)
    with atomic_file(path, binary=True) as handle:
        handle.write(figure)
    return path
