"""OpenFlamingo (``bla_eval.flamingo``): a released Hub id (``openflamingo/OpenFlamingo-4B-vitl-
rpj3b-langinstruct``) or a folder of ``checkpoint.pt`` and upstream's ``config.json``.

- yes-no: P(yes) / (P(yes) + P(no)) of the first answer token, one forward per (image, prompt),
  each image's latents computed once per call; the prompt is the kind's default template, the
  authors' exact string (``openflamingo-authors``), unless ``--prompt`` names another (one
  without ``<image>`` gets it first); each ``<image>`` of a prompt (one per in-context turn) is
  the same image. Rows are padded on the left with positions counted over the real tokens.
- ``--score caption`` / ``caption-pmi``: the sentence right after ``<image>``, its tokens'
  log-probabilities summed; the prior is the same text with a blank grey image.
- ``--protocol paper``: answers generated as the authors did (beam search with 2 beams,
  stopping at ``<|endofchunk|>``), read by BLIP-2's answer rules.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from typing import Any

import torch
from PIL import Image

from bla_metric.answers import answer_score

from ..batching import map_batches
from ..flamingo.spec import is_folder, is_release, spec_for
from ..protocols import get_protocol
from ..protocols.templates import (
    IMAGE_MARKER,
    answer_token_ids,
    asked_with,
    get_template,
    yes_probability,
)
from ..queries import Query
from . import caption
from .base import Scored, regroup
from .capabilities import Capabilities
from .local import LocalScorer
from .prefix_cache import sentence_log_prob
from .processor_inputs import PROBE_SIZE
from .registry import register_kind
from .resolved_model import ResolvedModel

DEFAULT_TEMPLATE = "openflamingo-authors"
"""The template this kind asks with unless ``--prompt`` names another."""
NUM_BEAMS = 2
MAX_NEW_TOKENS = 2000
"""The authors' ``generate(max_new_tokens=2000, num_beams=2)``."""
PATH = "image latents once per image; every (image, prompt) through the language model"


