"""``--score caption`` and ``caption-pmi`` on every generative row of the architecture matrix,
against a reference written here from transformers alone.

The reference runs one unpadded (image, sentence) sequence at a time, made by the row's processor
(loaded afresh), through the transformers model in float32, and sums torch's own ``log_softmax``
at the sentence's tokens. Which tokens are the sentence's is read independently of the engine:
the model's chat template renders the user turn and an assistant message holding the sentence,
continued (the sentence is the last text of the prompt); the tokens whose characters overlap the
sentence's (the tokenizer's offsets) are its tokens, so a template that puts a space before the
answer gives the first token with the space (``ĠA``). A prefix-LM's processor takes the sentence
as its ``suffix``, whose labelled tokens (less the EOS it appends) are the sentence's. An
encoder-decoder's processor gets the prompt without the sentence, and the tokenizer's ids of the
sentence are the model's ``labels`` (the model shifts them right after its own decoder start);
the sentence's tokens are the non-special ones (the tokenizer's special-tokens mask). The engine
scores in uneven batches of three, on its fast path and on its plain path, and must give the same
sums and token counts within 1e-4. Rows that fail upstream are left out, as in
``test_architectures``.
"""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path

import pytest
import torch
import transformers
from bla_eval.items import decode_image
from bla_eval.protocols import get_template
from bla_eval.protocols.templates import CAPTION_REQUEST
from bla_eval.scorers import LoadOptions, Query, load_scorer
from bla_eval.scorers.caption import BLANK
from bla_eval.scorers.prefix_cache import PLAIN
from bla_eval.testing.architectures import ARCHITECTURES
from PIL import Image

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.slow]
ROWS = [
    n
    for n, a in ARCHITECTURES.items()
    if a.kind == "generative" and not a.upstream_error and not a.out_of_scope
]
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def ap_points(built_dataset: Path) -> list:
    from bla_eval.benchmarks.bla import load_bla

    return [p for p in load_bla(str(built_dataset)) if p.task == "active_passive"][:2]


@pytest.fixture(scope="module")
def folders(ap_points, tiny_model) -> dict[str, Path]:
    """The matrix's models, built on the texts ``test_architectures`` builds them on."""
    texts = [c for p in ap_points for c in p.captions] + [get_template().question] * 5
    return {name: tiny_model(name, texts) for name in ROWS}


def conversation(sentence: str, image: bool) -> list[dict]:
    request = {"type": "text", "text": CAPTION_REQUEST}
    user = [{"type": "image"}, request] if image else [request]
    answer = [{"type": "text", "text": sentence}]
    return [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]


def sentence_tokens(tokenizer, text: str, sentence: str) -> list[int]:
    """The sentence's token ids in the tokenizer's ids of ``text`` (which ends with it): the
    non-special tokens overlapping its characters."""
    enc = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    begin = len(text) - len(sentence)
    marks = [
        k
        for k, ((_, end), special) in enumerate(
            zip(enc["offset_mapping"], enc["special_tokens_mask"], strict=True)
        )
        if end > begin and not special
    ]
    assert marks == list(range(marks[0], marks[-1] + 1)), marks
    return enc["input_ids"][marks[0] : marks[-1] + 1]


def placed(tokenizer, ids: list[int], want: list[int], sentence: str) -> list[int]:
    """The positions of the sentence in the model's ids: the last run of its tokens, else (a
    processor that adds text before the prompt merges its first token: Kosmos-2) the last run
    of as many tokens that reads as the sentence."""
    n = len(want)
    ends = range(len(ids), n - 1, -1)
    for end in ends:
        if ids[end - n : end] == want:
            return list(range(end - n, end))
    for end in ends:
        if tokenizer.decode(ids[end - n : end]).strip() == sentence:
            return list(range(end - n, end))
    raise AssertionError(f"the model's ids hold no run of {sentence!r}")


