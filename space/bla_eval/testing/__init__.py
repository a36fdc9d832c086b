"""Random-weight models of real architectures, for the tests and the speed scripts.

No command imports this package: the tests build their models here, ``bla_eval.performance``
times the engine with its full-size shapes (``save_random_clip`` with the default ``CLIPConfig``,
``save_smolvlm_shaped``) without downloading a model, and ``python -m bla_eval.testing.tiny
--out DIR`` (:mod:`.tiny`) saves any row of the architecture matrix (:mod:`.architectures`; a
tiny LLaVA by default) for an offline first try of ``bla-eval`` and the Space. It needs the
``engine`` extra.

Each builder saves a model the way a Hub repository holds it (weights, config, processor or
tokenizer) into a folder, so that the engine loads it back by path as it loads a real model. The
architectures and processors are the real ones of ``transformers`` / ``open_clip``; only the sizes
are tiny (:mod:`.sizes`) and the tokenizers are trained on the texts the model will score
(:mod:`.processors`), so every sentence has in-vocabulary tokens. ``save_random_clip`` seeds torch
itself; the other builders draw from torch's generator, so a caller that seeds once
(``torch.manual_seed``) and builds in a fixed order gets the same weights, hence the same scores,
every run.

- :mod:`.sizes`: the tiny layer and vision sizes;
- :mod:`.processors`: tokenizers trained on the scored texts, image processors, chat templates;
- :mod:`.dual_encoders`: CLIP, SigLIP, open_clip (kinds ``contrastive``, ``openclip``);
- :mod:`.itm`: BLIP and BLIP-2 image-text matching heads (kind ``itm``);
- :mod:`.generative`: BLIP-2 (OPT, T5), LLaVA, Idefics3, Qwen2-VL, a SmolVLM-256M-shaped model
  (kind ``generative``) and a text-only Llama (kind ``text``);
- one module per further family (:mod:`.architectures` lists every row): e.g. :mod:`.phi`
  (Phi-4-multimodal, a causal-LM class), :mod:`.omni` (Qwen2.5-Omni's composite checkpoint),
  :mod:`.video_llava`, :mod:`.minicpm`, :mod:`.vilt`, :mod:`.bridgetower`, :mod:`.flava`,
  :mod:`.owlvit`, :mod:`.out_of_scope` (models no kind scores).
"""
