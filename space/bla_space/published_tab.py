"""The Leaderboard tab's section of published scores (``published.py``): runs that model authors
pushed with ``bla-eval export --scores``, ranked with rank intervals and groups not
separated."""

from __future__ import annotations

import io
from pathlib import Path

import gradio as gr

from . import published, views
from .config import SpaceConfig

RESAMPLES = 1000
INTRO = (
    "Runs whose per-datapoint scores model authors published (`bla-eval export RUN --scores "
    "ORG/RESULTS --push`), from the results repos of `BLA_PUBLISHED_RESULTS`: every metric "
    "recomputed from the scores, ranked with 95% rank intervals and groups not separated over "
    "the runs that scored the same datapoints."
)


def folder(config: SpaceConfig) -> Path:
    """Where the published repos are pulled: the project's cache, never a user's folder."""
    return Path(config.cache_dir) / "published"


def refresh(config: SpaceConfig, metric: str):
    """(Markdown, table, image) of the published runs ranked by ``metric``."""
    import pandas as pd
    from PIL import Image

    text, table, png = published.statistics(
        config.published_repos, folder(config), metric, RESAMPLES
    )
    text = "".join(f"{line}\n\n" for line in config.published_warnings) + text
    if table is None:
        return text, pd.DataFrame(), None
    return text, views.rendered(table), Image.open(io.BytesIO(png))


def build(config: SpaceConfig, metric: gr.Radio) -> None:
    """Lay out the section (inside the Leaderboard tab); ``metric`` is the tab's rank-by radio."""
    with gr.Accordion("Published scores", open=False, elem_id="leaderboard-published"):
        gr.Markdown(INTRO)
        button = gr.Button("Read the published results", size="sm")
        text = gr.Markdown(elem_id="leaderboard-published-text")
        table = gr.Dataframe(
            interactive=False,
            wrap=True,
            label="Published runs (%)",
            max_height=views.WHOLE_TABLE,
            visible=False,  # no empty table before the results are read
        )
        plot = gr.Image(show_label=False, type="pil", interactive=False, visible=False)

    def handler(chosen: str):
        """Pull the results repos and rank their (BLA) runs: by the rank-by metric when it is
        one of BLA's, else by BLA's default."""
        from bla_eval.analysis.leaderboard import METRICS

        text, frame, image = refresh(config, chosen if chosen in METRICS else METRICS[0])
        shown = gr.Dataframe(frame, visible=not frame.empty)
        return text, shown, gr.Image(image, visible=image is not None)

    button.click(handler, metric, [text, table, plot], api_name=False)