class Reference:
    """One row's transformers model (the object the engine loaded: a checkpoint that leaves a
    weight out gets it drawn anew at each load) and its processor, loaded afresh, scoring one
    sequence at a time."""

    def __init__(self, model, folder: Path, trust: bool, convention) -> None:
        self.model = model
        self.processor = transformers.AutoProcessor.from_pretrained(folder, trust_remote_code=trust)
        self.tokenizer = self.processor.tokenizer
        self.chat = bool(getattr(self.processor, "chat_template", None))
        self.suffix = "suffix" in inspect.signature(type(self.processor).__call__).parameters
        self.convention = convention  # nested images, the image text of a prompt without template
        config = model.config
        self.encoder_decoder = bool(
            getattr(config, "is_encoder_decoder", False)
            or getattr(config, "use_decoder_only_language_model", True) is False
        )

    def text(self, sentence: str, image: bool) -> str:
        if self.chat:
            return self.processor.apply_chat_template(
                conversation(sentence, image), continue_final_message=True
            )
        return (self.convention.image_text if image else "") + sentence

    @torch.inference_mode()
    def decoded(self, sentence: str, image: Image.Image | None) -> tuple[float, int]:
        """An encoder-decoder's log P(sentence): the encoder reads the image and the prompt,
        the sentence's ids are the decoder's labels."""
        prompt = self.text(sentence, image is not None)[: -len(sentence)]
        if image is None:
            enc = self.tokenizer(prompt, return_tensors="pt")
            enc = {k: enc[k] for k in ("input_ids", "attention_mask")}
        else:
            images = self.convention.images([image])
            enc = self.processor(images=images, text=[prompt], return_tensors="pt")
        # a processor that sends the text to the decoder (Pix2Struct): the prompt's ids first,
        # none for no prompt (a captioning checkpoint's decoder starts from its start token)
        lead = enc.pop("decoder_input_ids", torch.zeros((1, 0), dtype=torch.long))[0].tolist()
        lead = lead if prompt else []
        enc.pop("decoder_attention_mask", None)
        own = self.tokenizer(sentence, return_special_tokens_mask=True)
        labels = lead + own["input_ids"]
        positions = [len(lead) + k for k, m in enumerate(own["special_tokens_mask"]) if not m]
        logits = self.model(**enc, labels=torch.tensor([labels])).logits[0].float()
        log_probs = torch.log_softmax(logits, -1)
        return sum(float(log_probs[k, labels[k]]) for k in positions), len(positions)

    @torch.inference_mode()
    def log_prob(self, sentence: str, image: Image.Image | None) -> tuple[float, int]:
        if self.encoder_decoder:
            return self.decoded(sentence, image)
        images = None if image is None else self.convention.images([image])
        if self.suffix:
            lead = self.convention.image_text if image is not None else ""
            enc = self.processor(images=images, text=[lead], suffix=[sentence], return_tensors="pt")
            labelled = (enc.pop("labels")[0] != -100).nonzero()[:, 0].tolist()
            ids = enc["input_ids"][0].tolist()
            if ids[labelled[-1]] == self.tokenizer.eos_token_id:
                labelled = labelled[:-1]
            own = self.tokenizer(sentence, add_special_tokens=False)["input_ids"]
            assert [ids[k] for k in labelled] == own
            positions = labelled
        else:
            text = self.text(sentence, image is not None)
            want = sentence_tokens(self.tokenizer, text, sentence)
            if image is None:
                enc = self.tokenizer(text, return_tensors="pt")
                enc = {k: enc[k] for k in ("input_ids", "attention_mask")}
            else:
                enc = self.processor(images=images, text=[text], return_tensors="pt")
                enc.pop("labels", None)
            ids = enc["input_ids"][0].tolist()
            positions = placed(self.tokenizer, ids, want, sentence)
        logits = self.model(**enc).logits[0].float()
        logits = logits[len(logits) - len(ids) :]  # GIT's logits start with its image positions
        log_probs = torch.log_softmax(logits, -1)
        return sum(float(log_probs[k - 1, ids[k]]) for k in positions), len(positions)


def engine(folder: Path, name: str, mode: str):
    arch = ARCHITECTURES[name]
    options = LoadOptions(
        device="cpu",
        score=mode,
        pmi_alpha=1.0 if mode == "caption-pmi" else None,
        trust_remote_code="--trust-remote-code" in arch.flags,
    )
    return load_scorer(str(folder), "generative", 3, options)


@pytest.mark.parametrize("mode", ["caption", "caption-pmi"])
@pytest.mark.parametrize("name", ROWS)
def test_likelihood_equals_an_independent_log_softmax(name, mode, folders, ap_points):
    compare(folders[name], name, mode, ap_points)


@pytest.mark.parametrize(
    ("name", "template"),
    [("blip-2-t5", "$A </s>"), ("florence2", "<s> $A </s>"), ("pix2struct", "$A </s>")],
)
def test_an_encoder_decoder_counts_no_special_token(name, template, folders, ap_points, tmp_path):
    """The tokenizers of released encoder-decoders add special tokens (Flan-T5's and
    Pix2Struct's ``</s>`` after the text, Florence-2's BART ``<s>`` before it as well): the
    decoder reads them, the sentence's sum leaves them out."""
    from tokenizers.processors import TemplateProcessing

    folder = tmp_path / name
    shutil.copytree(folders[name], folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    specials = [(t, tokenizer.convert_tokens_to_ids(t)) for t in ("<s>", "</s>")]
    tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
        single=template, special_tokens=specials
    )
    tokenizer.save_pretrained(folder)
    wrapped = transformers.AutoTokenizer.from_pretrained(folder)("A man")["input_ids"]
    assert wrapped[-1] == tokenizer.eos_token_id and len(wrapped) > 2, wrapped
    compare(folder, name, "caption-pmi", ap_points)


def compare(folder: Path, name: str, mode: str, ap_points: list) -> None:
    """The engine's scores of the model in ``folder`` (row ``name``) equal the reference's, on
    its own path and, where that is a fast path, on the plain path."""
    images = [decode_image(p, p.images[0]).resize((40, 30)) for p in ap_points]
    queries = [[Query(c) for c in p.captions] for p in ap_points]
    scorer = engine(folder, name, mode)
    trust = "--trust-remote-code" in ARCHITECTURES[name].flags
    reference = Reference(scorer.model, folder, trust, scorer.convention)
    check(scorer, reference, images, queries, mode)
    if scorer.caption_path != PLAIN:  # the fast path ran: the plain path too
        scorer.caption_path = PLAIN
        check(scorer, reference, images, queries, mode)


def check(scorer, reference: Reference, images: list, queries: list, mode: str) -> None:
    """The engine's terms of every (image, sentence) equal the reference's."""
    scored = scorer.score(images, queries)
    path = scorer.caption_path
    for image, group, row, terms in zip(images, queries, scored.scores, scored.terms, strict=True):
        for query, value, cell in zip(group, row, terms, strict=True):
            want, count = reference.log_prob(query.sentence, image)
            assert cell["tokens"] == count, (path, query.sentence)
            assert cell["log_p_image"] == pytest.approx(want, abs=TOLERANCE), path
            if mode == "caption":
                assert value == cell["log_p_image"]
                continue
            blank = Image.new("RGB", (64, 64), (128, 128, 128))
            prior, _ = reference.log_prob(
                query.sentence, blank if scorer.prior_input == BLANK else None
            )
            assert cell["log_p_prior"] == pytest.approx(prior, abs=TOLERANCE), path
            assert value == pytest.approx(want - prior, abs=2 * TOLERANCE)
