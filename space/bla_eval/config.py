"""The settings of one evaluation run, in one documented object (CLI, Space and tests build it).

Each field is declared once: its default, and in its metadata its help line and, where the command
line needs them, its flag (default: ``--`` + the name with dashes), argparse type and choices, and
a number's bounds (``cli_common.bounded``: the parser's type and ``RunConfig``'s check read them).
``bla-eval``'s parser is derived from these fields (``bla_eval.cli_common.add_field_options``).
Choices that come from a registry are a callable, called only when the parser is built. A setting
that decides the scores says so in its metadata (``resume``): ``run.json`` records it and a resume
with another value is refused (``bla_eval.runs.settings``). The settings objects of the
scorers and of the endpoint take their fields from a run by name (:meth:`RunConfig.settings_for`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from bla_metric.likelihood import SCORES
from bla_metric.registry import load

from .api.settings import (
    DEFAULT_CONCURRENCY,
    MAX_ANSWER_TOKENS,
    MAX_CONCURRENCY,
    MAX_PRICE_USD,
    MAX_REQUEST_TIMEOUT_S,
    MAX_RETRIES,
    MAX_TOP_LOGPROBS,
    MIN_REQUEST_TIMEOUT_S,
    PROVIDERS,
    SCORING,
    check_api_fields,
)
from .cli_common import bounded, check_bounds, display_text, text_problem
from .controls import check_control
from .devices import check_device
from .protocols import DEFAULT_PROTOCOL, ORDERS, get_protocol
from .protocols.templates import get_template, sweep_names

Settings = TypeVar("Settings")

MAX_LIMIT = 1_000_000
"""The most datapoints per task ``--limit`` may ask for (more than any benchmark holds)."""
MAX_BATCH_SIZE = 4096
"""The most sentences or pairs per forward pass (``--batch-size``)."""
MAX_IMAGES_PER_BATCH = 1024
"""The most images decoded and held at once (``--images-per-batch``)."""
MAX_PARALLEL = 1024
"""The most devices of ``--tensor-parallel-size`` and copies of ``--data-parallel-size``."""
MAX_MODEL_LEN = 10_000_000
"""The most tokens ``--max-model-len`` may ask for."""


def check_prompts(config: RunConfig, protocol: Any) -> None:
    """``prompt`` known, ``prompts`` a list without repeats (``all`` expanded in place), not
    both, and neither under a protocol that generates its answers with its own strings."""
    if config.prompt is not None:
        get_template(config.prompt)
    object.__setattr__(config, "prompts", sweep_names(config.prompts) if config.prompts else ())
    if config.prompt is not None and config.prompts:
        raise ValueError("prompt and prompts: give one template or a sweep, not both")
    if (config.prompt is not None or config.prompts) and protocol.generates_answers:
        raise ValueError(
            f"prompt: protocol {protocol.name!r} asks with its own template ({protocol.template!r})"
        )
    check_control(config.control)


def registry(path: str) -> Callable[[], Sequence[str]]:
    """Choices read from ``module:name`` (a tuple or a function giving one) when called."""

    def names() -> tuple[str, ...]:
        value = load(path)
        return tuple(value() if callable(value) else value)

    return names


class Recorded(Enum):
    """How ``run.json`` records a setting that decides the scores."""

    ALWAYS = "always"
    BY_KIND = "by kind"
    """Its value for a kind that reads it (its row of :data:`KIND_READS`), else None."""
    BY_PROTOCOL = "by protocol"
    """Only when the run's protocol names it (its spec's ``resume_settings``)."""
    IF_READ = "if read"
    """Only for a kind that reads it (its row of :data:`KIND_READS`): the endpoint's settings."""


MAX_PMI_ALPHA = 10.0
"""The largest ``--pmi-alpha``."""


def check_score(config: RunConfig, protocol: Any) -> None:
    """``--score`` other than yes-no asks no question: zero-shot only, one condition."""
    if config.score not in SCORES:
        raise ValueError(f"unknown score {config.score!r}: use one of {', '.join(SCORES)}")
    if config.pmi_alpha is not None and config.score != "caption-pmi":
        raise ValueError("--pmi-alpha is the weight of --score caption-pmi")
    if config.score == "yes-no":
        return
    if protocol.generates_answers or protocol.name != DEFAULT_PROTOCOL:
        raise ValueError(
            f"--score {config.score}: the sentence's likelihood is scored zero-shot; protocol "
            f"{protocol.name!r} asks a question with demonstrations or generates answers"
        )
    for name, value in (("--prompt", config.prompt), ("--prompts", config.prompts)):
        if value:
            raise ValueError(f"--score {config.score} asks no question: {name} does not apply")