@register_kind
class FlamingoScorer(LocalScorer):
    """OpenFlamingo models on the project's own implementation of the architecture."""

    kind = "flamingo"
    probabilistic = True
    asks_question = True
    scores_captions = True
    default_batch_size = 8

    @classmethod
    def matches_name(cls, model: Capabilities) -> bool:
        """A released Hub id, or a folder of an OpenFlamingo checkpoint."""
        return is_release(model.path) or is_folder(model.files, model.config_json)

    def load(self, model: ResolvedModel) -> None:
        from ..flamingo.build import load_flamingo

        super().load(model)
        self.spec = spec_for(model.path)
        loaded = load_flamingo(self.spec, self.device, self.dtype, self.options.trust_remote_code)
        self.model, self.tokenizer = loaded.model, loaded.tokenizer
        self.preprocess, self.report = loaded.preprocess, loaded.report
        self.tokenizer.padding_side = "left"
        try:
            self.yes_ids, self.no_ids, self.answer_tokens = answer_token_ids(self.tokenizer)
        except ValueError as err:
            raise ValueError(f"model {model.path!r}: {err}") from err
        protocol = get_protocol(self.options.protocol)
        self.template = get_template(self.options.prompt or DEFAULT_TEMPLATE)
        self.kind_template = None if self.options.prompt else self.template
        """The template asked with where it is this kind's default, not the protocol's
        (results.json's protocol record names it)."""
        self.paper = protocol.generates_answers
        self.score_mode = self.options.score
        self.alpha = self.options.pmi_alpha
        self.alpha_source = "given (--pmi-alpha)" if self.alpha is not None else None
        self.priors: dict[str, tuple[float, int]] = {}
        self.prior_input = caption.BLANK
        self.chat, self.encoder_decoder, self.processor = False, False, None
        self.caption_path, self.caption_path_reason = "plain", PATH
        keep = "logits_to_keep" in inspect.signature(self.model.lang_encoder.forward).parameters
        self.last_only = {"logits_to_keep": 1} if keep else {}
        self.timings: dict[str, float] = {}

    def prepare_image(self, image: Image.Image) -> torch.Tensor:
        """The image as the vision tower takes it (open_clip's transform)."""
        return self.preprocess(image.convert("RGB"))

    def prompt(self, query: Query | str) -> str:
        """The text of one query in its template, ``<image>`` kept (first where the template
        has none)."""
        if isinstance(query, str):
            query = Query(query)
        template = asked_with(query.template, self.template)
        text = template.plain(query.sentence, query.demonstrations)
        return text if IMAGE_MARKER in text else IMAGE_MARKER + text

    def reset_timings(self) -> None:
        self.timings.clear()

    def _timed(self, part: str, start: float) -> None:
        self.timings[part] = self.timings.get(part, 0.0) + time.perf_counter() - start

    @torch.inference_mode()
    def features(self, images: Sequence[torch.Tensor]) -> torch.Tensor:
        """Each image's resampled latents (N, latents, D), ``batch_size`` images at a time."""
        start = time.perf_counter()

        def run(batch: Sequence[torch.Tensor]) -> list[torch.Tensor]:
            pixels = torch.stack(list(batch)).to(self.device, self.dtype)
            return list(self.model.encode_images(pixels))

        found = torch.stack(map_batches(run, list(images), self.batch_size))
        self._timed("image_features", start)
        return found

    def media(self, features: torch.Tensor, rows: Sequence[int], prompts: Sequence[str]):
        """Per row, its image's latents once per ``<image>`` of the longest prompt."""
        turns = max(1, *(p.count(IMAGE_MARKER) for p in prompts))
        picked = features[torch.tensor(list(rows), device=features.device)]
        return picked[:, None].expand(-1, turns, -1, -1)

    def encode(self, texts: Sequence[str], side: str = "left") -> dict[str, torch.Tensor]:
        enc = self.tokenizer(list(texts), padding=True, padding_side=side, return_tensors="pt")
        return {k: enc[k].to(self.device) for k in ("input_ids", "attention_mask")}

    @torch.inference_mode()
    def next_token_logits(self, features, rows: Sequence[int], queries: Sequence[Query]):
        """Logits of the first answer token of each (image row, query)."""
        prompts = [self.prompt(q) for q in queries]
        enc = self.encode(prompts)
        media = self.media(features, rows, prompts)
        out = self.model(media, enc["input_ids"], enc["attention_mask"], **self.last_only)
        return out.logits[:, -1, :].float()

    def yes_scores(self, logits: torch.Tensor) -> list[tuple[float, str]]:
        score = yes_probability(logits, self.yes_ids, self.no_ids).tolist()
        answers = self.tokenizer.batch_decode(logits.argmax(-1)[:, None])
        return [(s, a.strip()) for s, a in zip(score, answers, strict=True)]

    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        if self.score_mode != "yes-no" and not self.paper:
            return caption.score(self, images, queries)
        features = self.features(images)
        pairs = [(i, q) for i, group in enumerate(queries) for q in group]
        if self.paper:
            texts = map_batches(lambda b: self._generated(features, b), pairs, self.batch_size)
            scores = [answer_score(t) for t in texts]
            return Scored(regroup(scores, queries), regroup(texts, queries))

        def run(batch: Sequence[tuple[int, Query]]) -> list[tuple[float, str]]:
            start = time.perf_counter()
            logits = self.next_token_logits(features, [i for i, _ in batch], [q for _, q in batch])
            self._timed("plain", start)
            return self.yes_scores(logits)

        results = map_batches(run, pairs, self.batch_size)
        return Scored(
            regroup([s for s, _ in results], queries), regroup([a for _, a in results], queries)
        )

    @torch.inference_mode()
    def _generated(self, features, batch: Sequence[tuple[int, Query]]) -> list[str]:
        """The authors' generated answer of each pair, decoded with special tokens skipped."""
        start = time.perf_counter()
        prompts = [self.prompt(q) for _, q in batch]
        enc = self.encode(prompts)
        out = generate(
            self.model,
            self.media(features, [i for i, _ in batch], prompts),
            enc,
            self.tokenizer.pad_token_id,
            NUM_BEAMS,
            MAX_NEW_TOKENS,
        )
        self._timed("generate", start)
        return self.tokenizer.batch_decode(out, skip_special_tokens=True)

    @torch.inference_mode()
    def log_probs(self, features: torch.Tensor, texts: Sequence[str]) -> list[tuple[float, int]]:
        """(sum of log-probabilities, token count) of each text right after ``<image>``, the
        image of each row ``features``' (right padding: no pad before a predicted token)."""
        spans = caption.sentence_spans(self, "", IMAGE_MARKER, texts)
        enc = self.encode([IMAGE_MARKER + t for t in texts], side="right")
        media = features[:, None]
        logits = self.model(media, enc["input_ids"], enc["attention_mask"]).logits.float()
        out = []
        for i, span in enumerate(spans):
            real = int(enc["attention_mask"][i].sum())
            own = enc["input_ids"][i, :real].tolist()
            count, tail, _ = span.within(own)
            out.append(sentence_log_prob(logits[i, :real], own, count, tail))
        return out

    def caption_terms(self, images: Sequence[Any], texts: Sequence[Sequence[str]]) -> list:
        """Per text of each image, ``log_p_image`` and ``tokens`` (and, for ``caption-pmi``,
        ``log_p_prior``, with a blank grey image)."""
        features = self.features(images)
        start = time.perf_counter()
        pairs = [(i, t) for i, group in enumerate(texts) for t in group]

        def run(batch: Sequence[tuple[int, str]]) -> list[tuple[float, int]]:
            rows = torch.tensor([i for i, _ in batch], device=features.device)
            return self.log_probs(features[rows], [t for _, t in batch])

        values = regroup(map_batches(run, pairs, self.batch_size), texts)
        self._timed("caption", start)
        found = [[{"log_p_image": s, "tokens": n} for s, n in row] for row in values]
        if self.score_mode == "caption-pmi":
            start = time.perf_counter()
            caption.with_priors(found, texts, self.prior([t for g in texts for t in g]))
            self._timed("prior", start)
        return found

    def prior(self, texts: Sequence[str]) -> dict[str, tuple[float, int]]:
        """log P(t | blank image) of each distinct text, each computed once per run."""
        new = [t for t in dict.fromkeys(texts) if t not in self.priors]
        if new:
            blank = self.prepare_image(Image.new("RGB", PROBE_SIZE, (128, 128, 128)))
            features = self.features([blank])
            values = map_batches(
                lambda b: self.log_probs(features.expand(len(b), -1, -1), b),
                new,
                self.batch_size,
            )
            self.priors.update(zip(new, values, strict=True))
        return {t: self.priors[t] for t in texts}

    def describe(self) -> dict[str, Any]:
        model = {
            "flamingo": self.spec.record(),
            "decoder_layers": self.model.layers_path,
            "cross_attention_layers": self.model.gated_layers(),
            **(self.report.record() if self.report is not None else {}),
        }
        if self.paper:
            return {
                "prompt": self.template.question,
                "forward_path": "generate",
                "score": "generated answer by the authors' rules: yes 1.0, no 0.0, unparsed 0.5",
                "generation": {
                    "call": "generate(num_beams=2, max_new_tokens=2000), stopping at "
                    "<|endofchunk|> (the authors' settings)",
                    "num_beams": NUM_BEAMS,
                    "max_new_tokens": MAX_NEW_TOKENS,
                    "do_sample": False,
                },
                "metrics": "binary view over parsed answers only (bla_metric.paper)",
                **model,
            }
        if self.score_mode != "yes-no":
            return {
                **caption.describe(self),
                "caption_prompt": "the sentence right after <image>",
                **model,
            }
        return {
            "prompt": self.template.question,
            "chat_template": False,
            "forward_path": "plain",
            "forward_path_reason": PATH,
            "score": "P(yes) / (P(yes) + P(no)), first answer token",
            "yes_tokens": self.tokenizer.convert_ids_to_tokens(self.yes_ids),
            "no_tokens": self.tokenizer.convert_ids_to_tokens(self.no_ids),
            "answer_tokens": self.answer_tokens,
            **model,
        }


def generate(
    model: Any,
    media: torch.Tensor,
    enc: dict[str, torch.Tensor],
    pad_token_id: int,
    num_beams: int,
    max_new_tokens: int,
) -> torch.Tensor:
    """The new tokens ``model.generate`` gives each row (greedy for one beam), without
    sampling, stopping at ``<|endofchunk|>``."""
    out = model.generate(
        media,
        enc["input_ids"],
        enc["attention_mask"],
        num_beams=num_beams,
        max_new_tokens=max_new_tokens,
        do_sample=False,
        pad_token_id=pad_token_id,
    )
    return out[:, enc["input_ids"].shape[1] :]
