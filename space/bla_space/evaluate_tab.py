"""The Evaluate tab: model id, kind, tasks, limit -> progress, metrics table, bar plots, JSON."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gradio as gr
from bla_eval.bundled import BUNDLED_MODELS
from bla_eval.protocols import DEFAULT_PROTOCOL, PROTOCOLS

from bla_metric.likelihood import SCORES

from . import provider_section, providers, results_store, views
from .config import SpaceConfig
from .explore_data import task_labels
from .runner import (
    AUTO,
    CLI_ONLY_NOTE,
    EvaluationRequest,
    count_datapoints,
    datapoint_limit,
    kind_examples,
    kind_help,
    kind_menu,
    publish,
    resolve_model,
    run_evaluation,
)
from .safety import ModelRejected, human_count, validate_model_id

log = logging.getLogger(__name__)

WAITING = (
    "*After a run: the metrics beside chance, humans and the paper's models, a plot per task, "
    "and the results JSON. Progress and your place in the queue show here.*"
)
VIEW_CHOICES = [("Ranking view (thesis)", "ranking"), ("Binary view (paper)", "binary")]
GPU, PROVIDERS = "gpu", "providers"
RUN_ON = [("This Space's GPU", GPU), ("Inference Providers (your account)", PROVIDERS)]


def score_choices() -> list[tuple[str, str]]:
    """(label, value) of every ``--score`` (``bla_metric.likelihood.SCORES``)."""
    labels = {
        "yes-no": "P(yes) to the question",
        "caption": "likelihood of the sentence",
        "caption-pmi": "likelihood minus the prior (PMI)",
    }
    return [(labels.get(s, s), s) for s in SCORES]


def protocol_choices() -> list[tuple[str, str]]:
    """(label, name) of every protocol of ``bla_eval.protocols`` (paper §6)."""
    return [(spec.menu_title(), name) for name, spec in PROTOCOLS.items()]


@dataclass
class EvaluateTab:
    """The components other tabs wire to."""

    run_event: gr.events.Dependency
    run_name: gr.State
    provider_event: gr.events.Dependency


def build(config: SpaceConfig) -> EvaluateTab:
    """Lay out the tab and its events (call inside ``gr.Blocks``)."""
    run_name = gr.State("")
    run_on = gr.Radio(RUN_ON, value=GPU, label="Run on", elem_id="run-on", visible=config.providers)
    if not config.providers:  # the choice is not offered; said once
        gr.Markdown(provider_section.NOT_OFFERED, elem_id="providers-not-offered")
    with gr.Row(equal_height=False):
        with gr.Column(scale=3) as gpu_box:
            model = gr.Textbox(
                label="Model",
                placeholder="Hub model id, e.g. openai/clip-vit-base-patch32",
                info="A Hub id organisation/name"
                + (", a local folder" if config.allow_local_models else "")
                + f" or a bundled short name ({', '.join(BUNDLED_MODELS)})"
                + f"; models up to {human_count(config.max_params)} parameters.",
                elem_id="model-id",
            )
            kind = gr.Dropdown(
                choices=kind_menu(),
                value=AUTO,
                label="Model kind",
                info="Detected from the model's config; override it if detection is wrong.",
                elem_id="model-kind",
            )
            detected = gr.Markdown("", elem_id="detected-kind")
            gr.Examples(
                kind_examples(config.max_params),
                inputs=[model, kind],
                label="Examples: models of each kind and family this Space can load",
            )
            gr.Markdown(
                "Every architecture the engine is tested on, with the forward path it takes: "
                "`docs/models.md` in the project's repository.",
                elem_id="tested-architectures",
            )
        section = provider_section.build(config)
        with gr.Column(scale=2):
            tasks = gr.CheckboxGroup(
                choices=[(label, task) for task, label in task_labels().items()],
                value=list(task_labels()),
                label="Tasks",
                elem_id="tasks",
            )
            limit = gr.Slider(
                0,
                700,
                value=config.default_limit,
                step=1,
                label="Datapoints per task (0 = all)",
                info="A quick run scores the first N datapoints of each task.",
                elem_id="limit",
            )
            protocol = gr.Radio(
                protocol_choices(),
                value=DEFAULT_PROTOCOL,
                label="Protocol",
                elem_id="protocol",
                info="In-context learning (paper §6): generative models only; scores the "
                "learning test split (200 datapoints per task) with two demonstrations per "
                "sentence. Compare it with a zero-shot run of the same learning split.",
            )
            with gr.Column(visible=True, elem_id="gpu-options") as gpu_options:
                score = gr.Radio(
                    score_choices(),
                    value="yes-no",
                    label="Question (generative models)",
                    elem_id="score",
                    info="P(yes) to the yes/no question; or the sentence's likelihood after the "
                    "image; or that corrected for the language prior (alpha chosen on the "
                    "learning split).",
                )
                quota = gr.Markdown("", elem_id="gpu-quota")
                quota_limit = gr.Button("Use that limit", size="sm", visible=False)
                button = gr.Button("Evaluate", variant="primary", elem_id="run-button")
                gr.Markdown(
                    "One evaluation runs at a time (queued). Models load without remote code. "
                    + CLI_ONLY_NOTE,
                    elem_id="queue-note",
                )
    status = gr.Markdown(WAITING, container=True, min_height=90, elem_id="run-status")
    with gr.Column(visible=False, elem_id="results") as results_box:
        view = gr.Radio(VIEW_CHOICES, value="ranking", label="Metrics", elem_id="view")
        table = gr.Dataframe(
            label="Metrics (%), this run first",
            interactive=False,
            elem_id="metrics-table",
            wrap=True,
            column_widths=views.column_widths(views.metrics_table_columns()),
        )
        with gr.Row():
            plots = [
                gr.BarPlot(
                    x="model",
                    y="value",
                    color="group",
                    label=label,
                    show_label=False,
                    visible=False,
                    x_label_angle=-45,
                    elem_id=f"plot-{config_}",
                    y_lim=[0, 100],
                    height=320,
                    color_map=views.GROUP_COLORS,
                    x_title=" ",
                    y_title="%",
                    color_title=" ",
                )
                for config_, label in task_labels().items()
            ]
        download = gr.File(label="Results JSON", elem_id="results-file")

    def detect(model: str) -> str:
        """The model kind the engine detects for ``model``."""
        return detect_message(config, model)

    def run(
        model,
        kind,
        tasks,
        limit,
        view,
        protocol=DEFAULT_PROTOCOL,
        score="yes-no",
        progress=gr.Progress(),  # noqa: B008
    ):
        """Score a model on BLA; returns status, metrics table, plots and the results JSON."""
        request = EvaluationRequest(model, kind, tasks or (), limit, protocol, score)
        return evaluate_in_page(config, request, view, progress)

    def rerender(name: str, view_choice: str):
        found = results_store.find_run(config.folders, name)
        return (
            render(found, view_choice, listing=listing(config, found))[1:6]
            if found
            else [gr.skip()] * 5
        )

    model.submit(detect, model, detected, concurrency_limit=4, api_name="detect_kind")
    model.blur(detect, model, detected, concurrency_limit=4, api_name=False)
    outputs = [status, table, *plots, download, run_name, results_box]
    event = button.click(
        run,
        [model, kind, tasks, limit, view, protocol, score],
        outputs,
        api_name="evaluate",
        concurrency_limit=1,
        concurrency_id="gpu",
    )
    view.change(rerender, [run_name, view], [table, *plots, download], api_name=False)

    def pick_run_on(choice: str):
        """The inputs of one way to run; a provider run is zero-shot (no protocol menu)."""
        on_gpu = choice == GPU
        shown = (gr.Column(visible=on_gpu), gr.Column(visible=on_gpu))
        return (*shown, gr.Column(visible=not on_gpu), gr.Radio(visible=on_gpu))

    run_on.change(
        pick_run_on, run_on, [gpu_box, gpu_options, section.box, protocol], api_name=False
    )

    def estimate(model, provider, tasks_, limit_, oauth_token: gr.OAuthToken | None):
        asked = providers.ProviderRequest(model, provider, tasks_ or (), limit_)
        return provider_section.estimate_text(config, asked, oauth_token)

    def run_provider(
        model,
        provider,
        tasks_,
        limit_,
        view_,
        oauth_token: gr.OAuthToken | None,
        request: gr.Request,
        progress=gr.Progress(),  # noqa: B008
    ):
        """Score a provider-served model with the signed-in visitor's token."""
        asked = providers.ProviderRequest(model, provider, tasks_ or (), limit_)
        return evaluate_on_provider(config, asked, view_, oauth_token, request, progress)

    inputs = [section.model, section.provider, tasks, limit]
    run_on.change(estimate, inputs, section.estimate, api_name=False)
    for control in inputs:
        control.change(estimate, inputs, section.estimate, api_name=False)
    run_on.change(
        lambda choice: (
            provider_section.list_models(config, None) if choice == PROVIDERS else gr.skip()
        ),
        run_on,
        section.model,
        api_name=False,
    )
    section.model.change(provider_section.list_providers, section.model, section.provider)
    provider_event = section.button.click(
        run_provider,
        [*inputs, view],
        outputs,
        api_name="evaluate_provider",
        concurrency_limit=1,  # one provider run at a time: the token lives in the environment
        concurrency_id="providers",
    )
    section.stop.click(provider_section.stop_run, None, status, api_name=False)
    for control in (kind, tasks, limit, model):
        control.change(
            lambda kind_, tasks_, limit_: quota_text(config, kind_, tasks_, limit_),
            [kind, tasks, limit],
            [quota, quota_limit],
            api_name=False,
        )
    quota_limit.click(
        lambda kind_, tasks_: quota_fit(config, kind_, tasks_), [kind, tasks], limit, api_name=False
    )
    return EvaluateTab(event, run_name, provider_event)


