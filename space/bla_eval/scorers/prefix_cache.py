"""The fast forward of generative scorers: each image encoded once, the shared prompt prefix cached.

Scoring asks one question per (image, sentence); the prompts of one image share everything before
the sentence (image tokens, chat template, the question's start, in-context demonstrations). The
plain path sends each (image, prompt) pair through the whole model. This module:

1. runs the model's own ``get_image_features`` once per image and hands the result to the model's
   forward as ``mm_encoder_outputs`` (the multimodal-encoder-output input of transformers 5);
2. decoder-only language models (``prefix-cache``): runs the tokens that all prompts of the image
   share once, keeps their key/value cache (``DynamicCache``), extends a copy of it once per group
   of prompts that share more (one demonstration set), and runs the rest of each prompt as a batch
   of left-padded suffixes on a copy of that cache, with the attention mask covering the prefix and
   the positions continuing after it (Qwen2-VL: the multimodal-RoPE text position after the image).
   Zero-shot (:meth:`PrefixCachedForward.logits_many`), the prefixes of several images run as one
   batch, cut to the shortest shared part among them, and suffixes of different images share
   batches, each row on its own image's cache row. Sliding-window layers are used while every
   prompt fits their window; the recurrent states of linear-attention and convolution layers
   are copied like keys and values, their suffixes batched by equal length (no padding);
3. encoder-decoder language models (BLIP-2 Flan-T5, ``image-features``): the encoder reads the
   whole prompt bidirectionally, so nothing of it can be cached; the image features are reused and
   the first decoder step is read (``--score caption``: every decoder position of the sentences,
   :meth:`PrefixCachedForward.decoder_logits`).

Token ids are exactly the plain path's: the processor expands the image placeholder of one prompt,
the tokenizer splits every prompt, and the shared prefix is the longest common token prefix, so a
tokenizer that merges across the sentence boundary is handled. When a prompt does not line up
(the image tokens after the shared part, a processor that adds text around the prompt), or the
architecture is not one whose cache we trust, :func:`fast_path_for` / :class:`UnsupportedPrefix`
send the scorer back to the plain path, and ``describe()`` records which path ran and why.
"""

from __future__ import annotations

import copy
import inspect
import time
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch

from ..batching import map_batches
from .image_features import FeatureBinder, UnboundFeatures, feature_method
from .processor_inputs import InputConvention, find_convention, model_inputs

PREFIX_CACHE = "prefix-cache"
IMAGE_FEATURES = "image-features"
PLAIN = "plain"
PATHS = (PREFIX_CACHE, IMAGE_FEATURES, PLAIN)
"""Forward paths, fastest first; the scorer records the one that ran."""

ENCODER_DECODER_TYPES = frozenset({"blip-2"})
"""Encoder-decoder language models whose image features can be handed in (BLIP-2 Flan-T5)."""
NOT_CACHEABLE = {
    "paligemma": "the image and the whole prompt attend to each other (prefix-LM), so the tokens "
    "before the sentence depend on it",
}
"""Why a known architecture runs the plain path."""


class UnsupportedPrefix(RuntimeError):
    """The fast path cannot reproduce the plain path for this model or prompt; use the plain one."""


@dataclass(frozen=True)
class FastPath:
    """Which path runs and why (the protocol record keeps both)."""

    path: str
    reason: str


def fast_path_for(model: Any, encoder_decoder: bool) -> FastPath:
    """The fastest path that is exact for ``model`` (a loaded image-text-to-text model): the
    prefix cache for every decoder-only model whose forward declares precomputed image features
    (``mm_encoder_outputs``) beside ``get_image_features``; the image features for a known
    encoder-decoder whose forward declares them (BLIP-2 Flan-T5). Whether the cache can be
    copied and the image tokens sit before the sentence is checked on the first prompts
    (:class:`UnsupportedPrefix` sends the scorer back to the plain path, with the reason)."""
    model_type = getattr(model.config, "model_type", "")
    if model_type in NOT_CACHEABLE:
        return FastPath(PLAIN, f"{model_type}: {NOT_CACHEABLE[model_type]}")
    if feature_method(model) is None:
        return FastPath(PLAIN, f"{model_type}: the model has no get_image_features")
    params = inspect.signature(model.forward).parameters
    takes_features = "mm_encoder_outputs" in params  # **kwargs alone would drop them unread
    if encoder_decoder and model_type not in ENCODER_DECODER_TYPES:
        return FastPath(PLAIN, f"{model_type}: encoder-decoder without a tested feature input")
    if not takes_features:
        return FastPath(PLAIN, f"{model_type}: the forward takes no precomputed image features")
    if encoder_decoder:
        return FastPath(
            IMAGE_FEATURES,
            "encoder-decoder: image features reused, the encoder reads each whole prompt",
        )
    required = [
        name
        for name, p in params.items()
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and name not in ("self", "input_ids", "pixel_values")
    ]
    if required:  # e.g. InstructBLIP's Q-Former reads the prompt: its image features depend on it
        return FastPath(
            PLAIN, f"{model_type}: the forward requires {', '.join(required)} beside the image"
        )
    return FastPath(PREFIX_CACHE, "image features once per image; shared prefix cached")


