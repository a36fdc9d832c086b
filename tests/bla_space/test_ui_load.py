"""The Space under load: 20 gradio_client clients at once against a real server process on
127.0.0.1. Every client gets a result (after waiting its turn in the queue), none an error, and
the server's memory returns to its level before the burst."""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.servers import serving

pytestmark = pytest.mark.slow

CLIENTS = 20
MEMORY_SLACK_MB = 200
"""Growth of the server's resident memory allowed after the first burst (allocator caches)."""
BURST_GROWTH_MB = 100
"""Growth allowed from the first burst to the second (measured: +5 MB on a quiet machine, +44 MB
in a loaded CI run): a leak of more than 5 MB per request exceeds it."""

SERVER = """
from pathlib import Path
from bla_space.config import SpaceConfig
from bla_space.ui import build_demo, launch_kwargs
config = SpaceConfig(dataset={data!r}, results_dir=Path({runs!r}), allow_local_models=True,
                     max_params=1e6, default_limit=1, device="cpu")
build_demo(config).launch(server_name="127.0.0.1", server_port={port}, quiet=True,
                          **launch_kwargs(config))
"""


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


@pytest.fixture(scope="module")
def server(built_dataset, tmp_path_factory, free_port):
    port = free_port()
    code = SERVER.format(
        data=str(built_dataset),
        runs=str(tmp_path_factory.mktemp("load-runs")),
        port=port,
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    url = f"http://127.0.0.1:{port}/"
    log = tmp_path_factory.mktemp("load-server") / "server.log"
    with serving([sys.executable, "-c", code], url, log, 240, env=env) as proc:
        yield url, proc


def test_twenty_clients_at_once_all_get_results(server, tiny_clip):
    from gradio_client import Client

    url, proc = server
    args = (str(tiny_clip), "auto", ["coordination"], 1, "ranking")
    Client(url, verbose=False).predict(*args, api_name="/evaluate")  # warm-up: imports, caches
    before = _rss_mb(proc.pid)

    def one_client(_: int):
        client = Client(url, verbose=False)
        job = client.submit(*args, api_name="/evaluate")
        statuses = []
        while not job.done():
            statuses.append(job.status())
            time.sleep(0.2)
        return job.result(timeout=600), statuses

    def burst() -> tuple[list, float, float]:
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
            outcomes = list(pool.map(one_client, range(CLIENTS)))
        seconds = time.monotonic() - start
        time.sleep(2)
        return outcomes, seconds, _rss_mb(proc.pid)

    outcomes, seconds, first = burst()
    again, seconds_again, second = burst()
    print(
        f"\n{CLIENTS} clients: bursts of {seconds:.1f} s and {seconds_again:.1f} s; server RSS "
        f"{before:.0f} MB before, {first:.0f} MB after the first, {second:.0f} MB after the "
        "second"
    )

    for outputs, _ in outcomes + again:
        assert "Kind **contrastive**" in outputs[0], outputs[0]
    queued = [s for _, statuses in outcomes for s in statuses if s.rank is not None]
    assert queued, "no client ever saw its queue position"
    assert max(s.rank for s in queued) >= 1  # one evaluation at a time: the others waited
    assert first <= before + MEMORY_SLACK_MB, (before, first)
    assert second <= first + BURST_GROWTH_MB, (first, second)  # nothing kept per request
