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


def test_the_datapoints_that_fit_a_quota_reserve_no_more_than_the_quota():
    for kind in ("generative", "itm", "contrastive", None):
        for seconds in gpu.QUOTAS.values():
            n = gpu.quota_fit(seconds, kind)
            assert n > 0 and gpu.estimate_gpu_seconds(n, kind) <= seconds
            assert gpu.estimate_gpu_seconds(2 * n, kind) > min(seconds, gpu.MAX_GPU_SECONDS) - 1
    assert gpu.quota_fit(gpu.LOAD_SECONDS - 1, "generative") == 0


def test_the_page_states_the_quota_on_zerogpu_only(built_dataset, monkeypatch):
    from bla_space.config import SpaceConfig
    from bla_space.evaluate_tab import quota_fit, quota_text

    config = SpaceConfig(dataset=str(built_dataset))
    assert quota_text(config, "generative", ["coordination"], 10)[0] == ""
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    text, _ = quota_text(config, "generative", ["coordination"], 10)
    assert f"reserves about {gpu.estimate_gpu_seconds(10, 'generative')} s" in text
    assert f"without sign-in {gpu.quota_fit(120, 'generative')}" in text
    assert quota_fit(config, "generative", ["coordination", "active_passive"]) == 30