def common_prefix_length(rows: Sequence[Sequence[int]]) -> int:
    """Length of the longest common prefix of token id lists."""
    first, n = rows[0], min(len(r) for r in rows)
    for i in range(n):
        if any(r[i] != first[i] for r in rows[1:]):
            return i
    return n


def combine_features(features: Sequence[Any]) -> Any:
    """The image features of several images as one ``mm_encoder_outputs`` entry (in order):
    their pooled outputs, or their last hidden states where the method returns no pooled one
    (Fuyu's patch embeddings)."""
    field = "pooler_output" if features[0].get("pooler_output") is not None else "last_hidden_state"
    pooled = [f[field] for f in features]
    merged = copy.copy(features[0])
    if isinstance(pooled[0], (list, tuple)):
        merged[field] = [t for p in pooled for t in p]
    else:
        merged[field] = torch.cat(pooled, 0)
    return merged


def same_features(a: Any, b: Any, tolerance: float = 1e-4) -> bool:
    """Two image-feature outputs hold the same features (their pooled outputs, else their last
    hidden states, within ``tolerance`` of the largest value)."""
    field = "pooler_output" if a.get("pooler_output") is not None else "last_hidden_state"
    x, y = a.get(field), b.get(field)
    if isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
        x = torch.cat([t.reshape(-1) for t in x]) if isinstance(x, (list, tuple)) else x
        y = torch.cat([t.reshape(-1) for t in y]) if isinstance(y, (list, tuple)) else y
    if not torch.is_tensor(x) or not torch.is_tensor(y) or x.numel() != y.numel():
        return False
    x, y = x.float().reshape(-1), y.float().reshape(-1)
    scale = float(y.abs().max()) or 1.0
    return float((x - y).abs().max()) <= tolerance * scale


class Span(NamedTuple):
    """Where a sentence's tokens are in a row of token ids: the ``count`` tokens that end
    ``tail`` tokens before the row's end (``tail``: special tokens after the sentence)."""

    count: int
    tail: int = 0
    ids: tuple[int, ...] = ()
    """The sentence's token ids, where known (to find them in another row: :meth:`within`)."""

    def within(self, row: Sequence[int]) -> Span:
        """The span in ``row`` (a processor's ids of the same prompt): at the last run of the
        sentence's ids (a processor may add tokens after the prompt, e.g. Chameleon's
        separator), else ending as many tokens before the end (a processor that puts text
        before the prompt may merge the sentence's first token: Kosmos-2's space)."""
        n = len(self.ids)
        for end in range(len(row), n - 1, -1):
            if n and tuple(row[end - n : end]) == self.ids:
                return Span(self.count, len(row) - end, self.ids)
        return self


def sentence_log_prob(
    logits: torch.Tensor, ids: Sequence[int], count: int, tail: int = 0
) -> tuple[float, int]:
    """(sum of log-probabilities, count) of the ``count`` tokens of ``ids`` that end ``tail``
    tokens before its end, given ``logits`` at each position of ``ids`` (position k predicts
    token k + 1)."""
    end = len(ids) - tail
    if count < 1 or tail < 0 or count >= end or logits.shape[0] != len(ids):
        raise ValueError(f"no {count} predicted tokens in a sequence of {len(ids)}")
    log_probs = torch.log_softmax(logits.float()[end - count - 1 : end - 1], dim=-1)
    target = torch.tensor(list(ids[end - count : end]), device=log_probs.device)
    return float(log_probs.gather(-1, target[:, None]).sum()), count


def mismatch(expanded: Sequence[int], tail: Sequence[int]) -> str:
    """Why the processor's ids ``expanded`` do not end with the tokenizer's ``tail``: tokens the
    processor adds after the prompt (Fuyu's beginning of answer), or any other difference."""
    expanded, tail = list(expanded), list(tail)
    for end in range(len(expanded) - 1, len(tail) - 1, -1):
        if tail and expanded[end - len(tail) : end] == tail:
            return f"the processor adds {len(expanded) - end} token(s) after the prompt"
    return "the prompts' shared prefix does not match the processor's"


def appended_specials(
    tokenizer: Any, expanded: Sequence[int], tail: Sequence[int]
) -> list[int] | None:
    """The special tokens a processor puts after the prompt's own ids (Fuyu's beginning of
    answer): the ids of ``expanded`` after its last run of ``tail`` (the tokenizer's end of the
    prompt), where only special tokens follow it; None where ``expanded`` does not end so."""
    expanded, tail = list(expanded), list(tail)
    for extra in range(special_run(tokenizer, expanded) + 1):
        end = len(expanded) - extra
        if tail and end >= len(tail) and expanded[end - len(tail) : end] == tail:
            return expanded[end:]
    return None


def special_run(tokenizer: Any, ids: Sequence[int]) -> int:
    """How many of the last ``ids`` are special tokens (``[UNK]`` included)."""
    special = set(tokenizer.all_special_ids)
    n = 0
    while n < len(ids) and ids[len(ids) - 1 - n] in special:
        n += 1
    return n


