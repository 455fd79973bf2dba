"""Every wait and buffer has a bound a user can state: a runner that never speaks is given
up within ``--timeout`` per attempt and ``--start-timeout`` in all; a runner that closes
its stdout and runs on, or dies while a child of it holds the pipe, is noticed within
seconds and its process group ended; only regular files are read as recordings or talks;
telemetry memory follows the samples, not the number of GPUs a file names.

Runners are the project's stand-in (tests/support/fake_runner.py); every subprocess is bounded."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import places
import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol.events import PROTOCOL_VERSION

FAKE = places.FAKE_RUNNER
LIMIT_S = 120
STARTUP_S = 10.0  # Python and the CLI starting on a loaded 2-core machine


def record(tmp_path: Path, mode: str, *options: str, env: dict[str, str] | None = None
           ) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "gemmscope.kernels", "record", "-o", str(tmp_path / "r.jsonl"),
         "--runner", f"{sys.executable} {FAKE} --mode {mode}", "-l", "naive", "-s", "16",
         "-r", "2", "--no-compare", *options],
        capture_output=True, text=True, timeout=LIMIT_S, env={**os.environ, **(env or {})})
    return done, time.monotonic() - started


def alive(pid: int) -> bool:
    """A live process (a zombie waiting for its parent is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def gone_soon(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_runner_that_never_speaks_is_given_up_within_its_timeouts(tmp_path):
    done, took = record(tmp_path, "silent_start", "--timeout", "1.5")
    assert done.returncode == 2
    assert "the runner said nothing within 1.5 s" in done.stderr
    assert took < 3 * 1.5 + STARTUP_S  # three attempts of --timeout each, no more


def test_the_start_timeout_bounds_all_attempts_together(tmp_path):
    done, took = record(tmp_path, "silent_start", "--timeout", "100", "--start-timeout", "2")
    assert done.returncode == 2
    assert "start timeout of 2 s, all attempts together, is spent" in done.stderr
    assert took < 2 + STARTUP_S


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "1e300"])
def test_a_timeout_that_is_no_bound_is_refused(tmp_path, value):
    err = io.StringIO()
    for flag in ("--timeout", "--start-timeout"):
        code = cli.main(["record", "-o", str(tmp_path / "r.jsonl"), f"{flag}={value}",
                         "-l", "naive"], io.StringIO(), err)
        assert code == 2
    assert err.getvalue().count("\n") == 2 and "give seconds" in err.getvalue()
    assert not list(tmp_path.iterdir())


def test_a_runner_that_closes_its_stdout_and_runs_on_is_noticed_and_ended(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    done, took = record(tmp_path, "close_stdout", "--timeout", "60",
                        env={"FAKE_RUNNER_PIDS": str(pids)})
    assert "closed its output and ran on; it was killed" in done.stderr
    assert took < 3 * 3 + STARTUP_S  # far from the 60 s watchdog: three tries of ~2 s
    assert gone_soon(int((pids / "runner").read_text()))


def test_a_runner_that_dies_while_its_child_holds_the_pipe_is_noticed(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    done, took = record(tmp_path, "die_with_child", "--timeout", "60",
                        env={"FAKE_RUNNER_PIDS": str(pids)})
    assert done.returncode == 1 and "the runner exited (code 4)" in done.stderr
    assert took < 10 + STARTUP_S
    assert gone_soon(int((pids / "child").read_text()))  # its process group was ended


def test_a_child_that_left_the_runners_group_does_not_hang_the_session(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    try:
        done, took = record(tmp_path, "die_with_escaped_child", "--timeout", "60",
                            env={"FAKE_RUNNER_PIDS": str(pids)})
        assert done.returncode == 1 and "the runner exited (code 4)" in done.stderr
        assert took < 10 + STARTUP_S
    finally:  # it left the group on purpose: ended here
        child = pids / "child"
        if child.exists() and alive(int(child.read_text())):
            os.kill(int(child.read_text()), signal.SIGKILL)


# ------------------------------------------------------------------ only regular files
@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "fifo.jsonl"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("which", ["/dev/zero", "fifo"])
def test_report_refuses_a_device_or_fifo_at_once(which, fifo):
    path = str(fifo) if which == "fifo" else which
    err = io.StringIO()
    started = time.monotonic()
    assert cli.main(["report", path], io.StringIO(), err) == 2
    assert time.monotonic() - started < 5
    assert path in err.getvalue() and "not a regular file" in err.getvalue()


@pytest.mark.parametrize("command", ["replay", "talk"])
@pytest.mark.parametrize("which", ["/dev/zero", "fifo"])
def test_replay_and_talk_refuse_a_device_or_fifo_at_once(command, which, fifo, tmp_path):
    path = str(fifo) if which == "fifo" else which
    done = subprocess.run([sys.executable, "-m", "gemmscope.app.main", command, path,
                           "--screenshot", str(tmp_path / "x.png"),
                           "--settings", str(tmp_path / "p.ini")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 2
    assert path in done.stderr and "not a regular file" in done.stderr
    assert not (tmp_path / "x.png").exists()


def test_append_refuses_a_device_before_running(tmp_path):
    err = io.StringIO()
    code = cli.main(["record", "-o", "/dev/zero", "--append", "--runner",
                     f"{sys.executable} {FAKE}", "-l", "naive", "-s", "16"], io.StringIO(), err)
    assert code == 2 and "/dev/zero" in err.getvalue()


# ------------------------------------------------------------------ memory
def test_telemetry_memory_follows_the_samples_not_the_gpus_named(tmp_path):
    from gemmscope.app.core.store import SessionStore

    gpus = 1000
    header = {"type": "session", "t": 0.0, "protocol": PROTOCOL_VERSION, "created": "",
              "levels": {}, "device": {"name": "GPU 0"},
              "devices": [{"id": i, "name": f"GPU {i}"} for i in range(gpus)]}
    events = [header] + [{"type": "telemetry", "t": 1.0 + i * 1e-3, "device": i,
                          "power_w": 100.0, "sm_clock_mhz": 1000} for i in range(gpus)]
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert path.stat().st_size < 200_000
    from gemmscope.kernels.protocol import recording

    session = recording.read_session(path)
    tracemalloc.start()
    try:
        store = SessionStore()
        for ev in session.events:
            store.handle(ev)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(store.device_ids()) == gpus
    assert all(store._state(i).telemetry.count == 1 for i in (0, gpus - 1))
    assert peak < 16 * 2**20, f"{peak / 2**20:.0f} MiB for {gpus} GPUs of one sample each"
