"""The Gradio layer of the BLA Space: thin tabs over the ``bla_eval`` engine and ``bla_metric``."""