def own_specials(tokenizer: Any, texts: Sequence[str]) -> list[int]:
    """How many special tokens end each text's own ids (``[UNK]`` for characters the
    vocabulary lacks; a special token's string written in the text): they are the text's."""
    rows = tokenizer(list(texts), add_special_tokens=False)["input_ids"] if texts else []
    return [special_run(tokenizer, row) for row in rows]


def trailing_specials(tokenizer: Any, ids: Sequence[int], own: int = 0) -> int:
    """How many of the last ``ids`` are special tokens appended after a text (a tokenizer's
    post-processor's ``[SEP]`` or EOS, a processor's EOS): the run of special tokens that ends
    ``ids`` less the ``own`` that end the text's own ids (:func:`own_specials`), which are
    scored as the text's."""
    return max(special_run(tokenizer, ids) - own, 0)


def sentence_span(
    tokenizer: Any, prompt_ids: Sequence[int], head_ids: Sequence[int], own: int = 0
) -> Span:
    """The text's tokens in the tokenizer's ids of ``head + text`` (``prompt_ids``): those after
    the longest common prefix with the head's ids (a token merged across the boundary is the
    text's), before the special tokens appended after it (``own``: :func:`trailing_specials`)."""
    tail = trailing_specials(tokenizer, prompt_ids, own)
    start = common_prefix_length([prompt_ids, head_ids])
    end = len(prompt_ids) - tail
    return Span(end - start, tail, tuple(prompt_ids[start:end]))


