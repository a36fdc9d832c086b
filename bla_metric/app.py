"""The metric's Space: a small Gradio form over ``bla.py`` (run ``python bla_metric/app.py``).

``evaluate.utils.launch_gradio_widget`` builds its form with ``gr.inputs``, which Gradio 4 removed,
so this widget is written against the current Gradio API instead.
"""

import json
from pathlib import Path

import evaluate
import gradio as gr

MODULE_PATH = Path(__file__).resolve().with_name("bla.py")
CARD_PATH = MODULE_PATH.with_name("README.md")

EXAMPLE_PREDICTIONS = "[[0.9, 0.8, 0.2, 0.1], [0.3, 0.6, 0.5, 0.4], [0.5, 0.5, 0.5, 0.5]]"
EXAMPLE_REFERENCES = "[[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]]"
EXAMPLE_OPTIONS = '{"caption_types": ["TA", "TP", "FA", "FP"], "bootstrap": 200}'


def card_body(path: Path = CARD_PATH) -> str:
    """The module card without its YAML header."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if text.startswith("---"):
        text = text.split("---", 2)[2]
    return text


def make_runner(module: evaluate.EvaluationModule):
    """A function of the three JSON text boxes that returns the metric's result dict."""

    def run(predictions: str, references: str, options: str) -> dict:
        try:
            kwargs = json.loads(options) if options.strip() else {}
            if not isinstance(kwargs, dict):
                raise ValueError('options must be a JSON object, e.g. {"mode": "binary"}')
            return module.compute(
                predictions=json.loads(predictions), references=json.loads(references), **kwargs
            )
        except (ValueError, TypeError) as error:
            raise gr.Error(str(error)) from error

    return run


def build_demo(module: evaluate.EvaluationModule) -> gr.Interface:
    """The widget: predictions, references and keyword options as JSON; the result as JSON."""
    return gr.Interface(
        fn=make_runner(module),
        inputs=[
            gr.Textbox(label="predictions (one list of scores per datapoint)", lines=4),
            gr.Textbox(label="references (one list of 0/1 labels per datapoint)", lines=4),
            gr.Textbox(
                label="options (JSON: mode, threshold, caption_types, groups, bootstrap, seed)"
            ),
        ],
        outputs=gr.JSON(label="metrics"),
        examples=[[EXAMPLE_PREDICTIONS, EXAMPLE_REFERENCES, EXAMPLE_OPTIONS]],
        title="Metric: bla",
        description=module.info.description,
        article=card_body(),
    )


if __name__ == "__main__":
    build_demo(evaluate.load(str(MODULE_PATH))).launch()
