"""bla_metric.neighbours.vl_checklist: a leaf's accuracy averaged as upstream, the taxonomy
rollup against the paper."""

from __future__ import annotations

import numpy as np
import pytest

from bla_metric.neighbours.references import reference_rows
from bla_metric.neighbours.vl_checklist import (
    VL_CHECKLIST_CORPUS,
    VL_CHECKLIST_LEAVES,
    corpus_source,
    vl_checklist_leaf,
    vl_checklist_rollup,
)

CF = [1, 0]  # caption, foil


def test_leaf_averages_files_then_sources():
    # leaf "small": vg has two files, swig one (upstream radar.py: mean of files per source,
    # then mean over sources), pooled differs.
    corpora = (
        ["Object_Size_small_vg_obj"] * 2
        + ["Object_Size_small_vg_subj"] * 4
        + ["Object_Size_small_swig_agent"] * 2
    )
    scores = [
        [1, 0],
        [0, 1],  # vg_obj 1/2
        [1, 0],
        [1, 0],
        [1, 0],
        [0, 0],  # vg_subj 3/4 (a tie fails)
        [0, 1],
        [0, 1],
    ]  # swig_agent 0
    result = vl_checklist_leaf(scores, [CF] * 8, corpora)
    assert result["per_corpus"]["Object_Size_small_vg_obj"] == {"accuracy": 0.5, "n": 2}
    assert result["per_corpus"]["Object_Size_small_vg_subj"]["accuracy"] == 0.75
    assert result["accuracy"] == pytest.approx(((0.5 + 0.75) / 2 + 0.0) / 2)
    assert result["pooled_accuracy"] == pytest.approx(4 / 8)
    assert result["ties"] == 1
    assert result["n"] == 8


def test_rollup_matches_paper_clip_object_and_overall():
    clip = {
        r["task"]: r["accuracy"] for r in reference_rows("vl-checklist") if r["model"] == "CLIP"
    }
    leaves = {k: v for k, v in clip.items() if k in VL_CHECKLIST_LEAVES}
    rollup = vl_checklist_rollup(leaves)
    assert rollup["Object"] == pytest.approx(clip["Object"], abs=5e-5)  # 82.83
    assert rollup["Object/Size"] == pytest.approx(np.mean([0.8877, 0.8182, 0.7565]))
    assert set(rollup) == {
        "Object/Size",
        "Object/Location",
        "Object",
        "Attribute",
        "Relation",
        "overall",
    }
    # Table 2: overall = mean(Object, Attribute, Relation) of the paper's printed averages
    table2 = np.mean([clip["Object"], clip["Attribute"], clip["Relation"]])
    assert table2 == pytest.approx(clip["all"], abs=5e-5)
    assert rollup["overall"] == pytest.approx(
        np.mean([rollup["Object"], rollup["Attribute"], rollup["Relation"]])
    )


def test_rollup_skips_absent_nodes():
    rollup = vl_checklist_rollup({"relation_action": 0.5, "attribute_color": 1.0})
    assert rollup == {"Attribute": 1.0, "Relation": 0.5, "overall": 0.75}
    with pytest.raises(ValueError, match="unknown VL-CheckList leaf"):
        vl_checklist_rollup({"colour": 1.0})


def test_corpus_table_covers_every_leaf():
    assert {key for key, _ in VL_CHECKLIST_LEAVES.values()} == set(VL_CHECKLIST_CORPUS)
    assert corpus_source("Attribute_color_vaw") == ("attribute_color", "vaw")
    with pytest.raises(ValueError, match="unknown VL-CheckList corpus"):
        corpus_source("nope")
