"""Generative VLMs: the paper's yes/no question, P(yes) / (P(yes) + P(no)) from one forward pass.

Forward paths (``bla_eval.scorers.prefix_cache``): decoder-only models encode each image once and
cache the prompt tokens before the sentence (``prefix-cache``); encoder-decoder models reuse the
image features (``image-features``); other architectures send every (image, prompt) pair through
the whole model (``plain``). ``describe()`` records the path that ran and why.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from PIL import Image

from ..batching import map_batches
from ..protocols import get_protocol
from ..protocols.templates import (
    PromptTemplate,
    answer_token_ids,
    asked_with,
    run_template,
    yes_probability,
)
from ..queries import Query
from . import caption, generation
from .base import Scored, regroup
from .capabilities import Capabilities
from .decoder_targets import decoder_prompts
from .local import LocalScorer
from .prefix_cache import PLAIN, PrefixCachedForward, UnsupportedPrefix, fast_path_for
from .processor_inputs import find_convention, forward_parameters, model_inputs
from .registry import register_kind
from .resolved_model import ResolvedModel

REMOTE_AUTO_CLASSES = {
    "AutoModelForImageTextToText": "AutoModelForImageTextToText",
    "AutoModelForVision2Seq": "AutoModelForImageTextToText",
    "AutoModelForCausalLM": "AutoModelForCausalLM",
    "AutoModel": "AutoModel",
}
"""Auto classes a remote-code config (``auto_map``) may name for a generating model, most
specific first, and the auto class that loads it (the last two only for a model that takes
images: ``Capabilities.takes_images``)."""
IMAGE_TEXT_AUTO = frozenset({"AutoModelForImageTextToText", "AutoModelForVision2Seq"})


def prompt_text(processor: Any, template: PromptTemplate, query: Query | str, chat: bool) -> str:
    """The model input text for one query: its demonstrations and question in ``template``,
    wrapped by the processor's chat template when ``chat`` (the image's text, where a prompt
    without a chat template needs one, is added by ``processor_inputs``)."""
    if isinstance(query, str):
        query = Query(query)
    template = asked_with(query.template, template)
    if not chat:
        return template.text(query.sentence, query.demonstrations)
    messages = template.chat(query.sentence, query.demonstrations)
    return processor.apply_chat_template(messages, add_generation_prompt=True)


@dataclass(frozen=True)
class GeneratingClass:
    """The class that loads a generative model; ``part``: for a composite checkpoint, the
    sub-config (and submodel) of its generating part (Qwen2.5-Omni's ``thinker_config``)."""

    cls: Any
    part: str | None = None

    def config_kwargs(self, model: ResolvedModel) -> dict[str, Any]:
        """``config=`` for ``from_pretrained``: the part's sub-config for a part."""
        if self.part is None:
            return model.config_kwargs
        return {"config": getattr(model.config, self.part)}

    def load_kwargs(self) -> dict[str, Any]:
        """A part's weights, named ``<part>.…`` in the checkpoint, read without the prefix."""
        if self.part is None:
            return {}
        prefix = self.part.removesuffix("_config")
        return {"key_mapping": {rf"^{prefix}\.": ""}}


def generating_class(model: Capabilities) -> GeneratingClass | None:
    """How a generative model loads (None: it is not one): an image-text-to-text class its
    config names, or the auto class of its ``auto_map`` (remote code); its model type's
    image-text-to-text class; for a model that takes images (``Capabilities.takes_images``,
    asked only where needed), its causal-LM class (Phi-4-multimodal), a remote-code causal-LM
    or base class, or the image-text-to-text class of a sub-config (the generating part of a
    composite checkpoint). A dual encoder (``BlipModel``) is none, unless it names such a
    class."""
    import transformers
    from transformers.models.auto import modeling_auto as auto

    image_text = auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    remote = model.auto_classes
    for name in IMAGE_TEXT_AUTO & remote:
        return GeneratingClass(getattr(transformers, REMOTE_AUTO_CLASSES[name]))
    for name in sorted(model.architectures):
        if name in set(image_text.values()) and hasattr(transformers, name):
            return GeneratingClass(getattr(transformers, name))
    model_type = model.model_type
    if model.dual_encoder:  # BlipModel: the image-text-to-text type's dual encoder
        return None
    if model_type in image_text:
        return GeneratingClass(transformers.AutoModelForImageTextToText)
    if not model.takes_images:
        return None
    for name in REMOTE_AUTO_CLASSES:
        if name in remote:
            return GeneratingClass(getattr(transformers, REMOTE_AUTO_CLASSES[name]))
    if model.causal_lm:
        return GeneratingClass(transformers.AutoModelForCausalLM)
    for part in getattr(model.config, "sub_configs", None) or {}:
        sub = getattr(model.config, part, None)
        name = image_text.get(getattr(sub, "model_type", ""))
        if name and hasattr(transformers, name):
            return GeneratingClass(getattr(transformers, name), part)
    return None


@register_kind
class GenerativeScorer(LocalScorer):
    """Image-text-to-text models; the chat template is used where the processor has one."""

    kind = "generative"
    probabilistic = True
    asks_question = True
    scores_captions = True
    takes_device_map = True
    default_batch_size = 8

    @classmethod
    def matches_config(cls, model: Capabilities) -> bool:
        return generating_class(model) is not None

    def load(self, model: ResolvedModel) -> None:
        import transformers
        from transformers import AutoProcessor

        super().load(model)
        model_id, trust = model.path, self.options.trust_remote_code
        self.processor = AutoProcessor.from_pretrained(model_id, trust_remote_code=trust)
        self.check_images_taken(model_id)
        chosen = generating_class(model.capabilities) if model.config is not None else None
        chosen = chosen or GeneratingClass(transformers.AutoModelForImageTextToText)
        device_map = getattr(self.options, "device_map", None)
        placement = {"device_map": device_map} if device_map else {}
        self.model = chosen.cls.from_pretrained(
            model_id,
            dtype=self.dtype,
            trust_remote_code=trust,
            **placement,
            **chosen.config_kwargs(model),
            **chosen.load_kwargs(),
        )
        self.model_class = type(self.model).__name__
        """The class that was loaded (``describe``: a composite checkpoint's part)."""
        self.device_map = device_map
        if device_map:  # spread over the GPUs by accelerate: inputs go where the embeddings are
            self.device = self.model.get_input_embeddings().weight.device
        else:
            self.model.to(self.device)
        self.model.eval()
        self.tokenizer = self.processor.tokenizer
        self.tokenizer.padding_side = "left"
        try:
            self.yes_ids, self.no_ids, self.answer_tokens = answer_token_ids(self.tokenizer)
        except ValueError as err:
            raise ValueError(f"model {model_id!r}: {err}") from err
        self.chat = bool(getattr(self.processor, "chat_template", None))
        protocol = get_protocol(self.options.protocol)
        self.template = run_template(self.options.prompt, protocol.template)
        """The prompt template the run asks with (``--prompt``, else the protocol's;
        ``bla_eval.protocols.templates``); a query may name another (a ``--prompts`` sweep)."""
        config = self.model.config
        try:
            self.convention = find_convention(
                self.processor, config, self.prompt(Query("A dog chases a cat.")), self.chat
            )
        except ValueError as err:
            model_type = getattr(config, "model_type", "?")
            raise ValueError(f"model {model_id!r} ({model_type}): {err}") from err
        """How the processor takes an image and a prompt (``processor_inputs``)."""
        self.accepted = forward_parameters(self.model)
        self.encoder_decoder = bool(
            getattr(config, "is_encoder_decoder", False)
            or getattr(config, "use_decoder_only_language_model", True) is False
        )
        text_config = getattr(config, "text_config", config)
        self.decoder_start = getattr(text_config, "decoder_start_token_id", 0) or 0
        chosen = fast_path_for(self.model, self.encoder_decoder)
        self.path, self.path_reason = chosen.path, chosen.reason
        self.fast = None
        if self.path != PLAIN:
            self.fast = PrefixCachedForward(
                self.model,
                self.processor,
                path=self.path,
                device=self.device,
                dtype=self.dtype,
                convention=self.convention,
                decoder_start=self.decoder_start,
                batch_size=self.batch_size,
            )
        self.keep_last_logits = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        self.score_mode = self.options.score
        """What the model is asked: yes-no, caption or caption-pmi (``scorers.caption``)."""
        self.alpha = self.options.pmi_alpha
        self.alpha_source = "given (--pmi-alpha)" if self.alpha is not None else None
        self.priors: dict[str, tuple[float, int]] = {}
        self.prior_input: str | None = None
        self.caption_path, self.caption_path_reason = self.path, self.path_reason
        self.paper = protocol.generates_answers
        """True when the protocol generates answers (``scorers.generation``), e.g. the authors'."""
        self.timings: dict[str, float] = {}
        """Seconds per part of the forward, summed over ``score`` calls (the benchmark reads it)."""

    def check_images_taken(self, model_id: str) -> None:
        """Refuse a processor that takes no image (a video-only processor: InstructBLIP-Video),
        in one line, before the model is loaded."""
        attributes = getattr(type(self.processor), "get_attributes", lambda: [])()
        if attributes and "image_processor" not in attributes:
            takes = ", ".join(a for a in attributes if a.endswith("_processor")) or "no images"
            raise ValueError(
                f"model {model_id!r}: its processor ({type(self.processor).__name__}) takes no "
                f"images ({takes}): BLA's datapoints are images"
            )

    def prompt(self, query: Query | str) -> str:
        """The model input text for one query: its demonstrations and question in the
        protocol's prompt template, wrapped by the chat template when there is one."""
        return prompt_text(self.processor, self.template, query, self.chat)

    @torch.inference_mode()
    def next_token_logits(
        self, images: Sequence[Image.Image], queries: Sequence[Query | str]
    ) -> torch.Tensor:
        """The plain path: logits of the first answer token, one row per (image, query)."""
        inputs = self.inputs(images, queries)
        last = None
        if self.encoder_decoder:
            pad = self.tokenizer.pad_token_id
            pad = self.decoder_start if pad is None else pad
            start, n = self.decoder_start, len(queries)
            last = decoder_prompts(inputs, n, start, pad, self.accepted, self.device)
        if last is not None:  # the prompt in the decoder, right-padded: each row's last token
            logits = self.model(**inputs).logits
            return logits[torch.arange(len(last), device=logits.device), last].float()
        if self.keep_last_logits:
            inputs["logits_to_keep"] = 1  # the lm head on the last position only
        return self.model(**inputs).logits[:, -1, :].float()

    def inputs(self, images: Sequence[Any], queries: Sequence[Query | str]) -> dict[str, Any]:
        """The model's inputs for (image, query) pairs, as its processor makes them."""
        return model_inputs(
            self.processor,
            self.convention,
            images,
            [self.prompt(q) for q in queries],
            accepted=self.accepted,
            device=self.device,
            dtype=self.dtype,
        )

    def caption_terms(self, images: Sequence[Any], texts: Sequence[Sequence[str]]) -> list:
        """Per text of each image, the terms of its likelihood score (``scorers.caption``)."""
        return caption.terms(self, images, texts)

    def reset_timings(self) -> None:
        """Start ``timings`` afresh."""
        self.timings.clear()
        if self.fast is not None:
            self.fast.seconds.clear()

    def yes_scores(self, logits: torch.Tensor) -> list[tuple[float, str]]:
        """(P(yes) / (P(yes) + P(no)), greedy answer) per row of first-answer-token logits."""
        score = yes_probability(logits, self.yes_ids, self.no_ids).tolist()
        answers = self.tokenizer.batch_decode(logits.argmax(-1)[:, None])
        return [(s, a.strip()) for s, a in zip(score, answers, strict=True)]

    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        if self.paper:
            return generation.score(self, images, queries)
        if self.score_mode != "yes-no":
            return caption.score(self, images, queries)
        results = None
        if self.fast is not None and self.path != PLAIN:
            try:
                results = self._score_fast(images, queries)
            except UnsupportedPrefix as err:  # checked before anything is scored for an image
                self.path, self.path_reason = PLAIN, f"fell back to the plain path: {err}"
        if results is None:
            results = self._score_plain(images, queries)
        return Scored(
            regroup([s for s, _ in results], queries), regroup([a for _, a in results], queries)
        )

    def _score_fast(self, images, queries) -> list[tuple[float, str]]:
        """Per image: its features once, its prompts' shared prefix once, the rest batched; the
        templates of a sweep one after the other, each image encoded once for all of them."""
        results: list[tuple[float, str] | None] = [None] * sum(len(g) for g in queries)
        if not any(q.demonstrations for group in queries for q in group):  # zero-shot: batched
            with self.fast.shared_features():
                for template in dict.fromkeys(q.template for group in queries for q in group):
                    self._zero_shot(images, queries, template, results)
        else:  # per image: one cached prefix per demonstration set
            start = 0
            for image, group in zip(images, queries, strict=True):
                if not group:
                    continue
                prompts = [self.prompt(q) for q in group]
                keys = [q.demonstrations for q in group]
                scored = self.yes_scores(self.fast.logits(image, prompts, keys))
                results[start : start + len(group)] = scored
                start += len(group)
        self.timings.update(self.fast.seconds)
        return results

    def _zero_shot(self, images, queries, template: str, results: list) -> None:
        """The queries of one template, every image batched (``results``: flat, in order)."""
        positions, prompts, start = [], [], 0
        for group in queries:
            mine = [k for k, q in enumerate(group) if q.template == template]
            positions += [start + k for k in mine]
            prompts.append([self.prompt(group[k]) for k in mine])
            start += len(group)
        scored = []
        for logits in self.fast.logits_many(images, prompts):
            scored += self.yes_scores(logits) if len(logits) else []
        for position, value in zip(positions, scored, strict=True):
            results[position] = value

    def _score_plain(self, images, queries) -> list[tuple[float, str]]:
        """Every (image, query) pair through the whole model, ``batch_size`` pairs at a time."""
        pairs = [(i, q) for i, group in enumerate(queries) for q in group]

        def run(batch: Sequence[tuple[int, Query]]) -> list[tuple[float, str]]:
            start = time.perf_counter()
            logits = self.next_token_logits([images[i] for i, _ in batch], [q for _, q in batch])
            self.timings["plain"] = self.timings.get("plain", 0.0) + time.perf_counter() - start
            return self.yes_scores(logits)

        return map_batches(run, pairs, self.batch_size)

    def describe(self) -> dict[str, Any]:
        if self.paper:
            return generation.describe(self)
        if self.score_mode != "yes-no":
            return caption.describe(self)
        return {
            "prompt": self.template.question,
            "chat_template": self.chat,
            "processor_inputs": self.convention.record(),
            "encoder_decoder": self.encoder_decoder,
            "forward_path": self.path,
            "forward_path_reason": self.path_reason,
            **({"device_map": self.device_map} if self.device_map else {}),
            "score": "P(yes) / (P(yes) + P(no)), first answer token",
            "yes_tokens": self.tokenizer.convert_ids_to_tokens(self.yes_ids),
            "no_tokens": self.tokenizer.convert_ids_to_tokens(self.no_ids),
            "answer_tokens": self.answer_tokens,
        }
