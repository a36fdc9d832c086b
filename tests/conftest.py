"""Shared fixtures: the real release, and the dataset repo built from it once per test session."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

# uv installs environments without .pyc files. Where PYTHONDONTWRITEBYTECODE is set, every process
# the tests start (each `python -m bla_eval`, each harness environment's) would compile torch's,
# transformers' and datasets' modules again: the session writes the bytecode of exactly the modules
# it imports, once per environment, in this process and in the processes it starts.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RELEASE = REPO_ROOT.parent / "shared" / "data" / "BLA_Benchmark"

# Everything a test session writes outside its `tmp_path` folders goes to one scratch folder of its
# own, removed at the session's end:
# - `datasets` keeps an Arrow copy of every parquet folder it loads in its cache, and the tests
#   build datasets in fresh folders, so each session would add copies to the user's cache for good
#   (set before `datasets` is imported);
# - libraries leave files in the temporary folder (gradio its file cache, gradio_client a folder
#   per download, vLLM a socket per engine): child processes get the scratch folder as `TMPDIR`,
#   gradio gets `GRADIO_TEMP_DIR`, and this process gets it once pytest has placed its own
#   temporary folders (`session_scratch_as_tempdir`).
# Each process of a session (pytest-xdist's workers and their controller) has a scratch folder of
# its own, side by side in the temporary folder the first one found (short paths: Ray's sockets
# are limited to 107 characters).
TEMP_ROOT = os.environ.setdefault("BLA_TESTS_TEMP_ROOT", tempfile.gettempdir())
SESSION_SCRATCH = Path(tempfile.mkdtemp(prefix="bla-tests-", dir=TEMP_ROOT))
TEST_DATASETS_CACHE = str(SESSION_SCRATCH / "datasets-cache")
SESSION_TEMPDIR = SESSION_SCRATCH / "tmp"
SESSION_TEMPDIR.mkdir()
os.environ["HF_DATASETS_CACHE"] = TEST_DATASETS_CACHE
os.environ["TMPDIR"] = str(SESSION_TEMPDIR)
os.environ["GRADIO_TEMP_DIR"] = str(SESSION_TEMPDIR / "gradio")  # read when gradio is imported
# What the read-only session fixtures build, once for all the processes of a session: in the
# first process's scratch folder (removed last, when the controller's session ends).
SESSION_SHARED = Path(os.environ.setdefault("BLA_TESTS_SHARED", str(SESSION_SCRATCH / "shared")))


if os.environ.get("PYTEST_XDIST_WORKER"):
    # Each of the workers shares the machine's cores with the others: one thread each for torch
    # and the BLAS libraries, here and in the processes the tests start.
    for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Whole test files to a worker, in collection order (``tests/scheduling.py``)."""
    from tests.scheduling import FileScheduling

    config.option.loadscopereorder = False  # units in collection order, not by their size
    return FileScheduling(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files holding slow tests first (``tests/scheduling.py``)."""
    from tests.scheduling import slow_files_first

    slow_files_first(items)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the session's scratch folder."""
    shutil.rmtree(SESSION_SCRATCH, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def session_scratch_as_tempdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """This process's temporary files go to the scratch folder too, after pytest's own base folder
    (kept apart so that the folders of failed tests survive the session) is placed."""
    tmp_path_factory.getbasetemp()
    before = tempfile.tempdir
    tempfile.tempdir = str(SESSION_TEMPDIR)
    yield
    tempfile.tempdir = before


@pytest.fixture(autouse=True)
def secrets_of_this_test_only() -> Iterator[None]:
    """The secrets a test registers (``bla_eval.redact``: this process masks them from then on)
    are forgotten at its end, so they mask nothing in the tests that follow it."""
    yield
    redact = sys.modules.get("bla_eval.redact")
    if redact is not None:
        redact.forget_all()


@pytest.fixture(scope="session")
def release_dir() -> Path:
    """The real BLA release (``BLA_RELEASE_DIR`` or ``../shared/data/BLA_Benchmark``)."""
    path = Path(os.environ.get("BLA_RELEASE_DIR", DEFAULT_RELEASE))
    if not (path / "annotations").is_dir():
        raise FileNotFoundError(f"BLA release not found at {path}; set BLA_RELEASE_DIR")
    return path


def built_for_the_session(name: str, build: Callable[[Path], Path]) -> Path:
    """What ``build(folder)`` returns, built once for every process of the session (the first
    builds it; pytest-xdist's other workers wait for it, then read the same folder)."""
    from filelock import FileLock

    SESSION_SHARED.mkdir(parents=True, exist_ok=True)
    folder, built = SESSION_SHARED / name, SESSION_SHARED / f"{name}.built"
    with FileLock(SESSION_SHARED / f"{name}.lock"):
        if not built.is_file():  # not built yet, or a failed build's remains
            shutil.rmtree(folder, ignore_errors=True)
            made = build(folder)
            built.write_text(made.relative_to(folder).as_posix())
    return folder / built.read_text()


@pytest.fixture(scope="session")
def built_dataset(release_dir: Path) -> Path:
    """The dataset repo built from the real release, once per session (read-only for tests)."""
    from builders.release import build_release

    def build(folder: Path) -> Path:
        build_release(release_dir, folder / "bla")
        return folder / "bla"

    return built_for_the_session("bla_dataset", build)


TinyModel = Callable[..., Path]
"""``tiny_model(name, texts, build=None)`` (the fixture below)."""


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> TinyModel:
    """Every tiny random-weight model of the tests: ``tiny_model(name, texts)`` is architecture
    ``name`` of the matrix built on ``texts`` (``bla_eval.testing.architectures.build_cached``),
    ``tiny_model(name, texts, build)`` the folder ``build(folder, texts)`` fills (``build_once``;
    its key also holds the source of the ``bla_eval.testing`` modules, which a test's own
    ``build`` calls). Each is seeded, built once and kept for later sessions under pytest's
    temporary root (read-only for tests)."""
    from bla_eval.testing.architectures import build_cached, build_once

    root = Path(tmp_path_factory.getbasetemp()).parent / "bla-tiny-models"

    def get(
        name: str, texts: Sequence[str], build: Callable[[Path, list[str]], Any] | None = None
    ) -> Path:
        if build is None:
            return build_cached(name, texts, root)
        return build_once(f"{name}-{testing_sources()}", build, texts, root)

    return get


def testing_sources() -> str:
    """A digest of the source of every ``bla_eval.testing`` module."""
    import hashlib

    import bla_eval.testing

    files = sorted(Path(bla_eval.testing.__file__).parent.glob("*.py"))
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:8]


@pytest.fixture(scope="session")
def tiny_clip(built_dataset: Path, tiny_model: TinyModel) -> Path:
    """A real CLIP architecture with random weights and a BPE tokenizer trained on the release
    sentences, saved like a Hub repo (model + processor) and loaded back by path.

    Seeded, so its scores are the same every run: on the first 10 datapoints per task it makes
    set errors in AP, which the Space's Explore test filters to. (Random text towers mostly score
    by the sentence's first words, which pair each true sentence with a false one: no set errors.)
    """
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.testing.dual_encoders import save_random_clip, tiny_clip_config

    def build(folder: Path, texts: list[str]) -> None:
        save_random_clip(folder, texts, tiny_clip_config())

    return tiny_model(
        "tiny_clip", [c for p in load_bla(str(built_dataset)) for c in p.captions], build
    )


@pytest.fixture(scope="module")
def co_run(tiny_clip: Path, built_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished ``bla-eval`` run of the tiny CLIP: CO, the first 3 datapoints (read-only)."""
    from bla_eval.cli import main as bla_eval

    from tests.bla_eval.commands import LIMIT, eval_args

    out = tmp_path_factory.mktemp("co") / "run"
    argv = eval_args(tiny_clip, built_dataset, out, "--tasks", "co", "--limit", LIMIT)
    assert bla_eval(argv) == 0
    return out


@pytest.fixture(scope="session")
def free_port() -> Callable[[], int]:
    """A function giving a free TCP port on 127.0.0.1, for a server a test starts."""

    def pick() -> int:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]

    return pick


# ------------------------------------------------- an OpenAI-compatible server of a tiny VLM


@pytest.fixture(scope="session")
def tiny_llava(built_dataset: Path, tiny_model: TinyModel) -> Path:
    """A tiny random LLaVA (CLIP tower; a chat template that puts a turn's images before its
    text, as llava-hf's do) saved to a local folder, once per session.

    Its weight matrices are redrawn with standard deviation 1: with the usual 0.02 a model this
    small gives the same greedy token for every input, which would make the comparison empty;
    with 1 the answers vary with the sentence and the image, and the top two logits are far apart.
    """
    import torch
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.protocols.templates import get_template
    from bla_eval.testing.generative import build_llava_chat
    from bla_eval.testing.processors import IMAGES_FIRST_TEMPLATE
    from transformers import LlavaForConditionalGeneration

    def build(folder: Path, texts: list[str]) -> None:
        build_llava_chat(folder, texts, chat_template=IMAGES_FIRST_TEMPLATE)
        model = LlavaForConditionalGeneration.from_pretrained(folder)
        with torch.no_grad():
            for weight in model.parameters():
                if weight.dim() >= 2:
                    weight.normal_(0.0, 1.0)
        model.save_pretrained(folder)

    items = load_bla(str(built_dataset))
    question = get_template().question.format(sentence="x")
    return tiny_model("tiny_llava", [c for i in items for c in i.captions] + [question] * 5, build)


@pytest.fixture(scope="session")
def transformers_serve(tiny_llava: Path, tmp_path_factory: pytest.TempPathFactory, free_port):
    """``transformers serve`` on 127.0.0.1 pinned to the tiny LLaVA, once per session (the
    endpoint kind's and the harnesses' tests); its API base URL."""
    pytest.importorskip("openai", reason="transformers serve needs the api-test extra")
    from tests.servers import serving

    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    command = [sys.executable, "-m", "transformers.cli.transformers", "serve", str(tiny_llava)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    with serving(command, f"http://127.0.0.1:{port}/health", log, env=env):
        yield f"http://127.0.0.1:{port}/v1"
