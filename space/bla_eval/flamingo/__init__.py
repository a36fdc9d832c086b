"""OpenFlamingo (Awadalla et al. 2023) on today's torch, transformers and open_clip, without the
``open_flamingo`` package: its blocks (``layers``), the model around any causal language model
(``model``), its parts (``spec``, with the released checkpoints in ``releases.yaml``), the
strict checkpoint loader (``checkpoint``) and the assembly (``build``). The ``flamingo`` model
kind (``bla_eval.scorers.flamingo``) scores with it."""
