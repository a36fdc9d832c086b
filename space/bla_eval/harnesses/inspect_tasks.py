"""BLA as inspect-ai tasks: ``inspect eval bla_eval/active_passive --model openai-api/NAME/MODEL``.

One inspect sample per datapoint. Its solver asks the model about each of the four sentences with
the engine's chat messages (``bla_eval.api.messages.api_messages``: the image, then the prompt
template's question) and scores each answer as the endpoint kind does
(``bla_eval.api.answers``): P(yes) / (P(yes) + P(no)) from the first answer token's top
log-probabilities, or, where the model's API returns none (``scoring="auto"`` decides with the
first request of the run, as ``bla-eval --endpoint`` does) or with ``scoring="generation"``, the
generated answer classified by the authors' rule. The metrics are BLA's (ranking, binary,
pairwise by caption type), computed by the benchmark's ``summarise`` with ``bla_metric`` over all
datapoints, so a run gives the numbers ``bla-eval`` gives for the same model and endpoint; with
them ``answer_match`` (and its bootstrap interval), the value of the dataset's ``eval.yaml`` task
of the same id (``answer_match.py``), which ``bla-eval export`` publishes. The dataset's location
(``data``) is the log's ``eval.dataset.location``.

Task parameters (``-T name=value``): ``data`` (dataset folder or Hub id; default as bla-eval's),
``scoring`` (auto, logprobs, generation), ``template`` (a prompt template's name),
``top_logprobs`` (1 to 20), ``max_answer_tokens`` (1 to 100,000: the bounds of ``RunConfig``'s
fields, refused in one line outside them). ``--limit N`` takes the first N datapoints.
"""

from __future__ import annotations

import asyncio
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import Generate, TaskState, solver

from bla_metric import formulas

from ..api.answers import Answer, from_logprobs, from_text
from ..api.messages import api_messages, data_url
from ..api.settings import MAX_TOP_LOGPROBS, SCORING
from ..benchmarks.bla import BENCHMARK, read_items
from ..cli_common import check_field
from ..config import RunConfig
from ..items import Item, encoded_image
from ..protocols.templates import DEFAULT_TEMPLATE, get_template
from . import answer_match

RECORD = "bla_record"
"""The store key of a datapoint's record (the fields of a ``scores.jsonl`` line)."""


def to_inspect(messages: list[dict[str, Any]]) -> list[ChatMessage]:
    """The engine's OpenAI chat messages as inspect messages (same turns, same part order)."""
    out: list[ChatMessage] = []
    for message in messages:
        content = message["content"]
        if not isinstance(content, str):
            content = [
                ContentImage(image=part["image_url"]["url"])
                if part["type"] == "image_url"
                else ContentText(text=part["text"])
                for part in content
            ]
        role = ChatMessageUser if message["role"] == "user" else ChatMessageAssistant
        out.append(role(content=content))
    return out


def alternatives(output: ModelOutput) -> list[dict[str, Any]] | None:
    """The first answer token's top log-probabilities as the endpoint kind reads them."""
    logprobs = output.choices[0].logprobs if output.choices else None
    if logprobs is None or not logprobs.content or not logprobs.content[0].top_logprobs:
        return None
    return [{"token": t.token, "logprob": t.logprob} for t in logprobs.content[0].top_logprobs]


class ScoringPath:
    """The run's scoring path, decided once (``auto``) by the first request, as the endpoint kind
    decides it: top log-probabilities in the response keep that path, else generation."""

    def __init__(self, scoring: str, top_logprobs: int, max_answer_tokens: int) -> None:
        if scoring not in SCORING:
            raise ValueError(f"scoring {scoring!r}: use one of {', '.join(SCORING)}")
        check_field(RunConfig, "top_logprobs", top_logprobs)
        check_field(RunConfig, "max_answer_tokens", max_answer_tokens)
        self.path = None if scoring == "auto" else scoring
        self.lock = asyncio.Lock()
        self.logprobs = GenerateConfig(
            temperature=0, max_tokens=1, logprobs=True, top_logprobs=top_logprobs
        )
        self.generation = GenerateConfig(temperature=0, max_tokens=max_answer_tokens)

    async def answer(self, messages: list[ChatMessage]) -> Answer:
        """One scored answer on the run's path."""
        model = get_model()
        if self.path is None:
            async with self.lock:
                if self.path is None:
                    output = await model.generate(messages, config=self.logprobs)
                    top = alternatives(output)
                    self.path = "logprobs" if top is not None else "generation"
                    if top is not None:
                        return from_logprobs(top, output.completion)
        if self.path == "logprobs":
            output = await model.generate(messages, config=self.logprobs)
            top = alternatives(output)
            return (
                from_text(output.completion)
                if top is None
                else from_logprobs(top, output.completion)
            )
        output = await model.generate(messages, config=self.generation)
        return from_text(output.completion)


def sample(item: Item, template: str) -> Sample:
    """One datapoint as an inspect sample: its input is the question about its first sentence
    with its image (the original bytes as a data URL); its sentences, labels and types are in the
    metadata."""
    url = data_url(encoded_image(item, item.images[0]))
    first = api_messages(item.captions[0], (), url, get_template(template))
    return Sample(
        id=item.id,
        input=to_inspect(first),
        target=[str(label) for label in item.labels[0]],
        metadata={
            "task": item.task,
            "captions": list(item.captions),
            "labels": list(item.labels[0]),
            "caption_types": list(item.caption_types),
        },
    )