def option(default: Any = None, help: str = "", resume: bool | Recorded = False, **cli: Any) -> Any:
    """A ``RunConfig`` field: its default (``MISSING``: required), help line, whether it decides
    the scores (``resume``: True or a :class:`Recorded` rule; ``run.json`` records it, or what
    its ``record`` function, ``module:name``, makes of it, and a resume must match it), its bounds
    (``**bounded(low, high)``: the parser's type and ``RunConfig``'s check) and command-line
    metadata (``flag``, ``type``, ``choices``, ``choice_help``: kind -> its line)."""
    recorded = Recorded.ALWAYS if resume is True else resume or None
    return field(default=default, metadata={"help": help, "resume": recorded, **cli})


@dataclass(frozen=True)
class RunConfig:
    """One run of ``bla_eval.run.evaluate``; each field's help line is in its metadata
    (``bla-eval --help`` shows them)."""

    model: str = option(
        MISSING,
        "Hub id, local folder, open_clip name, .gguf file, a bundled short name (smollm2) or "
        "the name an endpoint knows; printable characters only",
        resume=True,
        type=display_text,
    )
    output_dir: Path = option(
        MISSING, "folder for results.json, scores.jsonl and run.json", flag="--output"
    )
    benchmark: str = option(
        "bla",
        "benchmark to score",
        resume=True,
        choices=registry("bla_eval.benchmarks:benchmark_names"),
    )
    data: str | None = option(
        help="Hub dataset id or local dataset folder (default: the benchmark's own; for bla: "
        "$BLA_DATASET, else ./bla_dataset if built there, else the Hub id)",
        resume=True,
    )
    tasks: tuple[str, ...] = option(
        (),
        "tasks to score, e.g. 'ap co' or 'ap,co' (BLA: ap, co, rc or config names; "
        "default: every task of the benchmark)",
        resume=True,
    )
    split: str = option("test", "dataset split; for BLA, test is the whole benchmark", resume=True)
    limit: int | None = option(
        help=f"score only the first N items of each task (at most {MAX_LIMIT})",
        resume=True,
        **bounded(1, MAX_LIMIT),
    )
    batch_size: int | None = option(
        help="sentences / pairs per model forward pass (default: the kind's; at most "
        f"{MAX_BATCH_SIZE}); halved automatically on out-of-memory",
        **bounded(1, MAX_BATCH_SIZE),
    )
    images_per_batch: int = option(
        32,
        f"distinct images decoded and scored together (at most {MAX_IMAGES_PER_BATCH})",
        **bounded(1, MAX_IMAGES_PER_BATCH),
    )
    device: str = option("auto", "auto, cpu, cuda, cuda:N, mps, xpu or xpu:N")
    dtype: str | None = option(
        help="float32, float16 or bfloat16 (default: float32 on CPU, bfloat16 on CUDA)",
        resume=True,
    )
    kind: str | None = option(
        help="model kind (default: detected from the model)",
        resume=True,
        choices=registry("bla_eval.scorers:kinds"),
        choice_help=lambda: load("bla_eval.scorers:kind_helps")(),
    )
    resume: bool = option(False, "keep the items already in scores.jsonl and score the rest")
    overwrite: bool = option(
        False, "start again in the folder of a stopped or finished run, discarding its scores"
    )
    trust_remote_code: bool = option(False, "allow the model repo's own code")
    similarity: str = option(
        "cosine",
        "dual encoders: cosine, or clipscore = 2.5 * max(cosine, 0) as in the paper",
        resume=Recorded.BY_KIND,
        choices=registry("bla_eval.scorers.base:SIMILARITIES"),
    )
    gguf_file: str | None = option(help="GGUF file name inside --model (text kind)", resume=True)
    protocol: str = option(
        DEFAULT_PROTOCOL,
        "evaluation protocol: zero-shot, or in-context learning on the learning test splits, "
        "icl-sd / icl-dd, for generative kinds (paper §6); paper, paper-icl-sd, paper-icl-dd: "
        "the authors' own (generated answers, their prompt strings and demonstrations)",
        resume=True,
        choices=registry("bla_eval.protocols:protocol_names"),
    )
    icl_order: str = option(
        "true-first",
        "ICL: order of the demonstrations (shuffled uses --icl-seed)",
        resume=Recorded.BY_PROTOCOL,
        choices=registry("bla_eval.protocols:ORDERS"),
    )
    icl_seed: int = option(
        0,
        "ICL: seed of the shuffled order and of the paper-icl-* coin flips",
        resume=Recorded.BY_PROTOCOL,
    )
    prompt: str | None = option(
        help="generative, endpoint and text kinds: the prompt template asked with (default: the "
        "protocol's, bla; the text kind then scores each sentence's own log-probability)",
        resume=True,
        choices=registry("bla_eval.protocols.templates:template_names"),
    )
    prompts: tuple[str, ...] = option(
        (),
        "a sensitivity sweep: score every template named, e.g. 'bla,blip2,mme', or all, in one "
        "run (each image encoded once); the first is the run's headline",
        resume=True,
    )
    control: str | None = option(
        help="an image-versus-prior control scored beside the real images: blank (an image of "
        "the original size and mean colour) or shuffled (another datapoint's image of the same "
        "task, chosen with --control-seed); results.json gives the image gain",
        resume=True,
        choices=registry("bla_eval.controls:CONTROLS"),
    )
    control_seed: int = option(0, "the seed of --control shuffled", resume=True)
    score: str = option(
        "yes-no",
        "generative and vllm kinds: what the model is asked: yes-no = P(yes) to the yes/no "
        "question; caption = log P(sentence | image), the sentence's likelihood; caption-pmi = "
        "that minus alpha * log P(sentence | no image), the correction for the language prior",
        resume=True,
        choices=SCORES,
    )
    pmi_alpha: float | None = option(
        help="caption-pmi: the prior's weight alpha (default: chosen on the learning split of "
        "the run's tasks, never on the scored split; 1 = pointwise mutual information)",
        resume=True,
        **bounded(0, MAX_PMI_ALPHA),
    )
    regions: str | None = option(
        help="region-itm kind (LXMERT, VOLTA's ViLBERT and LXMERT): the region features read, "
        "a .tsv file in the authors' layout (img_id = the dataset's image_id), a region store "
        "folder, or the bottom-up-attention detector's folder or Hub id (run once per image, "
        "kept in the cache)",
        resume=Recorded.BY_KIND,
        record="bla_eval.regions.source:regions_record",
    )
    device_map: str | None = option(
        help="generative models: from_pretrained(device_map=...), e.g. auto: one model over "
        "the GPUs of one machine"
    )
    endpoint: str | None = option(
        help="score a model served behind an OpenAI-compatible chat-completions API (kind "
        "openai-api): its base URL, e.g. http://127.0.0.1:8000/v1, or one of "
        f"{', '.join(PROVIDERS)}; --model is then the name the server knows",
        resume=Recorded.IF_READ,
        record="bla_eval.api.settings:recorded_endpoint",
    )
    api_key_env: str | None = option(
        help="environment variable holding the endpoint's API key (default: OPENAI_API_KEY; "
        "GEMINI_API_KEY / ANTHROPIC_API_KEY for --endpoint gemini / anthropic); the key is read "
        "from the environment only and written nowhere"
    )
    concurrency: int = option(
        DEFAULT_CONCURRENCY,
        f"endpoint: requests in flight at once (at most {MAX_CONCURRENCY})",
        **bounded(1, MAX_CONCURRENCY),
    )
    request_timeout: float = option(
        60.0,
        "endpoint: seconds one request may take, first byte sent to last byte read"
        f" (at most {MAX_REQUEST_TIMEOUT_S})",
        **bounded(MIN_REQUEST_TIMEOUT_S, MAX_REQUEST_TIMEOUT_S),
    )
    max_retries: int = option(
        5,
        "endpoint: retries of a request answered 408, 429 or 5xx (or cut off), with "
        f"exponential backoff that honours Retry-After (at most {MAX_RETRIES})",
        **bounded(0, MAX_RETRIES),
    )
    top_logprobs: int = option(
        MAX_TOP_LOGPROBS,
        f"endpoint: alternatives asked for the first answer token (at most {MAX_TOP_LOGPROBS})",
        resume=Recorded.IF_READ,
        **bounded(1, MAX_TOP_LOGPROBS),
    )
    max_answer_tokens: int = option(
        1,
        "endpoint, generation path: tokens of the generated answer (1: the first answer "
        f"token; more for models that reason before they answer; at most {MAX_ANSWER_TOKENS})",
        resume=Recorded.IF_READ,
        **bounded(1, MAX_ANSWER_TOKENS),
    )
    api_scoring: str = option(
        "auto",
        "endpoint: auto = P(yes) from top log-probabilities where the endpoint returns them, "
        "else the generated answer classified; or force logprobs or generation",
        choices=SCORING,
        resume=Recorded.IF_READ,
    )
    text_only: bool = option(
        False,
        "endpoint: send the question without the image (text-only models)",
        resume=Recorded.IF_READ,
    )
    price_input: float | None = option(
        help="endpoint: US dollars per million prompt tokens (the cost in results.json; at most "
        f"{MAX_PRICE_USD:g})",
        **bounded(0, MAX_PRICE_USD),
    )
    price_output: float | None = option(
        help=f"endpoint: US dollars per million completion tokens (at most {MAX_PRICE_USD:g})",
        **bounded(0, MAX_PRICE_USD),
    )
    name: str | None = option(
        help="the model's display name in tables, plots and comparisons (results.json's "
        "display_name; default: the model id); printable characters only",
        type=display_text,
    )
    table_format: str | None = option(
        help="print the tables with one number per cell, bootstrap 95% intervals beside, in "
        "this format (default: the Markdown report)",
        choices=("markdown", "latex", "csv"),
    )
    plot: bool = option(
        False, "write the run's plot (metrics with 95% intervals, chance) as results.png"
    )
    tensor_parallel_size: int = option(
        1,
        f"vllm kind: GPUs one copy of the model is split over (at most {MAX_PARALLEL})",
        **bounded(1, MAX_PARALLEL),
    )
    data_parallel_size: int = option(
        1,
        f"vllm kind: copies of the model, each on its own GPUs (at most {MAX_PARALLEL})",
        **bounded(1, MAX_PARALLEL),
    )
    max_model_len: int | None = option(
        help=f"vllm kind: the longest prompt plus answer in tokens (default: the model's; at "
        f"most {MAX_MODEL_LEN})",
        **bounded(1, MAX_MODEL_LEN),
    )
    gpu_memory_utilization: float | None = option(
        help="vllm kind: fraction (0-1] of GPU memory for the weights and the KV cache (on a "
        "CPU: of the machine's memory; default vLLM's 0.92)"
    )
    enforce_eager: bool = option(
        False,
        "vllm kind: run the model eagerly, without torch.compile or CUDA graphs (a faster "
        "engine start, steps maybe slower: for short runs)",
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "output_dir", Path(self.output_dir))
        object.__setattr__(self, "tasks", tuple(self.tasks))
        check_bounds(self)
        share = self.gpu_memory_utilization
        if share is not None and not (
            isinstance(share, (int, float)) and not isinstance(share, bool) and 0 < share <= 1
        ):
            raise ValueError(f"gpu_memory_utilization must be a fraction in (0, 1], got {share!r}")
        check_device(self.device)
        for shown in ("model", "name"):  # names of every table and record
            value = getattr(self, shown)
            if isinstance(value, str) and (problem := text_problem(value)) is not None:
                raise ValueError(f"{shown} {value!r} {problem}")
        if self.icl_order not in ORDERS:
            raise ValueError(
                f"unknown icl_order {self.icl_order!r}: use one of {', '.join(ORDERS)}"
            )
        protocol = get_protocol(self.protocol)  # an unknown protocol is named with the choices
        check_prompts(self, protocol)
        if self.table_format not in (None, "markdown", "latex", "csv"):
            raise ValueError(
                f"unknown table_format {self.table_format!r}: use markdown, latex or csv"
            )
        check_api_fields(self)
        check_score(self, protocol)
        if self.resume and self.overwrite:
            raise ValueError(
                "--resume and --overwrite: give one (--resume keeps the scored datapoints, "
                "--overwrite discards them)"
            )

    def settings_for(self, settings: type[Settings], **resolved: Any) -> Settings:
        """The dataclass ``settings`` built from this run by field name: each of its fields
        that ``RunConfig`` declares takes this run's value, or the value ``resolved`` gives
        (what the run resolved from it: this process's device, the endpoint's URL); its other
        fields take ``resolved``'s values or their defaults."""
        names = {f.name for f in fields(self)}
        taken = {f.name: getattr(self, f.name) for f in fields(settings) if f.name in names}
        return settings(**(taken | resolved))

    def with_(self, **changes: Any) -> RunConfig:
        """A copy with some settings changed."""
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """Every setting as JSON values."""
        doc = asdict(self)
        doc["output_dir"] = str(self.output_dir)
        doc["tasks"] = list(self.tasks)
        return doc


