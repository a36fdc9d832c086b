"""``python -m bla_eval.performance.regions`` on the tiny detector: it times random images and a
built dataset's images, and prints the seconds per image."""

from __future__ import annotations

import re

import pytest
from bla_eval.performance import regions

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_script_times_random_images_and_a_datasets_images(built_dataset, capsys):
    small = ["--shape", "tiny", "--resize", "200", "333", "--images", "2"]
    assert regions.main([*small, "--size", "60x80"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("device: CPU")
    assert re.search(r"^tiny sizes, resize 200/333, 2 images: \d+\.\d\d s per image", out, re.M)
    assert regions.main([*small, "--data", str(built_dataset)]) == 0
    assert "2 images:" in capsys.readouterr().out
    images = regions.images_of(str(built_dataset), 3, (1, 1))
    assert len(images) == 3 and len({image.tobytes() for image in images}) == 3
