"""The BLA Space: score any Hub model on BLA in the browser (``python app.py``)."""

from bla_space import gpu  # noqa: F401  (first: imports `spaces`, which must precede CUDA use)
from bla_space.config import SpaceConfig
from bla_space.ui import build_demo, launch_kwargs

config = SpaceConfig.from_env()
demo = build_demo(config)

if __name__ == "__main__":
    demo.launch(**launch_kwargs(config))
