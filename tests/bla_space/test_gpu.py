"""bla_space.gpu: the ZeroGPU duration of a run and the wrapper off ZeroGPU."""

from __future__ import annotations

from bla_space import gpu


def test_gpu_duration_grows_with_datapoints_and_is_capped():
    small, large = gpu.estimate_gpu_seconds(12, "contrastive"), gpu.estimate_gpu_seconds(1939, None)
    assert gpu.LOAD_SECONDS < small < large
    assert gpu.estimate_gpu_seconds(1939, "generative") > large
    assert gpu.estimate_gpu_seconds(10**6, "generative") == gpu.MAX_GPU_SECONDS


def test_spaces_gpu_is_a_no_op_off_zerogpu():
    import spaces.config

    assert not spaces.config.Config.zero_gpu  # SPACES_ZERO_GPU is unset here
    assert gpu.evaluate_on_gpu.__module__ == "bla_space.gpu"
    assert not hasattr(gpu.evaluate_on_gpu, "zerogpu")  # what spaces.GPU marks on ZeroGPU
