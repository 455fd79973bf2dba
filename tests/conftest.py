"""Test setup: Qt offscreen, GPU tests skipped without a GPU, each with a time limit and
in a shard (``--gpu-shard K``, tests/support/gpu_tiers.py), a SIGTERM that ends the run
and its children (tests/support/terminate_tree.py), and a check that no test leaks
threads or child processes."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("GEMMSCOPE_NO_GPU", "1")  # the app never starts a real runner here
# the build cache folder (kernels/device/build_cache.py): a fresh one per test run, never the
# user's, so that an answer kept by one test or an earlier run cannot serve another test
# (a test of a missing NVRTC then got a kept answer, depending on the order). On the GPU
# machine a carried folder (GEMMSCOPE_CACHE_DIR set before pytest) is kept: it is the point
if "GEMMSCOPE_CACHE_DIR" not in os.environ or os.environ.get("CI"):
    os.environ["GEMMSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="gemmscope-test-cache-")
    # removed by the process that made it (xdist's workers, where CI makes them their own,
    # leave before the main process): every run left one in /tmp
    atexit.register(shutil.rmtree, os.environ["GEMMSCOPE_CACHE_DIR"], True)

# the user's preferences and data folders (app/core/preferences_file.py, QStandardPaths):
# fresh ones per test run, never the user's own. A test that starts the app without
# --settings wrote its offscreen window layout into ~/.config/gemmscope/gemmscope.conf,
# which the user's next start then met
_home = tempfile.mkdtemp(prefix="gemmscope-test-home-")
atexit.register(shutil.rmtree, _home, True)
os.environ["XDG_CONFIG_HOME"] = os.path.join(_home, "config")
os.environ["XDG_DATA_HOME"] = os.path.join(_home, "data")

TESTS = Path(__file__).parent
# the shared fakes and helpers (fake_runner, synthetic_session, ...) import by their names
# from any folder of tests/ (tests/support/places.py says where the rest is)
sys.path.insert(0, str(TESTS / "support"))

import gpu_tiers  # noqa: E402  (from tests/support, on the path just above)
import read_memo  # noqa: E402
import terminate_tree  # noqa: E402

# the bundled recordings read once per test process, checked unchanged at each reuse
read_memo.install()

# the property-based tests (tests/kernels/protocol/test_fuzz.py); the GPU machine has none
try:
    from hypothesis import HealthCheck, Phase, settings
except ImportError:
    pass
else:
    # CI: the same examples on every run (derandomize, no example database), so a failure
    # is not a flake; a slow machine only trips the deadline of a real hang.
    # No "explain" phase: tracing every line the store and numpy run took gigabytes on a
    # failure; the shrunk example and its traceback say enough.
    settings.register_profile("ci", derandomize=True, database=None, deadline=5000,
                              report_multiple_bugs=False,
                              phases=[p for p in Phase if p is not Phase.explain],
                              print_blob=True,
                              suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.data_too_large])
    # GEMMSCOPE_HYPOTHESIS=explore: new random examples on each run (and
    # tests/kernels/protocol/test_fuzz.py asks for ten times as many)
    settings.register_profile("explore", parent=settings.get_profile("ci"), derandomize=False)
    settings.load_profile(os.environ.get("GEMMSCOPE_HYPOTHESIS", "ci"))


def _shard(text: str) -> int:
    k = int(text)
    if not 1 <= k <= gpu_tiers.SHARDS:
        raise ValueError(f"a shard is 1 to {gpu_tiers.SHARDS}")
    return k


def pytest_addoption(parser: pytest.Parser) -> None:
    # the GPU machine runs the GPU tests without pytest-qt; keep its ini key known there
    try:
        import pytestqt  # noqa: F401
    except ImportError:
        parser.addini("qt_api", "Qt binding for pytest-qt (unused without it)")
    parser.addoption("--gpu-shard", type=_shard, default=None, metavar="K",
                     help=f"run only the GPU tests of shard K (1 to {gpu_tiers.SHARDS}; "
                     "tests/support/gpu_tiers.py, docs/gpu-run-plan.md)")


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.hasplugin("timeout"):
        # without pytest-timeout, the limits are kept by pytest_runtest_call below
        config.addinivalue_line("markers", "timeout(seconds): a GPU test's time limit")
    _keep_compiles()


def _keep_compiles() -> None:
    """NVRTC's answers kept for this run, shared by its workers (tests/support/compile_memo.py);
    the folder goes with the process that made it."""
    import compile_memo

    from gemmscope.kernels.toolchain import nvrtc

    made = not os.environ.get(compile_memo.ENV)
    where = compile_memo.folder()
    if made:
        atexit.register(shutil.rmtree, where, True)
    nvrtc.compile_source = compile_memo.keeping(nvrtc.compile_source, nvrtc.nvrtc_include_dirs,
                                                nvrtc.OfflineBuild, where)


def pytest_sessionstart(session: pytest.Session) -> None:
    terminate_tree.install()  # a SIGTERM ends the run and every process it started


def _limit(item: pytest.Item) -> pytest.MarkDecorator:
    place = gpu_tiers.FILES.get(item.path.name)
    seconds = place.timeout_s if place is not None else max(
        p.timeout_s for p in gpu_tiers.FILES.values())
    # signal: the test fails with an exception, so its own cleanup stops its runner (the
    # thread method ends the whole process and leaves the children behind)
    return pytest.mark.timeout(seconds, method="signal")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long units first (below); give each GPU test its time limit; with ``--gpu-shard
    K`` keep only shard K's GPU tests. Skip tests marked gpu, with the reason, where CuPy
    or a CUDA device is missing; where they run, one after another (one GPU: under ``-n
    auto --dist loadgroup`` they share one worker, never timing each other)."""
    gpu = [item for item in items if item.get_closest_marker("gpu")]
    # the modules that share a costly module fixture in one worker (an xdist group: the
    # gallery, the docs' pictures, the build determinism, the GPU shards' collection) go
    # first: collected last, the docs' pictures (about 90 s) kept one of CI's two workers
    # busy while the other had nothing left
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)  # stable
    for item in gpu:
        item.add_marker(pytest.mark.xdist_group("gpu"))
        if item.get_closest_marker("timeout") is None:
            item.add_marker(_limit(item))
    shard = config.getoption("--gpu-shard")
    if shard is not None:
        keep = [item for item in gpu if item.path.name in gpu_tiers.FILES
                and gpu_tiers.shard_of(item.nodeid) == shard]
        kept = set(keep)
        dropped = [item for item in items if item not in kept]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
        gpu = keep
    if not gpu:
        return
    from gemmscope.kernels.device.gpu import get_cupy

    _cp, reason = get_cupy()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {reason}")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