def evaluate_on_provider(
    config: SpaceConfig,
    asked: providers.ProviderRequest,
    view: str,
    oauth_token: gr.OAuthToken | None,
    request: gr.Request,
    progress: Any,
):
    """One provider run for the page: the visitor's token for this run only; every failure a
    ``gr.Error`` without it."""
    from bla_eval.redact import register, shown

    if not config.providers:
        raise gr.Error(provider_section.NOT_OFFERED)
    if oauth_token is None:
        raise gr.Error(provider_section.NEEDS_SIGN_IN, title="Sign in first")
    register(oauth_token.token)
    try:
        model = validate_model_id(asked.model)
        if not asked.tasks:
            raise ValueError("Select at least one task.")
        asked = replace(asked, model=model, limit=datapoint_limit(asked.limit))
        run_config = asked.run_config(config.router, config.dataset, config.runs_dir)

        def report(done: int, total: int, desc: str) -> None:
            progress((done, total), desc=desc, unit="datapoints")

        stop = provider_section.stop_flag(request)
        try:
            results = providers.evaluate_with_token(run_config, oauth_token.token, report, stop)
        finally:
            provider_section.forget(request)
    except providers.Stopped as err:
        raise gr.Error(str(err), title="Stopped") from None
    except ModelRejected as err:
        raise gr.Error(str(err), title="Model not accepted") from None
    except Exception as err:  # any engine failure: one masked line, and the app keeps serving
        message = shown(failure_message(str(asked.model), err))
        log.warning("provider run of %r failed: %s", shown(str(asked.model)), message)
        raise gr.Error(message, title="Evaluation failed") from None
    run = publish(config, results_store.Run(run_config.output_dir, results))
    return render(run, view, listing=listing(config, run))