def run_default(name: str) -> Any:
    """The default of ``RunConfig``'s field ``name``, the default of a field of the same name
    in a dataclass built by ``RunConfig.settings_for`` (``scorers.LoadOptions``)."""
    return next(f.default for f in fields(RunConfig) if f.name == name)


LIKELIHOOD = ("scores_captions", "has no sentence likelihood (the generative kind scores it)")
QUESTION = ("asks_question", "asks no question")
ENGINE = ("engine_options", "runs no engine of its own (an option of the vllm kind)")
ENDPOINT = ("remote", "is served behind no endpoint (an option of the openai-api kind)")
KIND_READS: dict[str, tuple[str, str]] = {
    "similarity": ("takes_similarity", "compares no embeddings (dual encoders do)"),
    "score": LIKELIHOOD,
    "pmi_alpha": LIKELIHOOD,
    "prompt": QUESTION,
    "prompts": QUESTION,
    "regions": ("takes_regions", "reads images, not region features (the region-itm kind does)"),
    "device_map": ("takes_device_map", "places no model by device_map (the generative kind does)"),
    **dict.fromkeys(
        (
            "tensor_parallel_size",
            "data_parallel_size",
            "max_model_len",
            "gpu_memory_utilization",
            "enforce_eager",
        ),
        ENGINE,
    ),
    **dict.fromkeys(
        (
            "endpoint",
            "api_key_env",
            "concurrency",
            "request_timeout",
            "max_retries",
            "top_logprobs",
            "max_answer_tokens",
            "api_scoring",
            "text_only",
            "price_input",
            "price_output",
        ),
        ENDPOINT,
    ),
}
"""The settings only some kinds read: field -> (the scorer class attribute that is True for a kind
that reads it, what a kind that does not lacks). A run that gives one (a value other than the
default) to a kind that does not read it is refused (:func:`check_kind_reads`)."""
EVERY_KIND = frozenset(
    {
        "model",
        "output_dir",
        "benchmark",
        "data",
        "tasks",
        "split",
        "limit",
        "batch_size",
        "images_per_batch",
        "device",
        "dtype",
        "kind",
        "resume",
        "overwrite",
        "trust_remote_code",
        "gguf_file",
        "protocol",
        "icl_order",
        "icl_seed",
        "control",
        "control_seed",
        "name",
        "table_format",
        "plot",
    }
)
"""The settings every kind's run reads (the protocol, the control and the gguf file are checked
against the kind by their own rules: ``Protocol.check_kind``, ``run._prepare``, the loader)."""


