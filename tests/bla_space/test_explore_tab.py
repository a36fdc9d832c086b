"""bla_space.explore_tab: the datapoint slider before and after the data loads, and the lookup of a
datapoint typed into its box."""

from __future__ import annotations

import gradio as gr
from bla_space.config import SpaceConfig
from bla_space.explore_tab import build, position_settings


def test_the_slider_shows_no_count_until_there_is_one_and_moves_only_over_two_or_more():
    loading, none, one, many = (position_settings(n) for n in (None, 0, 1, 7))
    assert "(of" not in loading["label"] and not loading["interactive"]
    assert "none matches" in none["label"] and not none["interactive"]
    assert one["label"] == "Datapoint (of 1)" and not one["interactive"]
    assert many == {
        "minimum": 1,
        "maximum": 7,
        "value": 1,
        "label": "Datapoint (of 7)",
        "interactive": True,
    }


def test_a_position_typed_into_the_box_looks_the_datapoint_up(tmp_path):
    config = SpaceConfig.from_env({"BLA_RESULTS_DIR": str(tmp_path), "BLA_DATASET": str(tmp_path)})
    with gr.Blocks() as demo:
        build(config, demo)
    slider = next(
        b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "explore-position"
    )
    triggers = {
        (target, event) for dep in demo.config["dependencies"] for target, event in dep["targets"]
    }
    assert (slider._id, "input") in triggers  # the box's Enter and typing fire input, not release
