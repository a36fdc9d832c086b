"""BLA scoring engine: score any Hub model on the BLA benchmark (used by the CLI and the Space)."""

__version__ = "0.1.0"