def check_kind_table(config_class: type = RunConfig) -> None:
    """Each field of ``config_class`` is in :data:`KIND_READS` or :data:`EVERY_KIND`, and
    nothing else is (a TypeError: a new setting without its row fails when this module loads)."""
    names = {f.name for f in fields(config_class)}
    missing = names - KIND_READS.keys() - EVERY_KIND
    unknown = (KIND_READS.keys() | EVERY_KIND) - names
    if missing or unknown:
        raise TypeError(
            f"bla_eval.config: say which kinds read {sorted(missing)} (KIND_READS or "
            f"EVERY_KIND); no such settings: {sorted(unknown)}"
        )


check_kind_table()


def flag_of(name: str) -> str:
    """The command-line flag of a ``RunConfig`` field."""
    f = next(f for f in fields(RunConfig) if f.name == name)
    return f.metadata.get("flag") or "--" + name.replace("_", "-")


def check_kind_reads(config: RunConfig, scorer: Any) -> None:
    """ValueError naming the first setting of :data:`KIND_READS` that ``config`` gives and the
    kind of ``scorer`` (its class) does not read."""
    for f in fields(config):
        if f.name not in KIND_READS:
            continue
        value, (reads, lacks) = getattr(config, f.name), KIND_READS[f.name]
        if value == f.default or getattr(scorer, reads):
            continue
        shown = "" if isinstance(value, (bool, tuple)) else f" {value}"
        raise ValueError(f"{flag_of(f.name)}{shown}: model kind {scorer.kind!r} {lacks}")