def image_url(state: TaskState) -> str:
    """The data URL of the sample's image (its input's first image part)."""
    for message in state.input if isinstance(state.input, list) else ():
        for part in message.content if isinstance(message.content, list) else ():
            if isinstance(part, ContentImage):
                return part.image
    raise ValueError(f"sample {state.sample_id} has no image")


@solver
def ask_each_sentence(template: str, scoring: str, top_logprobs: int, max_answer_tokens: int):  # type: ignore[no-untyped-def]
    """Ask the yes/no question about each sentence of the datapoint, with its image, on the
    run's scoring path."""
    prompt = get_template(template)
    path = ScoringPath(scoring, top_logprobs, max_answer_tokens)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        url = image_url(state)
        answers = [
            await path.answer(to_inspect(api_messages(sentence, (), url, prompt)))
            for sentence in state.metadata["captions"]
        ]
        meta = state.metadata
        state.store.set(
            RECORD,
            {
                "task": meta["task"],
                "id": str(state.sample_id),
                "scores": [a.score for a in answers],
                "labels": meta["labels"],
                "caption_types": meta["caption_types"],
                "answers": [a.text for a in answers],
                "outcomes": [a.outcome for a in answers],
                "scoring_path": path.path,
            },
        )
        return state

    return solve


def flat(summary: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """The numbers of a nested summary as ``view.metric`` keys (inspect's metric values)."""
    out: dict[str, float] = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out |= flat(value, name + ".")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = float(value)
    return out


def hub_metrics(records: list[dict[str, Any]]) -> dict[str, float]:
    """The value of the dataset's ``eval.yaml`` task of the same id (``answer_match``: yes/no
    answer accuracy per sentence) and its bootstrap 95% interval."""
    if not records:
        return {}
    answers = [r["answers"] for r in records]
    labels = [r["labels"] for r in records]
    low, high = answer_match.answer_interval(answers, labels)
    name = answer_match.METRIC
    value = answer_match.answer_accuracy(answers, labels)
    return {name: value, f"{name}_ci_low": low, f"{name}_ci_high": high}


@metric
def bla_metrics() -> Metric:
    """BLA's metrics of the task over every datapoint (the benchmark's ``summarise``)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        records = [s.score.metadata[RECORD] for s in scores if s.score.metadata]
        return flat(BENCHMARK.summarise(records, True)) | hub_metrics(records)

    return compute


@scorer(metrics=[bla_metrics()])
def bla_scorer():  # type: ignore[no-untyped-def]
    """A datapoint's record; its value is the datapoint's ranking sentence accuracy."""

    async def score(state: TaskState, target: Target) -> Score:
        record = state.store.get(RECORD)
        value = formulas.ranking_metrics([record["scores"]], [record["labels"]])
        return Score(
            value=value["sentence_accuracy"],
            answer=" | ".join(record["answers"]),
            metadata={RECORD: record},
        )

    return score


def bla_task(
    config: str,
    data: str | None = None,
    scoring: str = "auto",
    template: str = DEFAULT_TEMPLATE,
    top_logprobs: int = MAX_TOP_LOGPROBS,
    max_answer_tokens: int = 1,
) -> Task:
    """The inspect task of one BLA construction (split ``test``)."""
    ScoringPath(scoring, top_logprobs, max_answer_tokens)  # its errors before the data is read
    get_template(template)
    data = data or BENCHMARK.default_data()
    items = read_items(data, config)
    samples = [sample(item, template) for item in items]
    return Task(
        dataset=MemoryDataset(samples, name=f"bla/{config}", location=data),
        solver=ask_each_sentence(template, scoring, top_logprobs, max_answer_tokens),
        scorer=bla_scorer(),
        metadata={"benchmark": "bla", "config": config, "template": template},
    )


@task
def active_passive(
    data: str | None = None,
    scoring: str = "auto",
    template: str = DEFAULT_TEMPLATE,
    top_logprobs: int = MAX_TOP_LOGPROBS,
    max_answer_tokens: int = 1,
) -> Task:
    """BLA active-passive voice (AP)."""
    return bla_task("active_passive", data, scoring, template, top_logprobs, max_answer_tokens)


@task
def coordination(
    data: str | None = None,
    scoring: str = "auto",
    template: str = DEFAULT_TEMPLATE,
    top_logprobs: int = MAX_TOP_LOGPROBS,
    max_answer_tokens: int = 1,
) -> Task:
    """BLA coordination (CO)."""
    return bla_task("coordination", data, scoring, template, top_logprobs, max_answer_tokens)


@task
def relative_clause(
    data: str | None = None,
    scoring: str = "auto",
    template: str = DEFAULT_TEMPLATE,
    top_logprobs: int = MAX_TOP_LOGPROBS,
    max_answer_tokens: int = 1,
) -> Task:
    """BLA relative clauses (RC)."""
    return bla_task("relative_clause", data, scoring, template, top_logprobs, max_answer_tokens)