def quota_text(config, kind, tasks, limit):
    """On ZeroGPU: the GPU time this run reserves and how many datapoints fit each daily quota
    (``gpu.quota_fit``); elsewhere nothing."""
    from .gpu import QUOTAS, estimate_gpu_seconds, on_zero_gpu, quota_fit

    if not on_zero_gpu() or not tasks:
        return "", gr.Button(visible=False)
    try:
        n = count_datapoints(config, tasks, datapoint_limit(limit))
    except Exception:  # a bad limit or the dataset unreachable: the run says so
        return "", gr.Button(visible=False)
    kind = None if kind in (None, "", AUTO) else kind
    fits = ", ".join(f"{who} {quota_fit(seconds, kind)}" for who, seconds in QUOTAS.items())
    text = (
        f"ZeroGPU: this run reserves about {estimate_gpu_seconds(n, kind)} s of GPU time. "
        f"Datapoints that fit a day's quota at the estimated rate: {fits}."
    )
    return text, gr.Button(visible=True)


def quota_fit(config, kind, tasks):
    """The datapoints per task that fit the smallest daily ZeroGPU quota."""
    from .gpu import QUOTAS
    from .gpu import quota_fit as fit

    kind = None if kind in (None, "", AUTO) else kind
    return max(1, fit(min(QUOTAS.values()), kind) // max(1, len(tasks or [1])))


def detect_message(config: SpaceConfig, text: str) -> str:
    """The detected kind of ``text`` as a Markdown line (or why it cannot be detected)."""
    from bla_eval.scorers import detect_kind

    if not (text or "").strip():
        return ""
    try:
        model = validate_model_id(text, allow_local=config.allow_local_models)
        kind = detect_kind(model, trust_remote_code=False)
    except Exception as err:  # shown in the page; the run button reports it again
        return f"Kind not detected: {err}"
    return f"Detected kind: **{kind}** ({kind_help(kind)})"


def evaluate_in_page(config: SpaceConfig, request: EvaluationRequest, view: str, progress: Any):
    """Run one evaluation for the page; every failure becomes a ``gr.Error`` the page shows."""
    text = request.model
    try:
        progress(0, desc="checking the model")
        model, kind, n_params = resolve_model(config, text, request.kind)
        run = run_evaluation(config, replace(request, model=model, kind=kind), progress)
    except ModelRejected as err:
        raise gr.Error(str(err), title="Model not accepted") from None
    except Exception as err:  # any engine failure: report it and keep serving
        log.exception("evaluation of %r failed", text)
        raise gr.Error(failure_message(text, err), title="Evaluation failed") from None
    detected = request.kind in (None, "", AUTO)
    return render(run, view, detected, n_params, listing(config, run))


def failure_message(model: str, err: BaseException) -> str:
    """A readable sentence for an engine failure."""
    if "out of memory" in str(err).lower():
        return f"{model!r} ran out of memory; try a smaller model or a smaller limit."
    if "unknown model kind" in str(err):
        return f"{err} (here: pick the kind in the 'Model kind' menu)"
    if isinstance(err, (ValueError, FileNotFoundError, OSError)):
        return str(err)
    return f"{type(err).__name__} while evaluating {model!r}: {err}"


def listing(config: SpaceConfig, run: results_store.Run) -> str:
    """Whether the Leaderboard lists ``run``, in one sentence (``views.listing_line``)."""
    runs = results_store.list_runs(config.folders, run.benchmark)
    return views.listing_line(run.results, [views.board_document(r.results, r.cell) for r in runs])


def render(
    run: results_store.Run,
    view: str,
    detected: bool = False,
    n_params: int | None = None,
    listing: str = "",
):
    """Outputs of the tab for a finished run: status (with ``listing``, where the Leaderboard
    lists it), table, one plot per task, file, run name."""
    res = run.results
    configs = list(res.get("tasks", {}))
    size = f" · {human_count(n_params)} parameters" if n_params else ""
    seconds = (res.get("timings") or {}).get("total_s")
    timing = f" in {seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
    bench = views.benchmark_of(res)
    counts = ", ".join(f"{bench.task_label(c)} {res['tasks'][c]['n']}" for c in configs)
    status = (
        f"### {views.display_name(res)}\n"
        f"Kind **{res.get('kind')}**{' (auto-detected)' if detected else ''}{size} · "
        f"datapoints scored: {counts}{timing}. "
        f"Browse its answers in the **Explore** tab. {listing}"
    )
    hidden = gr.BarPlot(visible=False)
    plots = [_plot(res, view, c) if c in configs else hidden for c in task_labels()]
    file = str(Path(run.path) / results_store.RESULTS_FILE)
    table = views.metrics_table(res, view)
    scoring = providers.scoring_of(res)
    if scoring:
        status += f" Scored from: {scoring} (results.json: protocol.scoring_path)."
    return (status, table, *plots, file, run.name, gr.Column(visible=True))


def _plot(results: dict, view: str, config: str) -> gr.BarPlot:
    """The bar plot of one task, bars in table order (this run, chance, references)."""
    frame = views.bar_frame(results, view, config)
    metric = views.benchmark_of(results).headline[view]
    label = views.benchmark_of(results).task_label(config)  # short: a long title is cut
    title = f"{label}: {views.METRIC_NAMES.get(metric, metric.replace('_', ' '))} (%)"
    return gr.BarPlot(frame, visible=True, title=title, sort=list(frame["model"]))
