"""The Explore tab: browse each task's datapoints, with a run's scores and failures."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from . import explore_data as ed
from . import results_store
from .config import SpaceConfig

NO_RUN = ""
SENTENCE_WIDTHS = ["8%", "50%", "9%", "11%", "7%", "15%"]
LEGEND = (
    "Types: **T**/**F** true/false; **A**/**P** active/passive (AP); **P1**/**P2** person 1/2 "
    "(CO, RC). Rank 1 = the model's highest score. A sentence is *ranked correctly* when a true "
    "one is in the top two or a false one in the bottom two (ties count against true sentences)."
)


@dataclass
class ExploreTab:
    """Components and the handler other tabs wire to."""

    run: gr.Dropdown
    task: gr.Radio
    select_run: object


def build(config: SpaceConfig, demo: gr.Blocks) -> ExploreTab:
    """Lay out the tab and its events (call inside ``gr.Blocks``)."""
    ids = gr.State([])
    with gr.Row():
        task = gr.Radio(
            [(label, c) for c, label in ed.task_labels().items()],
            value="active_passive",
            label="Task",
            scale=3,
            elem_id="explore-task",
        )
        run = gr.Dropdown(
            run_choices(config),
            value=NO_RUN,
            label="Scores of run",
            scale=3,
            elem_id="explore-run",
            allow_custom_value=False,
        )
        verb = gr.Dropdown(
            [ed.ALL_VERBS], value=ed.ALL_VERBS, label="Verb (AP)", scale=1, elem_id="explore-verb"
        )
        failures = gr.Checkbox(
            label="Only set errors (both false sentences ranked on top)",
            value=False,
            scale=2,
            elem_id="explore-failures",
        )
    with gr.Row():
        previous = gr.Button("◀ Previous", size="sm", scale=1)
        position = gr.Slider(**position_settings(None), step=1, scale=6, elem_id="explore-position")
        following = gr.Button("Next ▶", size="sm", scale=1)
    with gr.Row(equal_height=False):
        image = gr.Image(
            label="Image",
            type="pil",
            height=360,
            scale=2,
            interactive=False,
            visible=False,
            elem_id="explore-image",
        )
        with gr.Column(scale=3):
            header = gr.Markdown("", elem_id="explore-header")
            sentences = gr.Dataframe(
                headers=ed.SENTENCE_COLUMNS,
                interactive=False,
                wrap=True,
                label="Sentences (2 true, 2 false, same words)",
                column_widths=SENTENCE_WIDTHS,
                elem_id="explore-sentences",
            )
            gr.Markdown(LEGEND, elem_id="explore-legend")

    def select(task_, run_, verb_, failures_):
        return select_datapoints(config, task_, run_, verb_, failures_)

    def show(task_, run_, ids_, pos):
        picture, text, table = show_datapoint(config, task_, run_, ids_, pos)
        return gr.Image(picture, visible=picture is not None), text, table

    filters = [task, run, verb, failures]
    shown = [image, header, sentences]
    selected = [verb, ids, position]
    for control in filters:
        control.change(select, filters, selected, api_name=False).then(
            show, [task, run, ids, position], shown, api_name=False
        )

    def newest_run():
        """The run menu with the newest finished run picked (the one a run just finished)."""
        choices = run_choices(config)
        return gr.Dropdown(choices=choices, value=choices[1][1] if len(choices) > 1 else NO_RUN)

    demo.load(newest_run, None, run, api_name=False).then(
        select, filters, selected, api_name=False
    ).then(show, [task, run, ids, position], shown, api_name=False)
    # a drag, a click and a number typed into its box (Enter included) look the datapoint up
    position.input(
        show, [task, run, ids, position], shown, api_name=False, trigger_mode="always_last"
    )
    previous.click(lambda p: max(1, int(p) - 1), position, position, api_name=False).then(
        show, [task, run, ids, position], shown, api_name=False
    )
    following.click(
        lambda p, i: min(max(1, len(i)), int(p) + 1), [position, ids], position, api_name=False
    ).then(show, [task, run, ids, position], shown, api_name=False)

    def select_run(name: str):
        choices = run_choices(config)
        keys = [key for _, key in choices]
        return gr.Dropdown(choices=choices, value=name if name in keys else NO_RUN)

    return ExploreTab(run, task, select_run)


def run_choices(config: SpaceConfig) -> list[tuple[str, str]]:
    """Dropdown choices: no run, then every finished BLA run, newest first."""
    runs = results_store.list_runs(config.folders, "bla")
    return [("none (dataset only)", NO_RUN), *results_store.menu(runs)]


def select_datapoints(config: SpaceConfig, task: str, run: str, verb: str, failures: bool):
    """Verb choices, the ids passing the filters and a slider reset to the first of them."""
    scores = ed.load_scores(_run_path(config, run))
    try:
        verbs = [ed.ALL_VERBS, *ed.verbs(config.dataset, task)]
        ids = ed.select_ids(
            config.dataset,
            task,
            scores,
            failures_only=failures,
            verb=verb if verb in verbs else None,
        )
    except Exception as err:  # dataset unreachable: say so in the page
        gr.Warning(f"Cannot load the dataset {config.dataset!r}: {err}")
        return gr.Dropdown(), [], gr.Slider(**position_settings(None))
    verb_box = gr.Dropdown(
        choices=verbs, value=verb if verb in verbs else ed.ALL_VERBS, visible=len(verbs) > 1
    )
    return verb_box, ids, gr.Slider(**position_settings(len(ids)))


def position_settings(count: int | None) -> dict:
    """The datapoint slider's settings for ``count`` matching datapoints (None: not loaded).
    A slider needs maximum > minimum, so with fewer than two it is shown but not movable
    (``show_datapoint`` clamps the position)."""
    if count is None:
        label = "Datapoint (loading the dataset)"
    elif count == 0:
        label = "Datapoint (none matches the filters)"
    else:
        label = f"Datapoint (of {count})"
    movable = count is not None and count > 1
    maximum = count if movable else 2
    return {"minimum": 1, "maximum": maximum, "value": 1, "label": label, "interactive": movable}


def show_datapoint(config: SpaceConfig, task: str, run: str, ids: list[str], position: float):
    """Image, header and sentence table of the datapoint at ``position`` (1-based) in ``ids``."""
    if not ids:
        return None, "No datapoint matches these filters.", None
    point_id = ids[min(len(ids), max(1, int(position))) - 1]
    row = ed.datapoint(config.dataset, task, point_id)
    record = ed.load_scores(_run_path(config, run)).get((task, point_id))
    verdict = ""
    if record is not None:
        verdict = " · **set error**" if ed.is_set_error(record) else ""
    elif run:
        verdict = " · not scored in this run"
    verb = f" · verb *{row['predicate']}*" if row.get("predicate") else ""
    header = f"**{point_id}** · image {row.get('image_id', '')}{verb}{verdict}"
    return row["image"], header, ed.sentence_table(row, record)


def _run_path(config: SpaceConfig, run: str) -> str | None:
    """The folder of the finished BLA run of key ``run`` (None for no run or an unknown key)."""
    found = results_store.find_run(config.folders, run, "bla")
    return None if found is None else str(found.path)
