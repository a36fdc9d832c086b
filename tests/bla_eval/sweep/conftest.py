"""Real engines on this machine, started and stopped by the tests: a single-node Slurm (Debian's
slurmctld and slurmd with their own munged, on 127.0.0.1, as root; no slurmdbd: its only
storage is a MySQL server, so the cluster has no job accounting and ``sacct`` fails, the path
the sweep follows from ``squeue``) and a two-node Ray cluster (a head and a second raylet
joining it, each with its own temporary folder, token authentication set on both). Only the
processes a fixture started are stopped, found by the folder their command line names."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

SLURM_DAEMONS = ("munged", "slurmctld", "slurmd")


def processes_naming(marker: str) -> list[int]:
    """The pids of the processes whose command line or environment holds ``marker`` (this one
    excepted; Slurm's step daemons name their cluster's configuration in ``SLURM_CONF``), and of
    their descendants (Ray's agents rename themselves)."""
    parents: dict[int, int] = {}
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        with contextlib.suppress(OSError):
            cmdline += Path(f"/proc/{entry}/environ").read_bytes()
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
        if marker.encode() in cmdline:
            found.add(int(entry))
    grown = True
    while grown:
        more = {pid for pid, parent in parents.items() if parent in found} - found
        found |= more
        grown = bool(more)
    return sorted(found)


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie waiting for its parent, which
    may never collect it here, has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def end_processes(pids: list[int], grace_s: float = 10) -> None:
    """SIGTERM, then SIGKILL after ``grace_s`` for those still there."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(map(running, pids)):
        time.sleep(0.2)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def wait_for(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} after {seconds} s")
        time.sleep(0.2)


SLURM_CONF = """ClusterName=blatest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={root}/munge.sock
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=300
KillWait=1
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="module")
def slurm_cluster(free_port) -> Iterator[dict[str, str]]:
    """A running single-node Slurm without accounting: the environment its commands need."""
    if os.geteuid() != 0 or not all(shutil.which(d) for d in SLURM_DAEMONS):
        pytest.skip("a real Slurm needs root and Debian's slurm-wlm and munge (bash .ci/setup)")
    root = Path(tempfile.mkdtemp(prefix="bla-slurm-"))
    for sub in ("state", "spool"):
        (root / sub).mkdir()
    key = root / "munge.key"
    key.write_bytes(secrets.token_bytes(1024))
    key.chmod(0o600)
    host = os.uname().nodename.split(".")[0]
    conf = root / "slurm.conf"
    conf.write_text(
        SLURM_CONF.format(
            host=host, root=root, ctld_port=free_port(), d_port=free_port(), cpus=os.cpu_count()
        ),
        encoding="ascii",
    )
    env = {**os.environ, "SLURM_CONF": str(conf)}
    try:
        subprocess.run(
            [
                "munged",
                f"--key-file={key}",
                f"--socket={root}/munge.sock",
                "--force",
                f"--pid-file={root}/munged.pid",
                f"--log-file={root}/munged.log",
                f"--seed-file={root}/munged.seed",
            ],
            check=True,
            env=env,
        )
        subprocess.run(["slurmctld", "-f", str(conf)], check=True, env=env)
        subprocess.run(["slurmd", "-f", str(conf)], check=True, env=env)

        def idle() -> bool:
            out = subprocess.run(
                ["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=env
            )
            return out.stdout.strip() == "idle"

        wait_for(idle, 60, "the Slurm node is not idle")
        yield {"SLURM_CONF": str(conf)}
    finally:
        subprocess.run(
            ["scancel", "--full", "--partition=test"], env=env, check=False, capture_output=True
        )
        # its step daemons wait out a cancelled step: nothing of this cluster is kept to save
        end_processes(processes_naming(str(root)), grace_s=2)
        shutil.rmtree(root, ignore_errors=True)


def ray_start(args: list[str], env: dict[str, str]) -> None:
    ray = Path(sys.executable).with_name("ray")
    done = subprocess.run([str(ray), "start", *args], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


class RayCluster:
    """A head (no CPUs: every task runs on a worker node) and worker nodes joining it."""

    def __init__(self, port: int, root: Path) -> None:
        self.address = f"127.0.0.1:{port}"
        self.root = root
        # token authentication on every node and on the driver, with a token of the test's
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.env.pop("RAY_ADDRESS", None)
        self.nodes = 0

    def start_head(self) -> None:
        temp = self.root / "head"
        ray_start(
            [
                "--head",
                "--node-ip-address=127.0.0.1",
                f"--port={self.address.split(':')[1]}",
                "--num-cpus=0",
                "--include-dashboard=false",
                f"--temp-dir={temp}",
                "--disable-usage-stats",
            ],
            self.env,
        )

    def add_node(self, cpus: int = 2) -> str:
        """Start a worker node; its marker (the temporary folder its processes name)."""
        self.nodes += 1
        temp = self.root / f"node{self.nodes}"
        ray_start(
            [
                f"--address={self.address}",
                "--node-ip-address=127.0.0.1",
                f"--num-cpus={cpus}",
                f"--temp-dir={temp}",
                "--disable-usage-stats",
            ],
            self.env,
        )
        return str(temp)

    def raylet_of(self, marker: str) -> list[int]:
        return [p for p in processes_naming(marker) if _name(p) == "raylet"]


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


@pytest.fixture(scope="module")
def ray_cluster(free_port) -> Iterator[RayCluster]:
    """A two-node Ray cluster on 127.0.0.1 (head without CPUs, one worker node of 2 CPUs)."""
    pytest.importorskip("ray")
    root = Path(tempfile.mkdtemp(prefix="bla-ray-", dir="/tmp"))  # short: Ray's socket paths
    cluster = RayCluster(free_port(), root)
    try:
        cluster.start_head()
        cluster.add_node()
        yield cluster
    finally:
        # its GCS and autoscaler monitor outlive SIGTERM by over 10 s: nothing of it is kept
        end_processes(processes_naming(str(root)), grace_s=2)
        shutil.rmtree(root, ignore_errors=True)
