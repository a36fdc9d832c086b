"""Word-order cues in a ranking (thesis §7.1.1-§7.1.2): which sentences does a model put on top?

The four Active-Passive sentences split into two pairs in three ways:

- truth: {TA, TP} vs {FA, FP} (true sentences on top = set accuracy, false ones = set error);
- voice: {TA, FA} vs {TP, FP} (the two active or the two passive sentences on top);
- noun order: {TA, FP} vs {TP, FA}. TA "the S V the O" and FP "the S is V-ed by the O" both name
  the agent first and read agent-verb-patient; TP and FA name the patient first (thesis §4.3.1).
  In BLA's templates a sentence's SVO order is its noun order, so one grouping serves both.

Without ties, exactly one of the three groupings has the model's top two sentences as one of its
pairs; a random order gives each grouping 1/3. :func:`top_two_groupings` gives those shares;
:func:`noun_order_agreement` the pairwise view of §7.1.2: the two same-voice pairs (TA-FA and
TP-FP) are decided by the same noun order (TA > FA together with FP > TP, or FA > TA together with
TP > FP); chance 1/2.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bla_metric import formulas

AP_GROUPINGS: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "truth": (("TA", "TP"), ("FA", "FP")),
    "voice": (("TA", "FA"), ("TP", "FP")),
    "noun_order": (("TA", "FP"), ("TP", "FA")),
}
"""The three ways to split the four Active-Passive sentences into two pairs."""


def _columns(scores: Sequence[Sequence[float]], caption_types, names) -> dict[str, np.ndarray]:
    """{type name: its score in each datapoint}; every datapoint must have every name once."""
    lengths, blocks = formulas._scores(scores, "predictions")
    n = len(lengths)
    type_blocks = formulas._type_rows(caption_types, lengths)
    positions = formulas._type_positions(type_blocks, n)
    values = np.full((n, int(lengths.max())), np.nan)
    for index, block in blocks:
        values[index, : block.shape[1]] = block
    out = {}
    for name in names:
        column = positions.get(name)
        if column is None or (column < 0).any():
            i = 0 if column is None else int(np.flatnonzero(column < 0)[0])
            raise ValueError(f"datapoint {i}: no sentence of caption type {name!r}")
        out[name] = values[np.arange(n), column]
    return out


def top_two_groupings(
    scores: Sequence[Sequence[float]],
    caption_types: Sequence[str] | Sequence[Sequence[str]],
    groupings: dict[str, tuple[tuple[str, str], tuple[str, str]]] = AP_GROUPINGS,
) -> dict[str, float]:
    """Share of datapoints whose two top-scored sentences are one pair of each grouping.

    Returns {grouping: share, "grouping:X+Y": share with pair X, Y on top, ...}. The top two are
    only counted when they are separated from the other two by a strict score gap (a tie across
    the cut counts for no grouping).
    """
    names = sorted({name for pairs in groupings.values() for pair in pairs for name in pair})
    columns = _columns(scores, caption_types, names)
    stacked = np.stack([columns[name] for name in names], axis=1)
    out: dict[str, float] = {}
    for grouping, pairs in groupings.items():
        total = np.zeros(len(stacked), dtype=bool)
        shares = {}
        for pair in pairs:
            inside = np.isin(names, pair)
            on_top = stacked[:, inside].min(axis=1) > stacked[:, ~inside].max(axis=1)
            shares[f"{grouping}:{'+'.join(pair)}"] = float(on_top.mean())
            total |= on_top
        out[grouping] = float(total.mean())
        out.update(shares)
    return out


def noun_order_agreement(
    scores: Sequence[Sequence[float]],
    caption_types: Sequence[str] | Sequence[Sequence[str]],
) -> dict[str, float]:
    """Share of Active-Passive datapoints whose same-voice pairs follow one noun order.

    ``agent_first``: TA > FA and FP > TP (the agent-first sentence wins both pairs);
    ``patient_first``: FA > TA and TP > FP; ``agreement``: their sum (chance 1/2).
    """
    c = _columns(scores, caption_types, ("TA", "TP", "FA", "FP"))
    agent = (c["TA"] > c["FA"]) & (c["FP"] > c["TP"])
    patient = (c["FA"] > c["TA"]) & (c["TP"] > c["FP"])
    return {
        "agreement": float((agent | patient).mean()),
        "agent_first": float(agent.mean()),
        "patient_first": float(patient.mean()),
    }