def pytest_runtest_setup(item: pytest.Item) -> None:
    read_memo.patch_imported()  # the modules the test's module imported read through it


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A GPU test's time limit where pytest-timeout is not installed: SIGALRM fails the
    test, as pytest-timeout's signal method does (its subprocesses are killed by the
    code that started them, as on any exception)."""
    mark = item.get_closest_marker("timeout")
    if (mark is None or item.config.pluginmanager.hasplugin("timeout")
            or threading.current_thread() is not threading.main_thread()):
        return (yield)
    seconds = float(mark.args[0] if mark.args else mark.kwargs.get("timeout", 0))

    def expired(signum: int, frame: object) -> None:
        pytest.fail(f"Timeout (>{seconds:g}s) from the GPU test's time limit")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return (yield)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _children() -> set[int]:
    """Live child processes of this process (Linux /proc); empty set elsewhere."""
    pids: set[int] = set()
    task_dir = Path(f"/proc/{os.getpid()}/task")
    if not task_dir.exists():
        return pids
    for task in task_dir.iterdir():
        try:
            pids.update(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


@pytest.fixture(autouse=True)
def no_leaks():
    threads_before = set(threading.enumerate())
    children_before = _children()
    yield
    deadline = time.monotonic() + 3.0
    while True:
        extra_children = _children() - children_before
        extra_threads = {t for t in set(threading.enumerate()) - threads_before
                         if t.is_alive() and not t.daemon}
        if not extra_children and not extra_threads:
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not extra_children, f"test leaked child processes {sorted(extra_children)}"
    assert not extra_threads, f"test leaked threads {extra_threads}"


@pytest.fixture
def synthetic_file(tmp_path: Path) -> Path:
    import synthetic_session

    return synthetic_session.write(tmp_path / "synthetic.jsonl")


@pytest.fixture
def fake_runner() -> Path:
    return TESTS / "support" / "fake_runner.py"


@pytest.fixture
def make_window(qtbot, tmp_path):
    """MainWindow factory with preferences in a temp ini file; closed after the test. The
    bundled recording is read once per process (tests/support/read_memo.py)."""
    from gemmscope.app.window.main_window import MainWindow
    from gemmscope.app.window.preferences import open_settings

    made = []

    def make(ini: Path | None = None):
        window = MainWindow(open_settings(str(ini or tmp_path / "prefs.ini")))
        # the offscreen platform's screen is 800x800, which the window fits itself to; the
        # tests see the 1400x900 of a desktop (tests/app/window/test_window_fits.py tests the fit)
        window.resize(1400, 900)
        qtbot.addWidget(window)
        made.append(window)
        return window

    yield make
    from PySide6.QtCore import QCoreApplication, QEvent

    for window in made:
        window.close()
        window.deleteLater()
    # deleted now, not at some later event loop: a module of window tests otherwise holds
    # every window it made (about 1 GB for tests/app/views/test_charts_fit.py)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def show_telemetry(qtbot, make_window):
    """Open a recording in a new window, play it whole, and show the telemetry tab:
    (window, view) with every view drawn."""

    def show(path):
        window = make_window()
        assert window.open_recording(path)
        window.play_instant()
        window.show()
        view = window.named_widget("telemetry")
        qtbot.waitExposed(view)
        window.flush_views()
        return window, view

    return show
