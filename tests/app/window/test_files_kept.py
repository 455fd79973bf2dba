"""No file is lost or damaged (kernels/protocol/atomic_file.py,
kernels/protocol/output_file.py): SIGTERM, SIGHUP and SIGINT stop the runner and say
which hidden file holds what was measured; two ``record --append`` into one file
cannot both run; exports and screenshots are whole or not written, through the user's own symlink to
its target, never onto a device or FIFO; a name that cannot be written is refused
before the first run."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import places
import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol import recording

FAKE = places.FAKE_RUNNER
LIMIT_S = 90


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def record_argv(out: Path, mode: str = "slow", *extra: str) -> list[str]:
    return [sys.executable, "-m", "gemmscope.kernels", "record", "-o", str(out),
            "--runner", f"{sys.executable} {FAKE} --mode {mode}", "-l",
            "naive,coalesced,smem_tiled,smem_padded", "-s", "16", "-r", "4", "--no-compare",
            "--telemetry-hz", "0", *extra]


def wait_for(predicate, what: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + LIMIT_S
    while not predicate():
        assert proc.poll() is None, f"ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no {what}"
        time.sleep(0.02)


def hidden(folder: Path, stem: str) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(f".{stem}.")]


def measured(path: Path) -> bool:
    try:
        return '"type":"result"' in path.read_text(errors="replace")
    except OSError:
        return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_stops_the_runner_and_names_the_file_that_holds_the_runs(tmp_path, signum):
    pids = tmp_path / "pids"
    pids.mkdir()
    out = tmp_path / "r.jsonl"
    proc = subprocess.Popen(record_argv(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "FAKE_RUNNER_PIDS": str(pids)})
    try:
        wait_for(lambda: any(measured(p) for p in hidden(tmp_path, "r")), "result", proc)
        os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    assert proc.returncode == 128 + signum
    assert f"stopped by {signal.Signals(signum).name}" in err and "Traceback" not in err
    [kept] = hidden(tmp_path, "r")
    assert str(kept) in err and not out.exists()
    assert recording.read_session(kept).results  # a readable recording of what finished
    runner = int((pids / "runner").read_text())
    deadline = time.monotonic() + 10
    while alive(runner) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(runner), "the runner was left running"


def test_a_second_append_to_the_same_file_is_refused_before_it_runs(tmp_path):
    out = tmp_path / "same.jsonl"
    first = subprocess.run(record_argv(out, "ok"), capture_output=True, text=True,
                           timeout=LIMIT_S)
    assert first.returncode == 0, first.stderr
    runs_before = len(recording.read_session(out).results)
    a = subprocess.Popen(record_argv(out, "slow", "--append"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: bool(hidden(tmp_path, "same")), "append started", a)
        b = subprocess.run(record_argv(out, "ok", "--append"), capture_output=True, text=True,
                           timeout=LIMIT_S)
        _, a_err = a.communicate(timeout=LIMIT_S)
    finally:
        if a.poll() is None:
            a.kill()
            a.communicate(timeout=10)
    assert b.returncode == 2 and "another gemmscope is recording into" in b.stderr
    assert a.returncode == 0, a_err
    assert len(recording.read_session(out).results) == 2 * runs_before  # nothing lost
    again = subprocess.run(record_argv(out, "ok", "--append"), capture_output=True,
                           text=True, timeout=LIMIT_S)
    assert again.returncode == 0  # after the first, the next one runs
    assert len(recording.read_session(out).results) == 3 * runs_before


def _no_runner(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a runner was started before the output name was checked")

    monkeypatch.setattr(cli, "RunnerSession", refuse)


@pytest.mark.parametrize("name", ["dangling", "proc", "fifo", "device"])
def test_an_output_that_cannot_be_written_is_refused_before_the_first_run(
        tmp_path, monkeypatch, name):
    _no_runner(monkeypatch)
    if name == "dangling":
        path = tmp_path / "r.jsonl"
        path.symlink_to(tmp_path / "no" / "such.jsonl")
    elif name == "fifo":
        path = tmp_path / "r.jsonl"
        os.mkfifo(path)
    elif name == "device":
        path = tmp_path / "r.jsonl"
        path.symlink_to("/dev/null")
    else:
        path = Path("/proc/gemmscope-test.jsonl")
    err = io.StringIO()
    code = cli.main(["record", "-o", str(path), "--force", "-l", "naive", "-s", "16"],
                    io.StringIO(), err)
    assert code == 2 and str(path) in err.getvalue()
    assert "\n" not in err.getvalue().strip()


# ------------------------------------------------------------------ exports and pictures
@pytest.fixture
def charts_window(make_window, synthetic_file, qtbot):
    window = make_window()
    assert window.open_recording(synthetic_file)
    window.play_instant()
    window.show()
    qtbot.waitExposed(window)
    window.flush_views()
    return window


def full_disk(monkeypatch):
    """Every fsync fails as on a full disk."""
    def fail(_fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("gemmscope.kernels.protocol.atomic_file.os.fsync", fail)


@pytest.mark.parametrize("suffix", ["svg", "png", "csv", "md"])
def test_a_full_disk_leaves_an_existing_export_as_it_was(charts_window, tmp_path,
                                                         monkeypatch, suffix):
    from gemmscope.app.window.export_run import export_named

    path = tmp_path / f"old.{suffix}"
    path.write_bytes(b"the old file, whole")
    full_disk(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        export_named(charts_window, str(path), None)
    assert path.read_bytes() == b"the old file, whole"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".old")] == []


@pytest.mark.parametrize("suffix", ["svg", "csv"])
def test_an_export_through_a_symlink_writes_its_target(charts_window, tmp_path, suffix):
    from gemmscope.app.window.export_run import export_named

    real = tmp_path / "data" / f"real.{suffix}"
    real.parent.mkdir()
    real.write_text("stale")
    link = tmp_path / f"link.{suffix}"
    link.symlink_to(real)
    export_named(charts_window, str(link), None)
    assert link.is_symlink() and real.read_text() != "stale" and real.stat().st_size > 100


def test_an_export_onto_a_device_or_fifo_is_refused(charts_window, tmp_path):
    from gemmscope.app.window.export_run import export_named

    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    device = tmp_path / "null.csv"
    device.symlink_to("/dev/null")
    for path in (fifo, device):
        with pytest.raises(OSError, match="not a regular file"):
            export_named(charts_window, str(path), None)
    assert Path("/dev/null").is_char_device() and fifo.is_fifo()


def test_a_screenshot_that_cannot_be_written_keeps_the_old_picture(charts_window, tmp_path,
                                                                   monkeypatch):
    from gemmscope.app.window.exports import save_png

    shot = tmp_path / "shot.png"
    shot.write_bytes(b"old picture")
    full_disk(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        save_png(charts_window.grab(), shot)
    assert shot.read_bytes() == b"old picture"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".shot")]


def test_a_screenshot_onto_a_fifo_is_refused_and_one_over_a_picture_replaces_it_whole(
        tmp_path, synthetic_file):
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"old picture")
    shot.chmod(0o444)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    base = [sys.executable, "-m", "gemmscope.app.main", "replay", str(synthetic_file),
            "--settings", str(tmp_path / "p.ini"), "--size", "800x600"]
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    done = subprocess.run([*base, "--screenshot", str(fifo)], capture_output=True, text=True,
                          timeout=LIMIT_S, env=env)
    assert done.returncode == 2 and "not a regular file" in done.stderr  # before a window
    done = subprocess.run([*base, "--screenshot", str(shot)], capture_output=True, text=True,
                          timeout=LIMIT_S, env=env)
    assert done.returncode == 0, done.stderr  # replaced whole (it keeps its mode)
    assert shot.read_bytes().startswith(b"\x89PNG")
    assert oct(shot.stat().st_mode & 0o777) == oct(0o444)
