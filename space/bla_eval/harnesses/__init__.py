"""BLA inside other evaluation harnesses: an inspect-ai task module (``inspect_tasks``, found
through the ``inspect_ai`` entry point) and an lmms-eval task folder (``lmms_eval_tasks``, given
to ``lmms-eval --include_path``). Each asks the engine's prompt templates and scores with
``bla_metric``; none is imported by ``bla-eval`` itself."""
