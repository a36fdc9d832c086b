"""Generative VLMs run by vLLM's offline engine (``--kind vllm``, the ``vllm`` extra).

The generative kind's question and score, P(yes) / (P(yes) + P(no)) summed over the same yes/no
spellings, read from the exact log-probabilities of those tokens
(``SamplingParams(max_tokens=1, temperature=0, logprob_token_ids=[...])``), whether or not they
are among the most likely tokens. Every (image, question) pair of a run goes to the engine in
one batch, which vLLM schedules (continuous batching, prefix caching). The authors' protocols
generate with the model's default generation settings, as many new tokens as ``generate()``
would write (``max_tokens``), classified by the same answer parser. In-context protocols show
their demonstrations as chat turns about the one image, as the generative kind does.

Text-only causal LMs (a config without a vision part, :func:`text_only`) are scored as the
``text`` kind scores them, with no image: each sentence's mean token log-probability from the
engine's prompt log-probabilities (``prompt_logprobs=0``), or, with a prompt template, P(yes) of
the question without the image; the token ids are the text kind's (BOS, else EOS, first).

The engine is made once per process for each model and engine setting (``ENGINES``): runs of
the same model in one process (the Python API, the speed script) share it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from bla_metric.answers import answer_score

from ..protocols import get_protocol
from ..protocols.authors import generation_record
from ..protocols.templates import answer_token_ids, run_template
from ..queries import Query
from .base import LoadOptions, Scored, Scorer, regroup
from .capabilities import Capabilities, read_config
from .registry import register_kind
from .resolved_model import ResolvedModel

TRANSFORMERS_DEFAULT_MAX_LENGTH = 20
"""``GenerationConfig().max_length``: transformers treats this default as 20 new tokens."""

ENGINES: dict[tuple[Any, ...], Any] = {}
"""(model path, engine settings) -> the ``vllm.LLM`` made for them in this process."""


def engine_settings(options: LoadOptions, device_type: str) -> dict[str, Any]:
    """The ``vllm.LLM`` arguments a run's load options give on a ``device_type`` platform
    (unset: vLLM's default; the dtype as for every kind: float32 on a CPU, where vLLM's own
    default is bfloat16, else the model's)."""
    dtype = options.dtype or ("float32" if device_type == "cpu" else "auto")
    settings: dict[str, Any] = {
        "dtype": dtype,
        "tensor_parallel_size": options.tensor_parallel_size,
        "data_parallel_size": options.data_parallel_size,
        "trust_remote_code": options.trust_remote_code,
        "seed": 0,
    }
    if options.max_model_len is not None:
        settings["max_model_len"] = options.max_model_len
    if options.gpu_memory_utilization is not None:
        settings["gpu_memory_utilization"] = options.gpu_memory_utilization
    if options.enforce_eager:
        settings["enforce_eager"] = True
    if options.score != "yes-no":  # exact prompt log-probabilities, whatever the order
        settings["enable_prefix_caching"] = False
    if options.tensor_parallel_size == 1 and options.data_parallel_size == 1:
        # one device: the engine runs in this process, so a failure to start raises its own
        # message here (from worker processes only "see root cause above" comes back)
        settings["distributed_executor_backend"] = "uni"
    return settings


def get_engine(path: str, settings: dict[str, Any], images: bool = True) -> Any:
    """The engine of ``path`` with ``settings`` (``images``: one image per prompt, else text
    only), made on first use in this process."""
    key = (path, images, tuple(sorted(settings.items())))
    if key not in ENGINES:
        from vllm import LLM

        if settings.get("distributed_executor_backend") == "uni":
            os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        multimodal = {"limit_mm_per_prompt": {"image": 1}} if images else {}
        ENGINES[key] = LLM(model=path, **multimodal, **settings)
    return ENGINES[key]


def text_only(model: Capabilities) -> bool:
    """Whether a model is a text-only causal LM (the ``text`` kind's models): its config has
    no vision part."""
    from .text import TextScorer

    return (
        model.config is not None
        and getattr(model.config, "vision_config", None) is None
        and TextScorer.matches_config(model)
    )


def mean_prompt_log_prob(output: Any) -> float:
    """Mean log-probability of a prompt's tokens after its first, each given those before it
    (vLLM's prompt log-probabilities: the first token has none)."""
    pairs = zip(output.prompt_logprobs[1:], output.prompt_token_ids[1:], strict=True)
    values = [logprobs[token].logprob for logprobs, token in pairs]
    return sum(values) / max(len(values), 1)


def shutdown_engines() -> None:
    """Stop every engine this process made (its workers and memory are released)."""
    while ENGINES:
        _, llm = ENGINES.popitem()
        shutdown = getattr(getattr(llm, "llm_engine", None), "shutdown", None)
        if shutdown is not None:
            shutdown()


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (its type name when it has none)."""
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


@register_kind
class VllmScorer(Scorer):
    """Image-text-to-text and text-only models served by vLLM's offline ``LLM`` engine in this
    process."""

    kind = "vllm"
    probabilistic = True
    one_batch = True
    asks_question = True
    scores_captions = True
    engine_options = True
    default_batch_size = 1

    @classmethod
    def matches_config(cls, model: Capabilities) -> bool:
        from .generative import GenerativeScorer

        return GenerativeScorer.matches_config(model) or text_only(model)

    @classmethod
    def probabilistic_for(cls, model: ResolvedModel, prompted: bool = False) -> bool:
        """P(yes) of an image model; a text-only model's scores are the text kind's (P(yes)
        when the run names a prompt template, else log-probabilities ranked by the top-k rule,
        as that kind's are)."""
        return not text_only(model.capabilities) or prompted

    @classmethod
    def needs_images_for(cls, model: ResolvedModel) -> bool:
        """A text-only causal LM is shown no image."""
        return not text_only(model.capabilities)

    def load(self, model: ResolvedModel) -> None:
        import vllm

        self.version = vllm.__version__
        path = model.path
        self._check_architecture(model)
        found = model.capabilities
        if model.config is None:
            found = Capabilities(path, config=read_config(path, self.options.trust_remote_code))
        self.text_only = text_only(found)
        """A text-only causal LM: scored as the ``text`` kind scores it, with no image."""
        self.needs_images = not self.text_only
        prompted = self.options.prompt is not None or bool(self.options.prompts)
        self.probabilistic = self.needs_images or prompted
        if self.text_only:
            self._load_text_tokenizer(path)
        else:
            self._load_processor(path)
        from vllm.platforms import current_platform

        self.settings = engine_settings(self.options, current_platform.device_type)
        try:
            self.llm = get_engine(path, self.settings, images=not self.text_only)
        except ImportError:  # a missing package is named with its extra (cli_common)
            raise
        except Exception as err:  # noqa: BLE001  (whatever stops the engine: a KV cache that
            # cannot fit, too little memory, a --max-model-len it refuses; --debug shows it)
            raise ValueError(self._start_error(err)) from err
        self.device = f"vllm ({current_platform.device_type})"
        """Where the model runs (recorded as the run's device)."""
        self.generation = self._generation_config() if self.paper else None
        self.timings: dict[str, float] = {}
        self.score_mode = self.options.score
        """What an image model is asked: yes-no, caption or caption-pmi (``scorers.caption``)."""
        if self.score_mode != "yes-no" and self.text_only:
            raise ValueError(
                f"--score {self.score_mode}: model {path!r} is text-only; its sentences are "
                "scored by their own log-probability already"
            )
        self.alpha = self.options.pmi_alpha
        self.alpha_source = "given (--pmi-alpha)" if self.alpha is not None else None
        self.priors: dict[str, tuple[float, int]] = {}
        self.prior_input: str | None = None

    def _load_processor(self, path: str) -> None:
        """The processor, chat template, yes/no tokens and protocol of an image model."""
        from transformers import AutoProcessor

        processor = AutoProcessor.from_pretrained(
            path, trust_remote_code=self.options.trust_remote_code
        )
        self.processor = processor
        self.tokenizer = getattr(processor, "tokenizer", processor)
        self.chat = bool(getattr(processor, "chat_template", None))
        self._yes_no_ids(path)
        protocol = get_protocol(self.options.protocol)
        self.paper = protocol.generates_answers
        self.template = run_template(self.options.prompt, protocol.template)

    def _load_text_tokenizer(self, path: str) -> None:
        """The tokenizer, first token and template of a text-only model, as the text kind's."""
        from transformers import AutoTokenizer

        from ..language_model import prefix_token
        from ..protocols.templates import get_template

        trust = self.options.trust_remote_code
        self.tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust)
        self.chat, self.paper = False, False
        self.prefix = prefix_token(self.tokenizer)
        self.template = get_template(self.options.prompt) if self.options.prompt else None
        """The template of ``--prompt`` (None: the sentence's own log-probability)."""
        self.yes_ids = self.no_ids = []
        if self.options.prompt is not None or self.options.prompts:
            self._yes_no_ids(path)

    def _yes_no_ids(self, path: str) -> None:
        """The yes/no token ids of the tokenizer (``answer_token_ids``; none: one line)."""
        try:
            self.yes_ids, self.no_ids, self.answer_tokens = answer_token_ids(self.tokenizer)
        except ValueError as err:
            raise ValueError(f"model {path!r}: {err}") from err

    def _check_architecture(self, model: ResolvedModel) -> None:
        """A model whose architecture vLLM does not implement is refused before it loads."""
        from vllm import ModelRegistry

        declared = model.capabilities.architectures
        if declared and not declared & set(ModelRegistry.get_supported_archs()):
            raise ValueError(
                f"vLLM {self.version} cannot serve model {model.path!r}: its architecture "
                f"{', '.join(sorted(declared))} is not one vLLM implements (use --kind generative)"
            )

    def _start_error(self, err: BaseException) -> str:
        """One line naming the model and why the engine did not start."""
        message = first_line(err)
        hint = ""
        if "memory" in message.lower() or isinstance(err, MemoryError):
            hint = " (lower --max-model-len, or change --gpu-memory-utilization)"
        return f"vLLM {self.version} cannot start model {self.model_id!r}: {message}{hint}"

    def _generation_config(self) -> Any:
        """The model's default generation settings, as transformers' ``generate()`` reads them."""
        from transformers import GenerationConfig

        try:
            config = GenerationConfig.from_pretrained(self.model_id)
        except OSError:  # no generation_config.json: transformers' defaults
            config = GenerationConfig()
        if (config.num_beams or 1) > 1:
            raise ValueError(
                f"model {self.model_id!r}: its default generation settings search "
                f"{config.num_beams} beams, which vLLM's generate does not do; use --kind "
                "generative"
            )
        return config

    def prompt(self, query: Query | str) -> str:
        """The model input text for one query, as the generative kind builds it."""
        from .generative import prompt_text

        return prompt_text(self.processor, self.template, query, self.chat)

    def requests(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> list[dict]:
        """One engine request per (image, query): the prompt text and its image."""
        return [
            {"prompt": self.prompt(q), "multi_modal_data": {"image": image}}
            for image, group in zip(images, queries, strict=True)
            for q in group
        ]

    def generate(self, requests: list[dict], params: Any) -> list[Any]:
        """The engine's outputs of ``requests`` in one batch (a request it refuses: one line)."""
        from vllm.exceptions import VLLMError

        start = time.perf_counter()
        try:
            outputs = self.llm.generate(requests, params, use_tqdm=False)
        except (ValueError, RuntimeError, VLLMError) as err:  # e.g. a prompt longer
            # than --max-model-len (every prompt, when it is below them all)
            why = first_line(err)
            raise ValueError(f"vLLM cannot score model {self.model_id!r}: {why}") from err
        self.timings["vllm"] = self.timings.get("vllm", 0.0) + time.perf_counter() - start
        return outputs

    def text_scores(self, queries: Sequence[Sequence[Query]]) -> Scored:
        """A text-only model's scores: each sentence's mean token log-probability, or P(yes) of
        the question without the image when the query or the run names a template."""
        from vllm import SamplingParams

        from .text import text_of

        keys = [[text_of(q, self.template) for q in group] for group in queries]
        new = sorted({k for g in keys for k in g}, key=lambda k: (len(k[1]), k[1], k[0]))
        scores: dict[tuple[str, str], float] = {}
        plain = [k for k in new if not k[0]]
        if plain:
            params = SamplingParams(max_tokens=1, temperature=0, prompt_logprobs=0)
            outputs = self.generate([self.token_prompt(t) for _, t in plain], params)
            scores.update(zip(plain, map(mean_prompt_log_prob, outputs), strict=True))
        asked = [k for k in new if k[0]]
        if asked:
            params = SamplingParams(
                max_tokens=1, temperature=0, logprob_token_ids=[*self.yes_ids, *self.no_ids]
            )
            outputs = self.generate([self.token_prompt(t) for _, t in asked], params)
            p_yes = [self.yes_score(o.outputs[0])[0] for o in outputs]
            scores.update(zip(asked, p_yes, strict=True))
        return Scored([[scores[k] for k in group] for group in keys])

    def token_prompt(self, text: str) -> dict[str, list[int]]:
        """A text-only model's engine request: the text's tokens without special tokens, the
        BOS (else EOS) token before them, as the text kind tokenizes."""
        from ..language_model import encode_texts

        return {"prompt_token_ids": encode_texts(self.tokenizer, [text], self.prefix)[0]}

    def caption_terms(self, images: Sequence[Any], texts: Sequence[Sequence[str]]) -> list:
        """Per text of each image, the terms of its likelihood score (``scorers.caption``),
        from the engine's prompt log-probabilities (prefix caching off)."""
        from . import caption

        flat = [t for group in texts for t in group]
        with_image = caption.head_of(self, flat, image=True)
        requests = [
            {"prompt": with_image + t, "multi_modal_data": {"image": image}}
            for image, group in zip(images, texts, strict=True)
            for t in group
        ]
        values = self.prompt_log_probs(requests, caption.sentence_spans(self, "", with_image, flat))
        out = [[{"log_p_image": s, "tokens": n} for s, n in row] for row in regroup(values, texts)]
        if self.score_mode == "caption-pmi":
            new = [t for t in dict.fromkeys(flat) if t not in self.priors]
            if new:
                without = caption.head_of(self, new, image=False)
                spans = caption.sentence_spans(self, "", without, new)
                found = self.prompt_log_probs([{"prompt": without + t} for t in new], spans)
                self.priors.update(zip(new, found, strict=True))
                self.prior_input = caption.TEXT_ONLY
            caption.with_priors(out, texts, self.priors)
        return out

    def prompt_log_probs(self, requests: list[dict], spans: Sequence[Any]) -> list:
        """(sum, count) of the log-probabilities of each request's sentence tokens (``spans``:
        ``prefix_cache.Span``, where they are among its prompt tokens)."""
        from vllm import SamplingParams

        params = SamplingParams(max_tokens=1, temperature=0, prompt_logprobs=0)
        outputs = self.generate(requests, params) if requests else []
        found = []
        for output, span in zip(outputs, spans, strict=True):
            pairs = list(zip(output.prompt_logprobs, output.prompt_token_ids, strict=True))
            count, tail, _ = span.within(output.prompt_token_ids)
            end = len(pairs) - tail
            found.append((sum(lp[token].logprob for lp, token in pairs[end - count : end]), count))
        return found

    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        if self.text_only:
            return self.text_scores(queries)
        if self.score_mode != "yes-no":
            from . import caption

            return caption.score(self, images, queries)
        requests = self.requests(images, queries)
        if not requests:
            return Scored([[] for _ in queries], [[] for _ in queries])
        if self.paper:
            outputs = self.generate(requests, self.generation_params())
            texts = [self.decode(o.outputs[0].token_ids) for o in outputs]
            scores = [answer_score(t) for t in texts]
            return Scored(regroup(scores, queries), regroup(texts, queries))
        from vllm import SamplingParams

        params = SamplingParams(
            max_tokens=1, temperature=0, logprob_token_ids=[*self.yes_ids, *self.no_ids]
        )
        results = [self.yes_score(o.outputs[0]) for o in self.generate(requests, params)]
        return Scored(
            regroup([s for s, _ in results], queries), regroup([a for _, a in results], queries)
        )

    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The generated tokens as transformers decodes them (vLLM's own text leaves out an
        unfinished UTF-8 sequence at the end, transformers shows it as U+FFFD)."""
        return self.tokenizer.decode(list(token_ids), skip_special_tokens=skip_special_tokens)

    def yes_score(self, completion: Any) -> tuple[float, str]:
        """(P(yes) / (P(yes) + P(no)), greedy answer) from the first token's log-probabilities."""
        import math

        first = completion.logprobs[0]
        p_yes = sum(math.exp(first[i].logprob) for i in self.yes_ids)
        p_no = sum(math.exp(first[i].logprob) for i in self.no_ids)
        answer = self.decode(completion.token_ids, skip_special_tokens=False).strip()
        return p_yes / max(p_yes + p_no, 1e-30), answer

    def generation_params(self) -> Any:
        """The authors' protocols: ``generate()``'s defaults as vLLM sampling parameters."""
        from vllm import SamplingParams

        config = self.generation
        sample = bool(config.do_sample)
        return SamplingParams(
            max_tokens=self.max_new_tokens(),
            temperature=(config.temperature or 1.0) if sample else 0,
            top_p=(config.top_p or 1.0) if sample else 1.0,
            top_k=(config.top_k or 0) if sample else 0,
            repetition_penalty=config.repetition_penalty or 1.0,
            skip_special_tokens=True,
        )

    def max_new_tokens(self) -> int:
        """The new tokens ``generate()`` writes at most: ``max_new_tokens``, else transformers'
        default of 20 (its default ``max_length`` counts new tokens), else ``max_length``."""
        config = self.generation
        if config.max_new_tokens is not None:
            return config.max_new_tokens
        if config.max_length in (None, TRANSFORMERS_DEFAULT_MAX_LENGTH):
            return TRANSFORMERS_DEFAULT_MAX_LENGTH
        return config.max_length

    def describe(self) -> dict[str, Any]:
        engine = {"version": self.version, **self.settings}
        if self.text_only:
            return self.describe_text(engine)
        if self.score_mode != "yes-no":
            from . import caption

            return {**caption.describe(self), "forward_path": "vllm", "vllm": engine}
        record: dict[str, Any] = {
            "prompt": self.template.question,
            "chat_template": self.chat,
            "forward_path": "vllm",
            "vllm": engine,
        }
        if self.paper:
            template = self.template
            return {
                **record,
                "prompt": template.ask("{sentence}"),
                "score": "generated answer by the authors' rules: yes 1.0, no 0.0, unparsed 0.5",
                "generation": {
                    **generation_record(self),
                    "max_tokens": self.max_new_tokens(),
                },
            }
        return {
            **record,
            "score": "P(yes) / (P(yes) + P(no)), first answer token, exact log-probabilities "
            "of the yes/no tokens (vLLM logprob_token_ids)",
            "yes_tokens": self.tokenizer.convert_ids_to_tokens(self.yes_ids),
            "no_tokens": self.tokenizer.convert_ids_to_tokens(self.no_ids),
        }

    def describe_text(self, engine: dict[str, Any]) -> dict[str, Any]:
        """A text-only model's record: the text kind's score, computed by vLLM."""
        record: dict[str, Any] = {"text_only": True, "forward_path": "vllm", "vllm": engine}
        if self.template is not None or self.options.prompts:
            return {
                **record,
                "score": "P(yes) / (P(yes) + P(no)) of the question without the image, first "
                "answer token, exact log-probabilities of the yes/no tokens (vLLM "
                "logprob_token_ids)",
            }
        return {**record, "score": "mean token log-probability (vLLM prompt log-probabilities)"}

    @property
    def generation_config(self) -> Any:
        """The default generation settings (``generation_record`` reads them)."""
        return self.generation
