"""Every handler of the Space (each function ``ui.build_demo`` wires to an event) called with
hostile inputs, as an API caller can send them: each returns, or says what is wrong in a page
message (``gr.Error``); none raises anything else."""

from __future__ import annotations

import asyncio
import json
import math

import gradio as gr
import pytest
from bla_eval.outputs import OWNER_FILE
from bla_eval.sweep.folder import SWEEP_COMMAND
from bla_space.config import SpaceConfig
from bla_space.ui import build_demo
from gradio.exceptions import ComponentProcessingError

from tests.bla_eval.commands import copy_run

HOSTILE = [
    None,
    "",
    -19,
    float("nan"),
    -math.inf,
    10**400,
    True,
    "../../../etc/passwd",
    "org/m\u202eevil\nline",
    "x" * 5000,
    {"cell": "bla/zero-shot/run"},
    [None, {"a": 1}, 7],
]
"""Values an API caller can send for any input: wrong types, out-of-range and non-finite
numbers, paths out of the folder, control characters, an object where a name belongs."""


def call(demo: gr.Blocks, block_fn, value) -> None:
    """One event of the page as an API caller sends it: ``value`` at every input, through
    Gradio's own processing (each component's preprocessing, the handler, the outputs'
    postprocessing), a generator run to its end."""
    from gradio.state_holder import SessionState

    inputs = [value] * len(block_fn.inputs)
    state = SessionState(demo)
    result = asyncio.run(demo.process_api(block_fn, inputs, state, request=gr.Request()))
    while result.get("is_generating"):
        result = asyncio.run(
            demo.process_api(block_fn, inputs, state, gr.Request(), result["iterator"])
        )


@pytest.fixture(scope="module")
def handlers(co_run, built_dataset, tmp_path_factory):
    """The Space's own handlers, on a results folder holding a run and a sweep marker whose
    cells are damaged (provider runs not offered: their handlers are called below)."""
    root = tmp_path_factory.mktemp("handlers")
    copy_run(co_run, root / "runs", "a-run")
    sweep = root / "runs" / "sweep"
    copy_run(co_run, sweep / "bla" / "zero-shot", "run")
    marker = {"command": SWEEP_COMMAND, "files": [], "cells": [{"x": 1}, "bla/zero-shot/run"]}
    (sweep / OWNER_FILE).write_text(json.dumps(marker), encoding="utf-8")
    config = SpaceConfig(
        dataset=str(built_dataset),
        results_dir=root / "runs",
        space_runs=root / "own",
    )
    demo = build_demo(config)
    own = [f for f in demo.fns.values() if f.fn and f.fn.__module__.startswith("bla_space")]
    assert len(own) > 40
    return demo, own


@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: repr(v)[:20])
def test_every_handler_answers_hostile_inputs_with_a_message(handlers, value):
    demo, own = handlers
    failures = []
    for block_fn in own:
        try:
            call(demo, block_fn, value)
        except (gr.Error, ComponentProcessingError):
            pass  # the page shows it; Gradio refused the value before the handler ran
        except Exception as err:  # noqa: BLE001  (the test lists what escaped)
            name = block_fn.fn.__qualname__
            failures.append(f"{name}: {type(err).__name__}: {str(err)[:200]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: repr(v)[:20])
def test_the_provider_handlers_answer_hostile_inputs_with_a_message(built_dataset, value):
    """What the Evaluate tab's provider handlers delegate to, with provider runs offered (a
    router that is not there): the estimate is a message, the run a ``gr.Error``."""
    from bla_space import evaluate_tab, provider_section, providers

    config = SpaceConfig(dataset=str(built_dataset), providers=True, router="http://127.0.0.1:9")
    token = gr.OAuthToken(token="hf_visitor", scope="inference-api", expires_at=0)
    hostile = providers.ProviderRequest(value, value, value, value)
    text = provider_section.estimate_text(config, hostile, token)
    assert isinstance(text, str) and text
    a_limit = providers.ProviderRequest("org/m", "auto", ["coordination"], value)
    text = provider_section.estimate_text(config, a_limit, token)
    if value in (None, ""):  # all datapoints
        assert "**2617 requests**" in text, text  # CO's 654 datapoints x 4, and the probe
    else:
        assert "Datapoints per task must be a whole number" in text, text
    with pytest.raises(gr.Error):
        evaluate_tab.evaluate_on_provider(
            config, hostile, value, token, gr.Request(), gr.Progress()
        )
    provider_section.list_providers(value)


def test_outside_a_space_the_provider_choice_is_not_offered_and_said_once(handlers):
    """Without sign-in (no Space, no ``BLA_INFERENCE_PROVIDERS``) the "Run on" choice is
    hidden and the one line saying how to run on Inference Providers is in the page once."""
    from bla_space.provider_section import NOT_OFFERED

    demo, _ = handlers
    blocks = list(demo.blocks.values())
    (run_on,) = [b for b in blocks if getattr(b, "elem_id", None) == "run-on"]
    assert run_on.visible is False
    said = [b for b in blocks if isinstance(b, gr.Markdown) and NOT_OFFERED in str(b.value)]
    assert len(said) == 1