def padded(
    rows: Sequence[Sequence[int]], pad: int, left: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """``rows`` as one batch of ids and its attention mask, padded with ``pad`` on the left
    (every row's last token in the last column) or on the right (no padding before a token)."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        cells = slice(width - len(row), width) if left else slice(0, len(row))
        ids[i, cells] = torch.tensor(list(row))
        mask[i, cells] = 1
    return ids, mask


def _picked(offset: int | Sequence[int], group: Sequence[int]) -> int | list[int]:
    """``offset`` (one for all suffixes, or one per suffix) for the suffixes of ``group``."""
    return offset if isinstance(offset, int) else [offset[i] for i in group]


def select_rows(cache: Any, indices: torch.Tensor) -> None:
    """Keep the batch rows ``indices`` (repeats allowed) of every layer of ``cache``: key/value
    layers by their own selection, recurrent-state layers by their beam reordering."""
    for layer in cache.layers:
        if hasattr(layer, "recurrent_states"):
            layer.reorder_cache(indices)
        else:
            layer.batch_select_indices(indices)


class PrefixCachedForward:
    """First-answer-token logits of many prompts about one image, each image encoded once.

    ``model``, ``processor`` are a loaded image-text-to-text model and its processor (tokenizer
    padding on the left, as the plain path has it); ``convention`` = how the processor takes an
    image with a prompt (default: found by asking it, :mod:`.processor_inputs`);
    ``decoder_start`` = the first decoder token of encoder-decoder models.
    """

    def __init__(
        self,
        model: Any,
        processor: Any,
        *,
        path: str,
        device: torch.device,
        dtype: torch.dtype,
        convention: InputConvention | None = None,
        decoder_start: int = 0,
        batch_size: int = 8,
    ) -> None:
        if path not in (PREFIX_CACHE, IMAGE_FEATURES):
            raise ValueError(f"no fast forward for path {path!r}")
        self.model, self.processor, self.path = model, processor, path
        self.binder = FeatureBinder(model)
        """The image-feature call, bound to each processor output (``image_features``)."""
        self.tokenizer = processor.tokenizer
        self.device, self.dtype = device, dtype
        self.convention = convention
        self.decoder_start, self.batch_size = decoder_start, batch_size
        config = model.config
        self.model_type = getattr(config, "model_type", "")
        self.blip2 = self.model_type == "blip-2"
        self.mrope = hasattr(getattr(model, "model", None), "get_rope_index")
        image_token = getattr(config, "image_token_id", None)
        if image_token is None:
            image_token = getattr(config, "image_token_index", None)
        self.image_token = image_token
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else (self.tokenizer.eos_token_id or 0)
        self.stats = {"images": 0, "prefix_tokens": 0, "suffix_tokens": 0, "prompts": 0}
        self.seconds: dict[str, float] = {}
        """Time per part (processor, image features, prefix, cache copies, suffixes), each
        second in one part."""
        self.inner: list[float] = []
        """Seconds of the parts timed inside each open part, innermost last."""
        self.recurrent = False
        """The cache holds recurrent states (linear attention, short convolutions)."""
        self.window: int | None = None
        """The smallest sliding window of the model's cache layers (None: full attention)."""
        self.stacks: bool | None = None
        """Whether images stacked into one vision batch give each image's own features (checked
        on the first chunk: MiniCPM-V packs patches along its last axis; None: not yet)."""
        self.memo: dict[Hashable, Any] | None = None
        """Image features by the positions of their images in the current call's image list,
        kept while :meth:`shared_features` is open (None: not kept)."""

    @contextmanager
    def shared_features(self) -> Iterator[None]:
        """Within the block, calls about the same list of images (one per prompt template of a
        sweep) encode each image once: the features of the first call are reused."""
        self.memo = {}
        try:
            yield
        finally:
            self.memo = None

    @contextmanager
    def timed(self, part: str) -> Iterator[None]:
        """Add the block's seconds to ``part``, less those of parts timed inside it (the image
        features inside the prefix, the cache copies inside the suffixes): each second counts
        in one part."""
        start = time.perf_counter()
        self.inner.append(0.0)
        try:
            yield
        finally:
            total = time.perf_counter() - start
            own = total - self.inner.pop()
            self.seconds[part] = self.seconds.get(part, 0.0) + own
            if self.inner:
                self.inner[-1] += total

    # -- one image -------------------------------------------------------------------------

    def encode_image(
        self, image: Any, prompt: str, key: Hashable = None
    ) -> tuple[dict[str, Any], Any]:
        """The processor's output for ``image`` with ``prompt`` and the image features (once;
        ``key``: the image's name in :attr:`memo`)."""
        enc = self.process(image, prompt)
        return enc, self.remembered(key, lambda: self.image_features([enc]))

    def remembered(self, key: Hashable, compute: Any) -> Any:
        """``compute()``, or its value kept under ``key`` while features are shared."""
        if self.memo is None or key is None:
            return compute()
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    def process(self, image: Any, prompt: str) -> dict[str, Any]:
        """The processor's output for ``image`` with ``prompt``, on the model's device."""
        if self.convention is None:
            chat = bool(getattr(self.processor, "chat_template", None))
            self.convention = find_convention(self.processor, self.model.config, prompt, chat)
        with self.timed("processor"):
            return model_inputs(
                self.processor,
                self.convention,
                [image],
                [prompt],
                accepted=None,
                device=self.device,
                dtype=self.dtype,
                padding=False,
            )

    def image_features(self, encs: Sequence[dict[str, Any]]) -> Any:
        """The model's image features of the images of ``encs`` (processor outputs of one image
        each), in one vision-tower batch."""
        call = self.feature_call(encs[0])
        with self.timed("image_features"):
            kwargs = call.kwargs(encs[0])
            if len(encs) > 1:
                kwargs = {k: torch.cat([call.kwargs(e)[k] for e in encs], 0) for k in kwargs}
            try:
                return call.method(**kwargs, return_dict=True)
            except TypeError as err:  # a signature that does not say what the method takes
                raise UnsupportedPrefix(f"get_image_features: TypeError: {err}") from err

    def feature_call(self, enc: dict[str, Any]) -> Any:
        """The image-feature call bound to ``enc`` (:class:`UnsupportedPrefix` if it cannot be)."""
        try:
            return self.binder.bind(enc)
        except UnboundFeatures as err:
            raise UnsupportedPrefix(str(err)) from err

    def split(self, expanded: list[int], prompts: Sequence[str]) -> tuple[int, list[list[int]]]:
        """(shift, token rows): ``expanded`` = the processor's ids of ``prompts[0]``; each row is
        the tokenizer's ids of a prompt, so row ``j`` from index ``k`` on is the plain path's
        input from index ``k + shift`` on, for every ``k`` at or after the shared prefix."""
        with self.timed("tokenizer"):
            head = self.convention.image_text if self.convention else ""
            rows = [list(ids) for ids in self.tokenizer([head + p for p in prompts])["input_ids"]]
        shared = min(common_prefix_length(rows), min(len(r) for r in rows) - 1)
        if shared < 1:
            raise UnsupportedPrefix(mismatch(expanded, rows[0][shared:]))
        rows = self._with_appended(expanded, rows, shared)
        shift = len(expanded) - len(rows[0])
        if shift < 0:
            raise UnsupportedPrefix("the prompts' shared prefix does not match the processor's")
        if self.image_token is not None:
            last_image = max(
                (i for i, t in enumerate(expanded) if t == self.image_token), default=-1
            )
            if last_image >= shared + shift:
                raise UnsupportedPrefix("image tokens come after the shared prefix")
        return shift, rows

    def _with_appended(
        self, expanded: list[int], rows: list[list[int]], shared: int
    ) -> list[list[int]]:
        """``rows`` each followed by the special tokens the processor puts after the prompt
        (none for most), so that each row ends as the processor's ids do; the tokenizer's ids
        after ``shared`` must be the end of ``expanded`` up to them."""
        tail = rows[0][shared:]
        added = appended_specials(self.tokenizer, expanded, tail)
        if added is None:
            raise UnsupportedPrefix(mismatch(expanded, tail))
        return [row + added for row in rows]

    @torch.inference_mode()
    def logits(
        self,
        image: Any,
        prompts: Sequence[str],
        keys: Sequence[Hashable] | None = None,
        image_key: Hashable = None,
    ) -> torch.Tensor:
        """Logits of the first answer token [len(prompts), vocab] (float32), in prompt order.

        ``keys`` group prompts that share more than the image (one demonstration set each); their
        common part is cached once per group. ``image_key``: see :meth:`encode_image`.
        """
        if not prompts:
            raise ValueError("no prompts")
        enc, features = self.encode_image(image, prompts[0], image_key)
        expanded = enc["input_ids"][0].tolist()
        shift, rows = self.split(expanded, prompts)
        keys = list(keys) if keys is not None else [None] * len(prompts)
        groups: dict[Hashable, list[int]] = {}
        for j, key in enumerate(keys):
            groups.setdefault(key, []).append(j)
        self.stats["images"] += 1
        self.stats["prompts"] += len(prompts)
        out: list[torch.Tensor | None] = [None] * len(prompts)
        if self.path == IMAGE_FEATURES:
            self._encoder_decoder(enc, features, expanded, shift, rows, out)
        else:
            self._decoder_only(enc, features, expanded, shift, rows, groups, out)
        return torch.stack(out)

    @torch.inference_mode()
    def continuation_log_probs(
        self, image: Any, head: str, texts: Sequence[str], image_key: Hashable = None
    ) -> list[tuple[float, int]]:
        """(sum of log-probabilities, token count) of each text's tokens after ``head`` (the
        prompt before it, image included), float32: the head up to its last token runs once,
        each text as a continuation of its cache. Token ids are the plain path's (the longest
        common prefix of the head and each full prompt marks where the text starts)."""
        if self.path != PREFIX_CACHE:
            raise UnsupportedPrefix("continuations need a decoder-only prefix cache")
        prompts = [head + t for t in texts]
        enc, features = self.encode_image(image, prompts[0], image_key)
        expanded = enc["input_ids"][0].tolist()
        lead = self.convention.image_text if self.convention else ""
        with self.timed("tokenizer"):
            rows = [list(r) for r in self.tokenizer([lead + p for p in prompts])["input_ids"]]
            head_ids = list(self.tokenizer([lead + head])["input_ids"][0])
        starts = [common_prefix_length([row, head_ids]) for row in rows]
        if min(starts) > 0:
            rows = self._with_appended(expanded, rows, min(starts) - 1)
        owns = own_specials(self.tokenizer, texts)
        tails = [trailing_specials(self.tokenizer, r, o) for r, o in zip(rows, owns, strict=True)]
        if any(b + t >= len(row) for b, t, row in zip(starts, tails, rows, strict=True)):
            raise UnsupportedPrefix("a text has no tokens of its own after the prompt")
        start, shift = min(starts) - 1, len(expanded) - len(rows[0])
        if start < 0 or start + shift < 1 or shift < 0:
            raise UnsupportedPrefix("the prompt leaves no prefix to cache")
        self._check_cut(expanded, rows[0], start, shift)
        ids = torch.tensor([expanded[: start + shift]], device=self.device)
        with self.timed("prefix"):
            positions, offset = self._prefix_positions(enc, ids)
            extras = self._token_inputs([enc], ids.shape[1])
            cache = self._prefix_forward(ids, features, positions, extras)
        self.stats["images"] += 1
        self.stats["prompts"] += len(prompts)

        def run(batch: Sequence[int]) -> list[tuple[float, int]]:
            suffixes = [rows[j][start:] for j in batch]
            with self.timed("suffixes"):
                logits = self._all_logits(cache, suffixes, start + shift, offset)
            return [
                sentence_log_prob(lg, suffix, len(rows[j]) - starts[j] - tails[j], tails[j])
                for j, lg, suffix in zip(batch, logits, suffixes, strict=True)
            ]

        return map_batches(run, list(range(len(prompts))), self.batch_size)

    def _all_logits(self, cache, suffixes, start, offset) -> list[torch.Tensor]:
        """Logits at every position of each suffix ([len(suffix), vocab] each, padding cut)."""
        out: list[torch.Tensor | None] = [None] * len(suffixes)
        for group in self._padding_groups(suffixes):
            part = [suffixes[i] for i in group]
            logits = self._run_suffixes(
                cache, part, start, _picked(offset, group), keep_last=False
            ).logits
            for i, row, suffix in zip(group, logits, part, strict=True):
                out[i] = row[: len(suffix)].float()
        return out

    def _padding_groups(self, suffixes: Sequence[Sequence[int]]) -> list[list[int]]:
        """The positions of ``suffixes`` that may share one padded batch: all of them, or, with
        recurrent layers, those of equal length (no padding token may enter a state)."""
        if not self.recurrent:
            return [list(range(len(suffixes)))]
        lengths = sorted({len(x) for x in suffixes})
        return [[i for i, x in enumerate(suffixes) if len(x) == n] for n in lengths]

    @torch.inference_mode()
    def logits_many(
        self, images: Sequence[Any], prompts: Sequence[Sequence[str]]
    ) -> list[torch.Tensor]:
        """``logits`` of many images at once, zero-shot: the prefixes of images whose prefixes
        have the same length run as one batch (``batch_size`` images at a time), and suffixes of
        different images share batches (each row on its image's cache row). Fewer, larger
        forwards: better use of a GPU, and of CPU threads."""
        if self.path != PREFIX_CACHE:
            return [
                self.logits(image, group, image_key=(b,)) if group else torch.empty(0)
                for b, (image, group) in enumerate(zip(images, prompts, strict=True))
            ]
        out: list[list[torch.Tensor | None]] = [[None] * len(group) for group in prompts]
        ready: list[list | None] = []
        by_shift: dict[int, list[int]] = {}  # images with as many image tokens
        for b, (image, group) in enumerate(zip(images, prompts, strict=True)):
            if not group:
                ready.append(None)
                continue
            enc = self.process(image, group[0])
            expanded = enc["input_ids"][0].tolist()
            shift, rows = self.split(expanded, group)
            shared = min(common_prefix_length(rows), min(len(r) for r in rows) - 1)
            ready.append([enc, None, expanded, rows, shared, shift])
            by_shift.setdefault(shift, []).append(b)
            self.stats["images"] += 1
            self.stats["prompts"] += len(group)
        for shift, members in by_shift.items():
            for i in range(0, len(members), self.batch_size):
                chunk = members[i : i + self.batch_size]
                # one prefix length for the batch: the shortest shared part of its images
                shared = min(ready[b][4] for b in chunk)
                for b in chunk:
                    self._check_cut(ready[b][2], ready[b][3][0], shared, shift)
                    ready[b][2] = ready[b][2][: shared + shift]
                    ready[b][4] = shared
                self._prefix_batch(chunk, shared + shift, ready, out)
        return [torch.stack(group) if group else torch.empty(0) for group in out]

    def _chunk_features(self, encs: Sequence[dict[str, Any]]) -> Any:
        """Image features of a chunk of images: one vision batch where their inputs stack
        (same shapes) and stacking was shown to give each image's own features, else one image
        at a time, combined."""
        calls = [self.feature_call(e).kwargs(e) for e in encs]
        keys = calls[0]
        stackable = all(set(c) == set(keys) for c in calls) and all(
            torch.is_tensor(c[k]) and c[k].shape[1:] == keys[k].shape[1:]
            for c in calls
            for k in keys
        )
        if not stackable or self.stacks is False:
            return combine_features([self.image_features([e]) for e in encs])
        if self.stacks:
            return self.image_features(encs)
        alone = combine_features([self.image_features([e]) for e in encs])
        try:  # the first chunk: does one batch give each image's own features?
            batched = self.image_features(encs)
        except (RuntimeError, ValueError, UnsupportedPrefix):
            batched = None
        tolerance = max(1e-4, 16 * torch.finfo(self.dtype).eps)  # bf16 kernels differ by batch
        self.stacks = batched is not None and same_features(batched, alone, tolerance)
        return batched if self.stacks else alone

    def _check_cut(self, expanded: list[int], row: list[int], shared: int, shift: int) -> None:
        """The prefix may end at ``shared`` (tokenizer index): image tokens before it, and the
        processor's ids after it equal the tokenizer's."""
        if expanded[shared + shift :] != row[shared:]:
            raise UnsupportedPrefix("the prompts' shared prefix does not match the processor's")
        if self.image_token is not None and self.image_token in expanded[shared + shift :]:
            raise UnsupportedPrefix("image tokens come after the shared prefix")

    def _prefix_batch(self, chunk: list[int], start: int, ready: list, out: list) -> None:
        ids = torch.tensor([ready[b][2] for b in chunk], device=self.device)
        with self.timed("prefix"):
            positions, offsets = [], []
            for i, b in enumerate(chunk):
                pos, offset = self._prefix_positions(ready[b][0], ids[i : i + 1])
                positions.append(pos)
                offsets.append(offset)
            position_ids = torch.cat(positions, 1) if positions[0] is not None else None
            features = self.remembered(
                tuple(chunk), lambda: self._chunk_features([ready[b][0] for b in chunk])
            )
            extras = self._token_inputs([ready[b][0] for b in chunk], ids.shape[1])
            cache = self._prefix_forward(ids, features, position_ids, extras)
        self.stats["prefix_tokens"] += start * len(chunk)
        pairs = [(i, b, j) for i, b in enumerate(chunk) for j in range(len(ready[b][3]))]
        pairs.sort(key=lambda p: len(ready[p[1]][3][p[2]]))  # similar lengths: less padding

        def run(batch: Sequence[tuple[int, int, int]]) -> list:
            suffixes = [ready[b][3][j][ready[b][4] :] for _, b, j in batch]
            self.stats["suffix_tokens"] += sum(len(x) for x in suffixes)
            rows = [i for i, _, _ in batch]
            with self.timed("suffixes"):
                logits = self._suffix_forward(
                    cache, suffixes, start, [offsets[i] for i in rows], rows=rows
                )
            return list(logits)

        for (_, b, j), row in zip(pairs, map_batches(run, pairs, self.batch_size), strict=True):
            out[b][j] = row

    # -- decoder-only: prefix cache ----------------------------------------------------------

    def _decoder_only(self, enc, features, expanded, shift, rows, groups, out) -> None:
        shared = min(common_prefix_length(rows), min(len(r) for r in rows) - 1)
        start = shared + shift
        ids = torch.tensor([expanded[:start]], device=self.device)
        with self.timed("prefix"):
            positions, offset = self._prefix_positions(enc, ids)
            extras = self._token_inputs([enc], ids.shape[1])
            cache = self._prefix_forward(ids, features, positions, extras)
        self.stats["prefix_tokens"] += start
        for members in groups.values():
            group_rows = [rows[j] for j in members]
            own = shared
            if len(members) > 1:
                own = min(common_prefix_length(group_rows), min(len(r) for r in group_rows) - 1)
            group_cache, group_start = cache, start
            if own > shared:
                extra = group_rows[0][shared:own]
                with self.timed("demonstrations"):
                    group_cache = self._extend(cache, extra, start, offset)
                group_start = start + len(extra)
                self.stats["prefix_tokens"] += len(extra)

            def run(batch: Sequence[int], c=group_cache, s=group_start, o=own) -> list:
                suffixes = [rows[j][o:] for j in batch]
                self.stats["suffix_tokens"] += sum(len(x) for x in suffixes)
                with self.timed("suffixes"):
                    return list(self._suffix_forward(c, suffixes, s, offset))

            for j, row in zip(members, map_batches(run, members, self.batch_size), strict=True):
                out[j] = row

    def _prefix_positions(self, enc, ids) -> tuple[torch.Tensor | None, int]:
        """Position ids of the prefix (None = the model's default 0..n-1) and the offset of text
        positions after it (multimodal RoPE: max position + 1 - length; else 0)."""
        if not self.mrope:
            return None, 0
        base = self.model.model
        n = ids.shape[1]
        kwargs = {"attention_mask": torch.ones_like(ids)}
        if "mm_token_type_ids" in enc:
            kwargs["mm_token_type_ids"] = enc["mm_token_type_ids"][:, :n]
        positions, _ = base.get_rope_index(ids, image_grid_thw=enc.get("image_grid_thw"), **kwargs)
        return positions, int(positions.max()) + 1 - n

    def _token_inputs(self, encs: Sequence[dict[str, Any]], n: int) -> dict[str, Any]:
        """The processor's other per-token inputs of the prefix (token types that mark image
        tokens, e.g. Gemma 3's bidirectional image attention), cut to its ``n`` tokens and
        stacked over ``encs``; only those the forward names."""
        params = inspect.signature(self.model.forward).parameters
        width = encs[0]["input_ids"].shape[-1]
        names = [
            k
            for k, v in encs[0].items()
            if k not in ("input_ids", "attention_mask", "position_ids")
            and k in params
            and torch.is_tensor(v)
            and v.dim() == 2
            and v.shape[-1] == width
        ]
        return {k: torch.cat([e[k][:, :n] for e in encs], 0) for k in names}

    def _prefix_forward(self, ids, features, positions, extras=None):
        kwargs: dict[str, Any] = {
            **(extras or {}),
            "input_ids": ids,
            "attention_mask": torch.ones_like(ids),
            "mm_encoder_outputs": {"image": features},
            "use_cache": True,
        }
        if positions is not None:
            kwargs["position_ids"] = positions
        if self.blip2:
            kwargs["pixel_values"] = None
            output = self.model(**kwargs).language_model_outputs
        else:
            output = self.model(**kwargs, logits_to_keep=1)
        return self._checked(output.past_key_values)

    def _checked(self, cache: Any) -> Any:
        """``cache`` if it can be copied and extended exactly: full-attention layers,
        sliding-window layers while every prompt fits inside their window (the window is kept
        in :attr:`window` and checked for each batch of suffixes), and the recurrent states of
        linear-attention and convolution layers (:attr:`recurrent`: their suffixes are batched
        only with suffixes of the same length, so no padding token enters a state)."""
        from transformers.cache_utils import (
            DynamicCache,
            DynamicLayer,
            DynamicSlidingWindowLayer,
            LinearAttentionAndFullAttentionLayer,
            LinearAttentionLayer,
        )

        layers = getattr(cache, "layers", None)
        if not isinstance(cache, DynamicCache) or not layers:
            raise UnsupportedPrefix(f"cache of type {type(cache).__name__} is not a DynamicCache")
        recurrent = (LinearAttentionLayer, LinearAttentionAndFullAttentionLayer)
        self.recurrent = any(type(layer) in recurrent for layer in layers)
        known = (DynamicLayer, DynamicSlidingWindowLayer, *recurrent)
        if any(type(layer) not in known for layer in layers):
            kinds = sorted({type(layer).__name__ for layer in layers if type(layer) not in known})
            raise UnsupportedPrefix(f"cache layers {kinds} (recurrent or other) are not copied")
        windows = [layer.sliding_window for layer in layers if hasattr(layer, "sliding_window")]
        if windows:
            self.window = min(windows)
            self._fits_window(cache.get_seq_length())
        return cache

    def _fits_window(self, length: int) -> None:
        """A sequence of ``length`` tokens fits every sliding window (nothing evicted)."""
        if self.window is not None and length >= self.window - 1:
            raise UnsupportedPrefix(
                f"a prompt of {length} tokens reaches the sliding window ({self.window} tokens)"
            )

    def _language_model(self):
        return self.model.language_model if self.blip2 else self.model

    def _run_suffixes(self, cache, suffixes, start, offset, keep_last=True, rows=None):
        """Forward ``suffixes`` on a copy of ``cache``; ``rows[i]`` = the cache row (image) of
        suffix i (None: the cache has one row); ``offset``: one int or one per suffix. Padded
        on the left when only the last position is kept (it is then every row's last token),
        else on the right (padding after every row's tokens, never before one)."""
        n = len(suffixes)
        width = max(len(s) for s in suffixes)
        self._fits_window(start + width)
        ids, mask = padded(suffixes, self.pad_id, left=keep_last)
        ids, mask = ids.to(self.device), mask.to(self.device)
        if not isinstance(offset, int):
            offset = torch.tensor(offset, device=self.device)[:, None]
        positions = start + offset + (mask.cumsum(-1) - 1).clamp(min=0)
        if self.mrope:
            positions = positions[None].expand(3, n, width)
        prefix_mask = torch.ones((n, start), dtype=mask.dtype, device=self.device)
        full_mask = torch.cat([prefix_mask, mask], 1)
        with self.timed("cache_copies"):
            batch_cache = copy.deepcopy(cache)
            if self.recurrent:
                select_rows(batch_cache, torch.tensor(rows or [0] * n, device=self.device))
            elif rows is not None:
                batch_cache.batch_select_indices(torch.tensor(rows, device=self.device))
            elif n > 1:
                batch_cache.batch_repeat_interleave(n)
        output = self._language_model()(
            input_ids=ids,
            attention_mask=full_mask,
            position_ids=positions,
            past_key_values=batch_cache,
            use_cache=True,
            logits_to_keep=1 if keep_last else 0,
        )
        return output

    def _extend(self, cache, extra, start, offset):
        """A copy of ``cache`` extended by the tokens ``extra`` (one demonstration set)."""
        output = self._run_suffixes(cache, [extra], start, offset)
        return self._checked(output.past_key_values)

    def _suffix_forward(self, cache, suffixes, start, offset, rows=None) -> torch.Tensor:
        out: list[torch.Tensor | None] = [None] * len(suffixes)
        for group in self._padding_groups(suffixes):
            output = self._run_suffixes(
                cache,
                [suffixes[i] for i in group],
                start,
                _picked(offset, group),
                rows=None if rows is None else [rows[i] for i in group],
            )
            for i, row in zip(group, output.logits[:, -1, :].float(), strict=True):
                out[i] = row
        return torch.stack(out)

    # -- encoder-decoder: image features reused ----------------------------------------------

    def _encoder_decoder(self, enc, features, expanded, shift, rows, out) -> None:
        shared = min(common_prefix_length(rows), min(len(r) for r in rows) - 1)
        head = expanded[: shared + shift]

        def run(batch: Sequence[int]) -> list:
            full = [head + rows[j][shared:] for j in batch]
            self.stats["suffix_tokens"] += sum(len(x) for x in full)
            ids, mask = padded(full, self.pad_id, left=True)
            start = torch.full(
                (len(full), 1), self.decoder_start, dtype=torch.long, device=self.device
            )
            decoder = {"decoder_input_ids": start}
            logits = self._encoder_decoder_forward(ids, mask, features, decoder)
            return list(logits[:, -1, :].float())

        def timed_run(batch: Sequence[int]) -> list:
            with self.timed("encoder_decoder"):
                return run(batch)

        indices = list(range(len(rows)))
        for j, row in zip(indices, map_batches(timed_run, indices, self.batch_size), strict=True):
            out[j] = row

    def _encoder_decoder_forward(self, ids, mask, features, decoder: dict[str, Any]):
        """Decoder logits of the encoder rows ``ids`` (``mask``) about one image, given its
        ``features`` (one image's; repeated for every row) and the ``decoder`` inputs."""
        n = ids.shape[0]
        batch_features = copy.copy(features)
        batch_features["pooler_output"] = features.pooler_output.expand(n, -1, -1).contiguous()
        return self.model(
            pixel_values=None,
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            mm_encoder_outputs={"image": batch_features},
            **decoder,
        ).logits

    @torch.inference_mode()
    def decoder_logits(
        self, image: Any, prompt: str, decoder: dict[str, Any], image_key: Hashable = None
    ) -> torch.Tensor:
        """Decoder logits at every position of the ``decoder`` inputs (``decoder_input_ids``,
        ``decoder_attention_mask``: one row per text), float32, after the encoder reads
        ``image`` and ``prompt``; the image's features computed once (``image_key``: see
        :meth:`encode_image`)."""
        if self.path != IMAGE_FEATURES:
            raise UnsupportedPrefix("decoder targets need an encoder-decoder model")
        enc, features = self.encode_image(image, prompt, image_key)
        if enc.get("decoder_input_ids") is not None and enc["decoder_input_ids"].numel():
            raise UnsupportedPrefix("the processor puts the prompt into the decoder")
        n = decoder["decoder_input_ids"].shape[0]
        ids, mask = enc["input_ids"].expand(n, -1), enc["attention_mask"].expand(n, -1)
        self.stats["prompts"] += n
        with self.timed("encoder_decoder"):
            return self._encoder_decoder_forward(ids, mask, features, decoder).float()
