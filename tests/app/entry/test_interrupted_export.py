"""Ctrl-C (SIGINT) during an export: one line, no traceback, exit status 130, and the
files as atomic writes leave them: the one being written removed (no temporary file
left), an older file of that name as it was."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import synthetic_session


def _temporaries(folder) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".t.")]


@pytest.mark.parametrize("after_s", [0.0, 1.0])
def test_ctrl_c_during_an_export_is_one_line_and_keeps_the_old_file(tmp_path, after_s):
    out = tmp_path / "t.gif"
    out.write_bytes(b"the older export")
    # a small recording to replay: what is interrupted is the export, and opening the
    # bundled one (110 MB of events) took most of the test's time
    recording = synthetic_session.write(tmp_path / "session.jsonl")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", GEMMSCOPE_NO_GPU="1",
               HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "gemmscope.app.main", "replay", str(recording),
         "--settings", str(tmp_path / "p.ini"),
         "--export", str(out), "--chart", "tiling", "--frames", "400", "--fps", "3"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # as a terminal starts it: SIGINT raises KeyboardInterrupt (a background job of a
        # shell without job control would ignore it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not _temporaries(tmp_path):  # the export has begun writing
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(after_s)
        proc.send_signal(signal.SIGINT)
        _stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    said = [line for line in stderr.splitlines() if line.startswith("gemmscope:")]
    assert len(said) == 1 and "interrupted" in said[0], stderr
    assert out.read_bytes() == b"the older export"  # as it was
    assert not _temporaries(tmp_path)  # the unfinished one removed
